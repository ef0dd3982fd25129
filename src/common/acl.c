/*
 * Mesos's ACLs and the local authorizer's matching; see acl.h.
 */
#include "common/acl.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/fs.h"
#include "common/mem.h"

#define ACL_MAX_FILE  ((size_t)4 << 20)
#define ACL_MAX_RULES 100000

enum entity_type { ENTITY_SOME = 0, ENTITY_ANY = 1, ENTITY_NONE = 2 };

struct entity {
    enum entity_type type;
    char **values;
    size_t nvalues;
};

struct rule {
    struct entity subject, object;
};

struct acls {
    bool permissive;
    struct rule *rules[ACL_NACTIONS];
    size_t nrules[ACL_NACTIONS];
};

/* Each action's JSON field and the field of its object entity. */
static const struct {
    const char *name, *object;
} actions[ACL_NACTIONS] = {
    [ACL_REGISTER_FRAMEWORKS] = {"register_frameworks", "roles"},
    [ACL_RUN_TASKS] = {"run_tasks", "users"},
    [ACL_TEARDOWN_FRAMEWORKS] = {"teardown_frameworks", "framework_principals"},
    [ACL_RESERVE_RESOURCES] = {"reserve_resources", "roles"},
    [ACL_UNRESERVE_RESOURCES] = {"unreserve_resources", "reserver_principals"},
    [ACL_CREATE_VOLUMES] = {"create_volumes", "roles"},
    [ACL_DESTROY_VOLUMES] = {"destroy_volumes", "creator_principals"},
    [ACL_RESIZE_VOLUME] = {"resize_volume", "roles"},
    [ACL_GET_QUOTAS] = {"get_quotas", "roles"},
    [ACL_UPDATE_QUOTAS] = {"update_quotas", "roles"},
    [ACL_VIEW_ROLES] = {"view_roles", "roles"},
    [ACL_UPDATE_WEIGHTS] = {"update_weights", "roles"},
    [ACL_GET_ENDPOINTS] = {"get_endpoints", "paths"},
    [ACL_VIEW_FRAMEWORKS] = {"view_frameworks", "users"},
    [ACL_VIEW_TASKS] = {"view_tasks", "users"},
    [ACL_VIEW_EXECUTORS] = {"view_executors", "users"},
    [ACL_ACCESS_SANDBOXES] = {"access_sandboxes", "users"},
    [ACL_ACCESS_MESOS_LOGS] = {"access_mesos_logs", "logs"},
    [ACL_VIEW_FLAGS] = {"view_flags", "flags"},
    [ACL_SET_LOG_LEVEL] = {"set_log_level", "level"},
    [ACL_REGISTER_AGENTS] = {"register_agents", "agents"},
    [ACL_UPDATE_MAINTENANCE_SCHEDULES] = {"update_maintenance_schedules",
                                          "machines"},
    [ACL_GET_MAINTENANCE_SCHEDULES] = {"get_maintenance_schedules", "machines"},
    [ACL_START_MAINTENANCES] = {"start_maintenances", "machines"},
    [ACL_STOP_MAINTENANCES] = {"stop_maintenances", "machines"},
    [ACL_GET_MAINTENANCE_STATUSES] = {"get_maintenance_statuses", "machines"},
    [ACL_MARK_AGENTS_GONE] = {"mark_agents_gone", "agents"},
    [ACL_DRAIN_AGENTS] = {"drain_agents", "agents"},
    [ACL_DEACTIVATE_AGENTS] = {"deactivate_agents", "agents"},
    [ACL_REACTIVATE_AGENTS] = {"reactivate_agents", "agents"},
};

/* Actions of Mesos's acls.proto that offerd has nothing to enforce on:
 * parsed for their shape, then ignored. */
static const char *const ignored[] = {
    "launch_nested_containers_as_user",
    "launch_nested_containers_under_parent_with_user",
    "kill_nested_containers",
    "wait_nested_containers",
    "launch_nested_container_sessions_as_user",
    "launch_nested_container_sessions_under_parent_with_user",
    "attach_containers_input",
    "attach_containers_output",
    "view_containers",
    "remove_nested_containers",
    "launch_standalone_containers",
    "view_standalone_containers",
    "modify_resource_provider_configs",
    "view_resource_providers",
    "prune_images",
};

const char *acl_action_name(enum acl_action action)
{
    if (action <= ACL_NONE || action >= ACL_NACTIONS)
        return "none";
    return actions[action].name;
}

static void entity_fini(struct entity *e)
{
    for (size_t i = 0; i < e->nvalues; i++)
        free(e->values[i]);
    free(e->values);
}

static int entity_parse(const json_t *j, const char *where, struct entity *e,
                        char *err, size_t errlen)
{
    memset(e, 0, sizeof(*e));
    if (!json_is_object(j)) {
        errbuf_set(err, errlen, "%s: expected an object", where);
        return -1;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)j, key, v)
    {
        if (strcmp(key, "type") != 0 && strcmp(key, "values") != 0) {
            errbuf_set(err, errlen, "%s: unknown field '%s'", where, key);
            return -1;
        }
    }
    const json_t *type = json_object_get(j, "type");
    if (type != NULL) {
        const char *t = json_string_value(type);
        if (t != NULL && strcmp(t, "SOME") == 0)
            e->type = ENTITY_SOME;
        else if (t != NULL && strcmp(t, "ANY") == 0)
            e->type = ENTITY_ANY;
        else if (t != NULL && strcmp(t, "NONE") == 0)
            e->type = ENTITY_NONE;
        else if (json_is_integer(type) && json_integer_value(type) >= 0 &&
                 json_integer_value(type) <= 2)
            e->type = (enum entity_type)json_integer_value(type);
        else {
            errbuf_set(err, errlen,
                       "%s.type: expected \"SOME\", \"ANY\" or \"NONE\"",
                       where);
            return -1;
        }
    }
    const json_t *values = json_object_get(j, "values");
    if (values != NULL && !json_is_array(values)) {
        errbuf_set(err, errlen, "%s.values: expected an array of strings",
                   where);
        return -1;
    }
    size_t n = json_array_size(values);
    if (n > 0)
        e->values = xcalloc(n, sizeof(*e->values));
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(values, i);
        if (!json_is_string(s)) {
            errbuf_set(err, errlen, "%s.values[%zu]: expected a string", where,
                       i);
            entity_fini(e);
            return -1;
        }
        e->values[e->nvalues++] = xstrdup(json_string_value(s));
    }
    return 0;
}

/* Parse one action's list: rules with "principals" and objfield. With
 * out == NULL the rules are checked and dropped (ignored actions). */
static int rules_parse(const json_t *list, const char *name,
                       const char *objfield, struct acls *a,
                       enum acl_action action, char *err, size_t errlen)
{
    if (!json_is_array(list)) {
        errbuf_set(err, errlen, "%s: expected an array", name);
        return -1;
    }
    size_t n = json_array_size(list);
    if (n > ACL_MAX_RULES) {
        errbuf_set(err, errlen, "%s: more than %d rules", name, ACL_MAX_RULES);
        return -1;
    }
    if (a != NULL && n > 0)
        a->rules[action] = xcalloc(n, sizeof(struct rule));
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(list, i);
        char where[160];
        snprintf(where, sizeof(where), "%s[%zu]", name, i);
        if (!json_is_object(r)) {
            errbuf_set(err, errlen, "%s: expected an object", where);
            return -1;
        }
        const json_t *subj = json_object_get(r, "principals");
        const json_t *obj = NULL;
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)r, key, v)
        {
            if (strcmp(key, "principals") == 0)
                continue;
            if (objfield == NULL ? obj == NULL : strcmp(key, objfield) == 0) {
                obj = v;
                continue;
            }
            errbuf_set(err, errlen, "%s: unknown field '%s'", where, key);
            return -1;
        }
        if (subj == NULL || obj == NULL) {
            errbuf_set(err, errlen, "%s: requires 'principals' and '%s'", where,
                       objfield != NULL ? objfield : "an object");
            return -1;
        }
        struct rule rule;
        char swhere[200], owhere[200];
        snprintf(swhere, sizeof(swhere), "%s.principals", where);
        snprintf(owhere, sizeof(owhere), "%s.%s", where,
                 objfield != NULL ? objfield : "object");
        if (entity_parse(subj, swhere, &rule.subject, err, errlen) != 0)
            return -1;
        if (entity_parse(obj, owhere, &rule.object, err, errlen) != 0) {
            entity_fini(&rule.subject);
            return -1;
        }
        if (a == NULL) {
            entity_fini(&rule.subject);
            entity_fini(&rule.object);
        } else {
            a->rules[action][a->nrules[action]++] = rule;
        }
    }
    return 0;
}

struct acls *acls_parse(const char *text, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(root)) {
        if (root == NULL)
            errbuf_set(err, errlen, "acls: invalid JSON (line %d: %s)", je.line,
                       je.text);
        else
            errbuf_set(err, errlen, "acls: expected a JSON object");
        json_decref(root);
        return NULL;
    }
    struct acls *a = xcalloc(1, sizeof(*a));
    a->permissive = true;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (strcmp(key, "permissive") == 0) {
            if (!json_is_boolean(v)) {
                errbuf_set(err, errlen, "acls: permissive: expected a bool");
                goto fail;
            }
            a->permissive = json_is_true(v);
            continue;
        }
        int found = -1;
        for (int i = 1; i < ACL_NACTIONS; i++)
            if (strcmp(actions[i].name, key) == 0)
                found = i;
        if (found > 0) {
            if (rules_parse(v, key, actions[found].object, a,
                            (enum acl_action)found, err, errlen) != 0)
                goto fail;
            continue;
        }
        bool ign = false;
        for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
            if (strcmp(ignored[i], key) == 0)
                ign = true;
        if (!ign) {
            errbuf_set(err, errlen, "acls: unknown field '%s'", key);
            goto fail;
        }
        if (rules_parse(v, key, NULL, NULL, ACL_NONE, err, errlen) != 0)
            goto fail;
    }
    json_decref(root);
    return a;
fail:
    json_decref(root);
    acls_free(a);
    return NULL;
}

struct acls *acls_load(const char *flag_value, char *err, size_t errlen)
{
    const char *s = flag_value;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '{')
        return acls_parse(s, strlen(s), err, errlen);
    const char *path = flag_value;
    if (strncmp(path, "file://", 7) == 0)
        path += 7;
    uint8_t *data = NULL;
    size_t len;
    int rc = fs_read(path, ACL_MAX_FILE, &data, &len);
    if (rc != 1) {
        errbuf_set(err, errlen, "acls: %s: %s", path,
                   rc == 0          ? "no such file"
                   : errno == EFBIG ? "file too large"
                                    : strerror(errno));
        return NULL;
    }
    struct acls *a = acls_parse((const char *)data, len, err, errlen);
    free(data);
    return a;
}

void acls_free(struct acls *a)
{
    if (a == NULL)
        return;
    for (int i = 0; i < ACL_NACTIONS; i++) {
        for (size_t k = 0; k < a->nrules[i]; k++) {
            entity_fini(&a->rules[i][k].subject);
            entity_fini(&a->rules[i][k].object);
        }
        free(a->rules[i]);
    }
    free(a);
}

static bool listed(const struct entity *e, const char *value)
{
    for (size_t i = 0; i < e->nvalues; i++)
        if (strcmp(e->values[i], value) == 0)
            return true;
    return false;
}

/* The request value (NULL: ANY) against a rule's entity. */
static bool matches(const char *value, const struct entity *e)
{
    if (value == NULL)
        return e->type == ENTITY_ANY || e->type == ENTITY_NONE;
    if (e->type == ENTITY_ANY || e->type == ENTITY_NONE)
        return true;
    return listed(e, value);
}

static bool allows(const char *value, const struct entity *e)
{
    if (value == NULL)
        return e->type == ENTITY_ANY;
    if (e->type == ENTITY_ANY)
        return true;
    return e->type == ENTITY_SOME && listed(e, value);
}

bool acls_authorized(const struct acls *a, const char *principal,
                     enum acl_action action, const char *object)
{
    if (a == NULL || action <= ACL_NONE || action >= ACL_NACTIONS)
        return true;
    for (size_t i = 0; i < a->nrules[action]; i++) {
        const struct rule *r = &a->rules[action][i];
        if (matches(principal, &r->subject) && matches(object, &r->object))
            return allows(principal, &r->subject) && allows(object, &r->object);
    }
    return a->permissive;
}

struct acl_approver {
    int constant;    /* 1 or 0: the verdict for every object; -1: per object */
    bool permissive; /* when no rule matches */
    size_t n;        /* rules in objects and subject_allows */
    const struct entity **objects; /* each kept rule's object entity */
    bool *subject_allows; /* whether its subject allows the principal */
};

struct acl_approver *acl_approver_new(const struct acls *a,
                                      const char *principal,
                                      enum acl_action action)
{
    struct acl_approver *ap = xcalloc(1, sizeof(*ap));
    if (a == NULL || action <= ACL_NONE || action >= ACL_NACTIONS) {
        ap->constant = 1;
        return ap;
    }
    ap->permissive = a->permissive;
    size_t cap = a->nrules[action];
    ap->objects = xcalloc(cap ? cap : 1, sizeof(*ap->objects));
    ap->subject_allows = xcalloc(cap ? cap : 1, sizeof(*ap->subject_allows));
    for (size_t i = 0; i < cap; i++) {
        const struct rule *r = &a->rules[action][i];
        if (!matches(principal, &r->subject))
            continue;
        ap->objects[ap->n] = &r->object;
        ap->subject_allows[ap->n] = allows(principal, &r->subject);
        ap->n++;
        if (r->object.type != ENTITY_SOME)
            break; /* matches every object: the rules after it never decide */
    }
    if (ap->n == 0)
        ap->constant = ap->permissive ? 1 : 0;
    else if (ap->objects[0]->type != ENTITY_SOME)
        ap->constant =
            ap->subject_allows[0] && ap->objects[0]->type == ENTITY_ANY;
    else
        ap->constant = -1;
    return ap;
}

void acl_approver_free(struct acl_approver *ap)
{
    if (ap == NULL)
        return;
    free(ap->objects);
    free(ap->subject_allows);
    free(ap);
}

bool acl_approver_allows(const struct acl_approver *ap, const char *object)
{
    if (ap->constant >= 0)
        return ap->constant == 1;
    for (size_t i = 0; i < ap->n; i++)
        if (matches(object, ap->objects[i]))
            return ap->subject_allows[i] && allows(object, ap->objects[i]);
    return ap->permissive;
}

bool acl_approver_constant(const struct acl_approver *ap, bool *verdict)
{
    if (ap->constant < 0)
        return false;
    *verdict = ap->constant == 1;
    return true;
}
