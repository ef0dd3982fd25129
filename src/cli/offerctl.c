/*
 * offerctl: argument parsing, the command table and each command's run
 * function; see offerctl.h. A command builds its Calls with
 * offerctl_build.h, sends them through the caller's struct octl_io (so
 * that tests answer from canned replies), and prints the answer as a table
 * (offerctl_table.h) or, with --json, as the API wrote it.
 */
#include "cli/offerctl.h"

#include "cli/offerctl_build.h"
#include "cli/offerctl_table.h"
#include "common/mem.h"

#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Largest per-request timeout --timeout takes (ms). */
#define OCTL_MAX_TIMEOUT_MS (3600LL * 1000)
/* Bytes `logs` asks for per /files/read (the agent's own cap). */
#define OCTL_READ_CHUNK 65536

struct ctx {
    const struct octl_args *a;
    const struct octl_io *io;
};

typedef int (*run_fn)(struct ctx *c);

#define OPT(o) (1u << (o))

/* Most columns of a table. */
#define MAX_COLS 8

/* A read command printed as a table: one read call, the field of its
 * answer that holds the content, the columns, and the function that adds
 * the rows: called once with that field, or, with `list`, once for each
 * element of that array of the field (all borrowed). show_view runs it. */
struct view {
    const char *type;  /* the read Call, "GET_AGENTS" */
    const char *field; /* its answer's field, "get_agents" */
    const char *list;  /* an array of the field, one row each; or NULL */
    void (*rows)(struct ctx *c, struct octl_table *t, const json_t *j);
    size_t max_pos;                 /* positionals it takes (run_view) */
    const char *cols[MAX_COLS + 1]; /* column names, NULL-terminated */
};

/* Define the struct view NAME_view of the row function NAME_rows. */
#define VIEW(name, type, field, list, max_pos, ...)                            \
    static const struct view name##_view = {                                   \
        type, field, list, name##_rows, max_pos, {__VA_ARGS__}}

/* A change that names one agent or framework and nothing else
 * (run_id_change): "offerctl deactivate AGENT_ID". */
struct id_change {
    const char *type;  /* the Call, "DEACTIVATE_AGENT" */
    const char *field; /* its payload's field, "deactivate_agent" */
    const char *key;   /* the id's field in the payload, "agent_id" */
    const char *what;  /* the argument, "AGENT_ID" */
    const char *noun;  /* the done line: "<noun> <id> <verb>" */
    const char *verb;
};

struct octl_cmd {
    const char *name;
    run_fn run;
    unsigned opts;        /* options it takes (OPT bits) */
    const char *synopsis; /* usage lines, each "offerctl ..." */
    const char *summary;  /* one line for the command list */
    const char *details;  /* more text for --help; may be NULL */
    const void *data;     /* run_view: its struct view; run_id_change: its
                             struct id_change; else NULL */
};

/* ---- Options ---- */

static const struct {
    const char *name;
    bool has_value;   /* --name=value; else a flag, --name */
    const char *help; /* one line for --help */
} opt_defs[OCTL_OPT_COUNT] = {
    [OCTL_OPT_ALL] = {"all", false, "completed ones too"},
    [OCTL_OPT_ROLE] = {"role", true,
                       "role to reserve to (entries without a role)"},
    [OCTL_OPT_PRINCIPAL] = {"principal", true,
                            "principal recorded on the reservation (also "
                            "the one offerctl authenticates as)"},
    [OCTL_OPT_FORCE] = {"force", false,
                        "skip the master's capacity and usage checks"},
    [OCTL_OPT_GUARANTEE] = {"guarantee", true,
                            "guaranteed resources, e.g. cpus:2;mem:512"},
    [OCTL_OPT_LIMIT] = {"limit", true, "resource limits, e.g. cpus:4"},
    [OCTL_OPT_ID] = {"id", true, "the volume's persistence id"},
    [OCTL_OPT_CONTAINER_PATH] = {"container_path", true,
                                 "where tasks see the volume in their "
                                 "sandbox"},
    [OCTL_OPT_MODE] = {"mode", true, "RW (default) or RO"},
    [OCTL_OPT_MAX_GRACE] = {"max_grace_period", true,
                            "cap on each task's kill grace period, e.g. "
                            "10secs"},
    [OCTL_OPT_MARK_GONE] = {"mark_gone", false,
                            "once drained, remove the agent for good"},
    [OCTL_OPT_FILE] = {"file", true, "sandbox file to show (default stdout)"},
    [OCTL_OPT_FOLLOW] = {"follow", false,
                         "keep printing what is appended, until Ctrl-C"},
    [OCTL_OPT_INTERVAL] = {"interval", true,
                           "time between two reads with --follow "
                           "(default 1secs)"},
};

/* ---- Output helpers ---- */

/* Write the one-line error "offerctl: <fmt ...>" to the error stream;
 * with hint, a usage error, followed by where the command's help is. */
static void say_error(struct ctx *c, bool hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say_error(struct ctx *c, bool hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(OCTL_PROGRAM ": ", c->io->err);
    vfprintf(c->io->err, fmt, ap);
    va_end(ap);
    if (hint)
        fprintf(c->io->err, " (see '" OCTL_PROGRAM " %s --help')",
                c->a->cmd ? c->a->cmd->name : "");
    fputc('\n', c->io->err);
}

#define errorf(c, ...) say_error((c), false, __VA_ARGS__)
/* A usage error; evaluates to OCTL_EXIT_USAGE. */
#define usage_error(c, ...) (say_error((c), true, __VA_ARGS__), OCTL_EXIT_USAGE)

void octl_reply_clear(struct octl_reply *rp)
{
    free(rp->body);
    memset(rp, 0, sizeof(*rp));
}

/* The first line of a refusal's body, trimmed, or "HTTP <status>". */
static void print_refusal(struct ctx *c, const char *who,
                          const struct octl_reply *rp)
{
    const char *b = rp->body ? rp->body : "";
    while (isspace((unsigned char)*b))
        b++;
    size_t n = strcspn(b, "\r\n");
    while (n > 0 && isspace((unsigned char)b[n - 1]))
        n--;
    if (n == 0)
        errorf(c, "the %s answered %d", who, rp->status);
    else
        errorf(c, "%.*s", (int)n, b);
}

/* Send rq; on an error print it and return the exit status, else 0. */
static int send_checked(struct ctx *c, const struct octl_request *rq,
                        struct octl_reply *rp)
{
    memset(rp, 0, sizeof(*rp));
    c->io->request(c->io->arg, rq, rp);
    const char *who = rq->to_agent ? "agent" : "master";
    if (rp->status == 0) {
        /* The client's reason may start with the address: said once. */
        const char *why = rp->body ? rp->body : "no answer";
        const char *sep = strstr(why, ": ");
        if (sep != NULL && strchr(why, ' ') == sep + 1 &&
            memchr(why, ':', (size_t)(sep - why)) != NULL)
            why = sep + 2;
        if (rq->to_agent)
            errorf(c, "cannot reach the agent at %s:%u: %s", rq->host,
                   (unsigned)rq->port, why);
        else
            errorf(c, "cannot reach the master at %s: %s", c->a->master, why);
        octl_reply_clear(rp);
        return OCTL_EXIT_UNREACHABLE;
    }
    if (rp->status < 200 || rp->status > 299) {
        print_refusal(c, who, rp);
        octl_reply_clear(rp);
        return OCTL_EXIT_REFUSED;
    }
    return 0;
}

/* POST call (stolen) to the master's /api/v1. With want != NULL the answer
 * must be JSON: *want (OUT) gets it. Returns 0 or the exit status. */
static int call_master(struct ctx *c, json_t *call, json_t **want)
{
    char *body = json_dumps(call, JSON_COMPACT);
    json_decref(call);
    struct octl_request rq = {.post = true, .path = "/api/v1", .body = body};
    struct octl_reply rp;
    int rc = send_checked(c, &rq, &rp);
    free(body);
    if (rc != 0)
        return rc;
    if (want != NULL) {
        json_error_t je;
        *want = json_loadb(rp.body, rp.len, 0, &je);
        if (*want == NULL) {
            errorf(c, "the master's answer is not JSON: %s", je.text);
            octl_reply_clear(&rp);
            return OCTL_EXIT_REFUSED;
        }
    }
    octl_reply_clear(&rp);
    return 0;
}

static void print_json(struct ctx *c, const json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s != NULL) {
        fputs(s, c->io->out);
        fputc('\n', c->io->out);
    }
    free(s);
}

/* Run a read call; with --json print its answer and return with *ans NULL;
 * otherwise *ans (OUT) is the answer's `field` object (borrowed from
 * *root, which the caller frees). */
static int read_call(struct ctx *c, const char *type, const char *field,
                     json_t **root, json_t **ans)
{
    *root = NULL;
    *ans = NULL;
    int rc = call_master(c, octl_call_new(type, NULL, NULL), root);
    if (rc != 0)
        return rc;
    if (c->a->json) {
        print_json(c, *root);
        return 0;
    }
    /* An answer without the field reads as an empty one. */
    if (json_object_get(*root, field) == NULL)
        json_object_set_new(*root, field, json_object());
    *ans = json_object_get(*root, field);
    return 0;
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static const char *jid(const json_t *o, const char *key)
{
    return jstr(json_object_get(o, key), "value");
}

static bool jtrue(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

static bool opt_set(struct ctx *c, enum octl_opt o)
{
    return c->a->opt[o] != NULL;
}

static const char *opt_val(struct ctx *c, enum octl_opt o)
{
    return c->a->opt[o];
}

/* Check the number of positionals (after the subcommand, when skip is 1). */
static int need_pos(struct ctx *c, size_t skip, size_t min, size_t max,
                    const char *what)
{
    size_t n = c->a->npos - skip;
    if (n < min)
        return usage_error(c, "missing %s", what);
    if (n > max) {
        const char *extra =
            skip + max < OCTL_MAX_POS ? c->a->pos[skip + max] : NULL;
        return usage_error(c, "unexpected argument '%s'", extra ? extra : "");
    }
    return 0;
}

/* Cells of three scalar columns from a resources array. */
static void set_res_cells(struct octl_table *t, size_t col, const json_t *arr)
{
    char b[64];
    octl_table_set(t, col, octl_fmt_num(octl_res_sum(arr, "cpus"), b, 64));
    octl_table_set(t, col + 1, octl_fmt_mb(octl_res_sum(arr, "mem"), b, 64));
    octl_table_set(t, col + 2, octl_fmt_mb(octl_res_sum(arr, "disk"), b, 64));
}

/* The number o[key] in the table's units ("2", "0.5"). */
static void set_num(struct octl_table *t, size_t col, const json_t *o,
                    const char *key)
{
    char b[64];
    octl_table_set(
        t, col,
        octl_fmt_num(json_number_value(json_object_get(o, key)), b, sizeof(b)));
}

/* "used/total" of one scalar. */
static void set_used_total(struct octl_table *t, size_t col, const json_t *used,
                           const json_t *total, const char *name)
{
    char u[64], tt[64];
    double a = octl_res_sum(used, name), b = octl_res_sum(total, name);
    if (strcmp(name, "cpus") == 0)
        octl_table_setf(t, col, "%s/%s", octl_fmt_num(a, u, 64),
                        octl_fmt_num(b, tt, 64));
    else
        octl_table_setf(t, col, "%s/%s", octl_fmt_mb(a, u, 64),
                        octl_fmt_mb(b, tt, 64));
}

/* Send the change Call `type` with {field: payload} (payload stolen); once
 * the master accepts it, print the done line (fmt ...) unless --json.
 * Returns 0 or the exit status. */
static int change(struct ctx *c, const char *type, const char *field,
                  json_t *payload, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int change(struct ctx *c, const char *type, const char *field,
                  json_t *payload, const char *fmt, ...)
{
    int rc = call_master(c, octl_call_new(type, field, payload), NULL);
    if (rc != 0 || c->a->json)
        return rc;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->io->out, fmt, ap);
    va_end(ap);
    fputc('\n', c->io->out);
    return 0;
}

/* Run v's read call and print its table (with --json, the answer).
 * Returns 0 or the exit status. */
static int show_view(struct ctx *c, const struct view *v)
{
    json_t *root, *ans;
    int rc = read_call(c, v->type, v->field, &root, &ans);
    if (rc == 0 && ans != NULL) {
        size_t ncols = 0;
        while (ncols < MAX_COLS && v->cols[ncols] != NULL)
            ncols++;
        struct octl_table *t = octl_table_new(ncols, v->cols);
        size_t i;
        const json_t *e;
        if (v->list == NULL)
            v->rows(c, t, ans);
        else
            json_array_foreach(json_object_get(ans, v->list), i, e)
                v->rows(c, t, e);
        octl_table_print(t, c->io->out);
        octl_table_free(t);
    }
    json_decref(root);
    return rc;
}

/* A command that is its view: check the positionals, show it. */
static int run_view(struct ctx *c)
{
    const struct view *v = c->a->cmd->data;
    int rc = need_pos(c, 0, 0, v->max_pos, "");
    return rc != 0 ? rc : show_view(c, v);
}

/* A command that is its id_change. */
static int run_id_change(struct ctx *c)
{
    const struct id_change *ic = c->a->cmd->data;
    int rc = need_pos(c, 0, 1, 1, ic->what);
    if (rc != 0)
        return rc;
    const char *id = c->a->pos[0];
    return change(c, ic->type, ic->field,
                  json_pack("{s:o}", ic->key, octl_id_json(id)), "%s %s %s",
                  ic->noun, id, ic->verb);
}

/* ---- agents ---- */

/* The roles the agent's resources are reserved to, "db,web" or NULL. */
static char *reserved_roles(const json_t *arr)
{
    json_t *seen = json_object();
    size_t i;
    const json_t *r;
    json_array_foreach(arr, i, r)
    {
        const json_t *st = json_object_get(r, "reservations");
        const json_t *top = json_array_get(st, json_array_size(st) - 1);
        const char *role = json_string_value(json_object_get(top, "role"));
        if (role == NULL) {
            role = json_string_value(json_object_get(r, "role"));
            if (role != NULL && strcmp(role, "*") == 0)
                role = NULL;
        }
        if (role != NULL)
            json_object_set_new(seen, role, json_true());
    }
    char *s = NULL;
    size_t len = 0;
    const char *k;
    json_t *v;
    json_object_foreach(seen, k, v)
    {
        size_t kl = strlen(k);
        s = xrealloc(s, len + kl + 2);
        if (len > 0)
            s[len++] = ',';
        memcpy(s + len, k, kl + 1);
        len += kl;
    }
    json_decref(seen);
    return s;
}

static const char *agent_state(const json_t *ag)
{
    const char *drain = jstr(json_object_get(ag, "drain_info"), "state");
    if (strcmp(drain, "DRAINING") == 0)
        return "draining";
    if (strcmp(drain, "DRAINED") == 0)
        return "drained";
    if (jtrue(ag, "deactivated"))
        return "deactivated";
    return jtrue(ag, "active") ? "active" : "disconnected";
}

static void agents_rows(struct ctx *c, struct octl_table *t, const json_t *ans)
{
    size_t i;
    const json_t *ag;
    json_array_foreach(json_object_get(ans, "agents"), i, ag)
    {
        const json_t *info = json_object_get(ag, "agent_info");
        const json_t *total = json_object_get(ag, "total_resources");
        const json_t *used = json_object_get(ag, "allocated_resources");
        octl_table_set(t, 0, jid(info, "id"));
        octl_table_set(t, 1, jstr(info, "hostname"));
        octl_table_set(t, 2, agent_state(ag));
        set_used_total(t, 3, used, total, "cpus");
        set_used_total(t, 4, used, total, "mem");
        set_used_total(t, 5, used, total, "disk");
        char *roles = reserved_roles(total);
        octl_table_set(t, 6, roles);
        free(roles);
        octl_table_end_row(t);
    }
    json_array_foreach(json_object_get(ans, "recovered_agents"), i, ag)
    {
        octl_table_set(t, 0, jid(ag, "id"));
        octl_table_set(t, 1, jstr(ag, "hostname"));
        octl_table_set(t, 2, "recovered");
        octl_table_end_row(t);
    }
}

VIEW(agents, "GET_AGENTS", "get_agents", NULL, 0, "ID", "HOSTNAME", "STATE",
     "CPUS", "MEM", "DISK", "RESERVED");

/* ---- frameworks ---- */

static void framework_row(struct octl_table *t, const json_t *fw,
                          const char *state)
{
    const json_t *info = json_object_get(fw, "framework_info");
    octl_table_set(t, 0, jid(info, "id"));
    octl_table_set(t, 1, jstr(info, "name"));
    const json_t *roles = json_object_get(info, "roles");
    char buf[512] = "";
    size_t i, used = 0;
    const json_t *r;
    json_array_foreach(roles, i, r)
    {
        int w = snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "," : "",
                         json_string_value(r));
        if (w < 0 || (size_t)w >= sizeof(buf) - used)
            break;
        used += (size_t)w;
    }
    if (json_array_size(roles) == 0)
        snprintf(buf, sizeof(buf), "%s",
                 json_string_value(json_object_get(info, "role"))
                     ? jstr(info, "role")
                     : "*");
    octl_table_set(t, 2, buf);
    if (state == NULL)
        state = !jtrue(fw, "connected") ? "disconnected"
                : jtrue(fw, "active")   ? "active"
                                        : "inactive";
    octl_table_set(t, 3, state);
    set_res_cells(t, 4, json_object_get(fw, "allocated_resources"));
    octl_table_end_row(t);
}

static void frameworks_rows(struct ctx *c, struct octl_table *t,
                            const json_t *ans)
{
    size_t i;
    const json_t *fw;
    json_array_foreach(json_object_get(ans, "frameworks"), i, fw)
        framework_row(t, fw, NULL);
    if (opt_set(c, OCTL_OPT_ALL))
        json_array_foreach(json_object_get(ans, "completed_frameworks"), i, fw)
            framework_row(t, fw, "completed");
}

VIEW(frameworks, "GET_FRAMEWORKS", "get_frameworks", NULL, 0, "ID", "NAME",
     "ROLES", "STATE", "CPUS", "MEM", "DISK");

/* ---- tasks ---- */

static void tasks_rows(struct ctx *c, struct octl_table *t, const json_t *ans)
{
    static const char *const lists[] = {"pending_tasks", "tasks",
                                        "unreachable_tasks", "completed_tasks"};
    size_t nlists = opt_set(c, OCTL_OPT_ALL) ? 4 : 3;
    for (size_t l = 0; l < nlists; l++) {
        size_t i;
        const json_t *task;
        json_array_foreach(json_object_get(ans, lists[l]), i, task)
        {
            octl_table_set(t, 0, jid(task, "task_id"));
            octl_table_set(t, 1, jstr(task, "name"));
            octl_table_set(t, 2, jid(task, "framework_id"));
            octl_table_set(t, 3, jid(task, "agent_id"));
            octl_table_set(t, 4, jstr(task, "state"));
            set_res_cells(t, 5, json_object_get(task, "resources"));
            octl_table_end_row(t);
        }
    }
}

VIEW(tasks, "GET_TASKS", "get_tasks", NULL, 0, "ID", "NAME", "FRAMEWORK",
     "AGENT", "STATE", "CPUS", "MEM", "DISK");

/* ---- roles ---- */

static void roles_rows(struct ctx *c, struct octl_table *t, const json_t *r)
{
    octl_table_set(t, 0, jstr(r, "name"));
    set_num(t, 1, r, "weight");
    octl_table_setf(t, 2, "%zu",
                    json_array_size(json_object_get(r, "frameworks")));
    set_res_cells(t, 3, json_object_get(r, "resources"));
    octl_table_end_row(t);
}

VIEW(roles, "GET_ROLES", "get_roles", "roles", 0, "NAME", "WEIGHT",
     "FRAMEWORKS", "CPUS", "MEM", "DISK");

/* ---- quota ---- */

static void quota_rows(struct ctx *c, struct octl_table *t, const json_t *ans)
{
    size_t i;
    const json_t *q;
    json_array_foreach(
        json_object_get(json_object_get(ans, "status"), "configs"), i, q)
    {
        octl_table_set(t, 0, jstr(q, "role"));
        char *g = octl_quantities_text(json_object_get(q, "guarantees"));
        char *l = octl_quantities_text(json_object_get(q, "limits"));
        octl_table_set(t, 1, g[0] ? g : NULL);
        octl_table_set(t, 2, l[0] ? l : NULL);
        free(g);
        free(l);
        octl_table_end_row(t);
    }
}

VIEW(quota, "GET_QUOTA", "get_quota", NULL, 0, "ROLE", "GUARANTEE", "LIMIT");

static int cmd_quota(struct ctx *c)
{
    const char *sub = c->a->npos > 0 ? c->a->pos[0] : NULL;
    char err[512];
    if (sub == NULL || (strcmp(sub, "set") != 0 && strcmp(sub, "remove") != 0))
        return sub ? usage_error(c, "unknown quota command '%s'", sub)
                   : show_view(c, &quota_view);
    int rc = need_pos(c, 1, 1, 1, "ROLE");
    if (rc != 0)
        return rc;
    const char *role = c->a->pos[1];
    if (strcmp(sub, "remove") == 0)
        return change(c, "REMOVE_QUOTA", "remove_quota",
                      json_pack("{s:s}", "role", role),
                      "quota of role %s removed", role);
    if (!opt_set(c, OCTL_OPT_GUARANTEE) && !opt_set(c, OCTL_OPT_LIMIT))
        return usage_error(c, "give --guarantee=RESOURCES, --limit=RESOURCES "
                              "or both");
    json_t *cfg = json_pack("{s:s}", "role", role);
    static const struct {
        enum octl_opt opt;
        const char *field;
    } parts[] = {{OCTL_OPT_GUARANTEE, "guarantees"},
                 {OCTL_OPT_LIMIT, "limits"}};
    for (size_t i = 0; i < 2; i++) {
        if (!opt_set(c, parts[i].opt))
            continue;
        json_t *m = octl_quantities(opt_val(c, parts[i].opt), err, sizeof(err));
        if (m == NULL) {
            json_decref(cfg);
            return usage_error(c, "--%s: %s", opt_defs[parts[i].opt].name, err);
        }
        json_object_set_new(cfg, parts[i].field, m);
    }
    json_t *upd = json_pack("{s:[o]}", "quota_configs", cfg);
    if (opt_set(c, OCTL_OPT_FORCE))
        json_object_set_new(upd, "force", json_true());
    return change(c, "UPDATE_QUOTA", "update_quota", upd,
                  "quota of role %s set", role);
}

/* ---- weights ---- */

static void weights_rows(struct ctx *c, struct octl_table *t, const json_t *w)
{
    octl_table_set(t, 0, jstr(w, "role"));
    set_num(t, 1, w, "weight");
    octl_table_end_row(t);
}

VIEW(weights, "GET_WEIGHTS", "get_weights", "weight_infos", 0, "ROLE",
     "WEIGHT");

static int cmd_weights(struct ctx *c)
{
    char err[512];
    const char *sub = c->a->npos > 0 ? c->a->pos[0] : NULL;
    if (sub != NULL && strcmp(sub, "set") != 0)
        return usage_error(c, "unknown weights command '%s'", sub);
    if (sub == NULL)
        return show_view(c, &weights_view);
    int rc = need_pos(c, 1, 1, OCTL_MAX_POS, "ROLE=WEIGHT");
    if (rc != 0)
        return rc;
    json_t *infos = json_array();
    for (size_t i = 1; i < c->a->npos; i++) {
        json_t *w = octl_weight_info(c->a->pos[i], err, sizeof(err));
        if (w == NULL) {
            json_decref(infos);
            return usage_error(c, "%s", err);
        }
        json_array_append_new(infos, w);
    }
    return change(c, "UPDATE_WEIGHTS", "update_weights",
                  json_pack("{s:o}", "weight_infos", infos), "weights set");
}

/* ---- reserve, unreserve, volumes ---- */

static int reservation_call(struct ctx *c, bool reserve)
{
    char err[512];
    int rc = need_pos(c, 0, 2, 2, "AGENT_ID and RESOURCES");
    if (rc != 0)
        return rc;
    json_t *res = octl_reserved_resources(
        c->a->pos[1], opt_val(c, OCTL_OPT_ROLE), opt_val(c, OCTL_OPT_PRINCIPAL),
        err, sizeof(err));
    if (res == NULL)
        return usage_error(c, "%s", err);
    const char *type = reserve ? "RESERVE_RESOURCES" : "UNRESERVE_RESOURCES";
    const char *field = reserve ? "reserve_resources" : "unreserve_resources";
    json_t *p = json_pack("{s:o,s:o}", "agent_id", octl_id_json(c->a->pos[0]),
                          "resources", res);
    return change(c, type, field, p, "%s on agent %s",
                  reserve ? "reserved" : "unreserved", c->a->pos[0]);
}

static int cmd_reserve(struct ctx *c)
{
    return reservation_call(c, true);
}

static int cmd_unreserve(struct ctx *c)
{
    return reservation_call(c, false);
}

/* The persistent volumes among an agent's resources. */
static bool is_volume(const json_t *r)
{
    return json_object_get(
               json_object_get(json_object_get(r, "disk"), "persistence"),
               "id") != NULL;
}

static void volumes_rows(struct ctx *c, struct octl_table *t, const json_t *ans)
{
    size_t i, k;
    const json_t *ag, *r;
    json_array_foreach(json_object_get(ans, "agents"), i, ag)
    {
        json_array_foreach(json_object_get(ag, "total_resources"), k, r)
        {
            if (!is_volume(r))
                continue;
            const json_t *disk = json_object_get(r, "disk");
            const json_t *st = json_object_get(r, "reservations");
            const json_t *top = json_array_get(st, json_array_size(st) - 1);
            char b[64];
            octl_table_set(t, 0, jid(json_object_get(ag, "agent_info"), "id"));
            octl_table_set(t, 1,
                           jstr(json_object_get(disk, "persistence"), "id"));
            octl_table_set(t, 2, top ? jstr(top, "role") : jstr(r, "role"));
            octl_table_set(
                t, 3,
                octl_fmt_mb(json_number_value(json_object_get(
                                json_object_get(r, "scalar"), "value")),
                            b, 64));
            octl_table_set(
                t, 4, jstr(json_object_get(disk, "volume"), "container_path"));
            octl_table_set(t, 5, jstr(json_object_get(disk, "volume"), "mode"));
            octl_table_end_row(t);
        }
    }
}

VIEW(volumes, "GET_AGENTS", "get_agents", NULL, 0, "AGENT", "ID", "ROLE",
     "SIZE", "PATH", "MODE");

/* The volume `id` on agent `agent`, as GET_AGENTS shows it (a new
 * reference), or NULL with the exit status in *rc. */
static json_t *find_volume(struct ctx *c, const char *agent, const char *id,
                           int *rc)
{
    json_t *root = NULL;
    *rc = call_master(c, octl_call_new("GET_AGENTS", NULL, NULL), &root);
    if (*rc != 0)
        return NULL;
    json_t *found = NULL;
    size_t i, k;
    json_t *ag, *r;
    json_array_foreach(
        json_object_get(json_object_get(root, "get_agents"), "agents"), i, ag)
    {
        if (strcmp(jid(json_object_get(ag, "agent_info"), "id"), agent) != 0)
            continue;
        json_array_foreach(json_object_get(ag, "total_resources"), k, r)
        {
            if (is_volume(r) &&
                strcmp(jstr(json_object_get(json_object_get(r, "disk"),
                                            "persistence"),
                            "id"),
                       id) == 0)
                found = json_deep_copy(r);
        }
    }
    json_decref(root);
    if (found == NULL) {
        errorf(c, "agent %s has no volume '%s'", agent, id);
        *rc = OCTL_EXIT_REFUSED;
        return NULL;
    }
    /* The master shows it allocated to no one; the call takes it as is. */
    json_object_del(found, "allocation_info");
    return found;
}

/* A size in megabytes: a positive number. Returns 0 with *mb (OUT). */
static int parse_mb(const char *text, double *mb)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0) || v > 1e15)
        return -1;
    *mb = v;
    return 0;
}

/* volumes grow|shrink AGENT_ID VOLUME_ID SIZE: the volume as the master
 * shows it, and the reserved disk beside it to add (the volume's own
 * reservations and disk source, no persistence or volume), or the amount
 * to give back. */
static int volume_resize(struct ctx *c, bool grow)
{
    int rc = need_pos(c, 1, 3, 3, "AGENT_ID, VOLUME_ID and SIZE (MB)");
    if (rc != 0)
        return rc;
    const char *agent = c->a->pos[1], *id = c->a->pos[2];
    double mb;
    if (parse_mb(c->a->pos[3], &mb) != 0)
        return usage_error(c, "bad SIZE '%s': a positive number of MB",
                           c->a->pos[3]);
    json_t *vol = find_volume(c, agent, id, &rc);
    if (vol == NULL)
        return rc;
    json_t *p =
        json_pack("{s:o,s:o}", "agent_id", octl_id_json(agent), "volume", vol);
    if (grow) {
        json_t *add = json_deep_copy(vol);
        json_t *disk = json_object_get(add, "disk");
        json_object_del(disk, "persistence");
        json_object_del(disk, "volume");
        if (json_object_size(disk) == 0)
            json_object_del(add, "disk");
        json_object_del(add, "shared");
        json_object_set_new(add, "scalar", json_pack("{s:f}", "value", mb));
        json_object_set_new(p, "addition", add);
    } else {
        json_object_set_new(p, "subtract", json_pack("{s:f}", "value", mb));
    }
    return change(c, grow ? "GROW_VOLUME" : "SHRINK_VOLUME",
                  grow ? "grow_volume" : "shrink_volume", p,
                  "volume %s on agent %s %s", id, agent,
                  grow ? "grown" : "shrunk");
}

static int cmd_volumes(struct ctx *c)
{
    char err[512];
    const char *sub = c->a->npos > 0 ? c->a->pos[0] : NULL;
    if (sub == NULL)
        return show_view(c, &volumes_view);
    if (strcmp(sub, "grow") == 0 || strcmp(sub, "shrink") == 0)
        return volume_resize(c, strcmp(sub, "grow") == 0);
    bool create = strcmp(sub, "create") == 0;
    if (!create && strcmp(sub, "destroy") != 0)
        return usage_error(c, "unknown volumes command '%s'", sub);
    int rc = need_pos(c, 1, 2, 2,
                      create ? "AGENT_ID and RESOURCES"
                             : "AGENT_ID and "
                               "VOLUME_ID");
    if (rc != 0)
        return rc;
    const char *agent = c->a->pos[1], *arg = c->a->pos[2];
    json_t *vols;
    if (create) {
        vols = octl_volume_resources(
            arg, opt_val(c, OCTL_OPT_ROLE), opt_val(c, OCTL_OPT_PRINCIPAL),
            opt_val(c, OCTL_OPT_ID), opt_val(c, OCTL_OPT_CONTAINER_PATH),
            opt_val(c, OCTL_OPT_MODE), err, sizeof(err));
        if (vols == NULL)
            return usage_error(c, "%s", err);
    } else if (arg[strspn(arg, " \t")] == '[') {
        vols = octl_reserved_resources(arg, NULL, NULL, err, sizeof(err));
        if (vols == NULL)
            return usage_error(c, "%s", err);
    } else {
        json_t *v = find_volume(c, agent, arg, &rc);
        if (v == NULL)
            return rc;
        vols = json_array();
        json_array_append_new(vols, v);
    }
    json_t *p = json_pack("{s:o,s:o}", "agent_id", octl_id_json(agent),
                          "volumes", vols);
    return change(c, create ? "CREATE_VOLUMES" : "DESTROY_VOLUMES",
                  create ? "create_volumes" : "destroy_volumes", p,
                  "volume %s on agent %s", create ? "created" : "destroyed",
                  agent);
}

/* ---- maintenance ---- */

static char *machine_text(const json_t *m)
{
    const char *h = jstr(m, "hostname"), *ip = jstr(m, "ip");
    size_t n = strlen(h) + strlen(ip) + 2;
    char *s = xmalloc(n);
    snprintf(s, n, "%s%s%s", h, (*h && *ip) ? "/" : "", ip);
    return s;
}

static long long jll(const json_t *o, const char *a, const char *b)
{
    return (long long)json_integer_value(
        json_object_get(json_object_get(o, a), b));
}

static void schedule_rows(struct ctx *c, struct octl_table *t,
                          const json_t *ans)
{
    size_t i, k;
    const json_t *w, *m;
    json_array_foreach(
        json_object_get(json_object_get(ans, "schedule"), "windows"), i, w)
    {
        const json_t *u = json_object_get(w, "unavailability");
        char start[64], dur[64];
        octl_fmt_time(jll(u, "start", "nanoseconds"), start, sizeof(start));
        if (json_object_get(u, "duration") != NULL)
            octl_fmt_duration(jll(u, "duration", "nanoseconds"), dur,
                              sizeof(dur));
        else
            snprintf(dur, sizeof(dur), "-");
        json_array_foreach(json_object_get(w, "machine_ids"), k, m)
        {
            char *mt = machine_text(m);
            octl_table_set(t, 0, mt);
            free(mt);
            octl_table_set(t, 1, start);
            octl_table_set(t, 2, dur);
            octl_table_end_row(t);
        }
    }
}

VIEW(schedule, "GET_MAINTENANCE_SCHEDULE", "get_maintenance_schedule", NULL, 0,
     "MACHINE", "START (UTC)", "DURATION");

/* Read a schedule document: JSON text, '-' (stdin) or a file. */
static json_t *load_schedule(struct ctx *c, const char *arg, int *rc)
{
    json_error_t je;
    json_t *j;
    if (arg[strspn(arg, " \t\n")] == '{')
        j = json_loads(arg, 0, &je);
    else if (strcmp(arg, "-") == 0)
        j = json_loadf(stdin, 0, &je);
    else
        j = json_load_file(arg, 0, &je);
    if (j == NULL || !json_is_object(j)) {
        *rc = usage_error(c, "bad schedule '%s': %s", arg,
                          j ? "expected a JSON object" : je.text);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* One row of the status table (machine text borrowed). */
static void status_row(struct octl_table *t, const char *machine,
                       const char *mode, const json_t *status)
{
    octl_table_set(t, 0, machine);
    octl_table_set(t, 1, mode);
    if (status != NULL) {
        octl_table_set(t, 2, jid(status, "framework_id"));
        octl_table_set(t, 3, jstr(status, "status"));
    }
    octl_table_end_row(t);
}

static void status_rows(struct ctx *c, struct octl_table *t, const json_t *ans)
{
    const json_t *st = json_object_get(ans, "status");
    size_t i, k;
    const json_t *d, *s;
    json_array_foreach(json_object_get(st, "draining_machines"), i, d)
    {
        char *mt = machine_text(json_object_get(d, "id"));
        const json_t *sts = json_object_get(d, "statuses");
        if (json_array_size(sts) == 0)
            status_row(t, mt, "DRAINING", NULL);
        json_array_foreach(sts, k, s) status_row(t, mt, "DRAINING", s);
        free(mt);
    }
    json_array_foreach(json_object_get(st, "down_machines"), i, d)
    {
        char *mt = machine_text(d);
        status_row(t, mt, "DOWN", NULL);
        free(mt);
    }
}

VIEW(status, "GET_MAINTENANCE_STATUS", "get_maintenance_status", NULL, 0,
     "MACHINE", "MODE", "FRAMEWORK", "ANSWER");

/* A machine named by hostname or IP alone is completed from the schedule
 * (machines are matched on both), when the schedule names it once. */
static json_t *complete_machine(const json_t *schedule, json_t *m)
{
    const char *h = json_string_value(json_object_get(m, "hostname"));
    const char *ip = json_string_value(json_object_get(m, "ip"));
    if (h != NULL && ip != NULL)
        return m;
    const json_t *hit = NULL;
    int hits = 0;
    size_t i, k;
    json_t *w, *id;
    json_array_foreach(json_object_get(schedule, "windows"), i, w)
        json_array_foreach(json_object_get(w, "machine_ids"), k, id)
    {
        const char *h2 = json_string_value(json_object_get(id, "hostname"));
        const char *ip2 = json_string_value(json_object_get(id, "ip"));
        if ((h != NULL && h2 != NULL && strcasecmp(h, h2) == 0) ||
            (ip != NULL && ip2 != NULL && strcmp(ip, ip2) == 0)) {
            hit = id;
            hits++;
        }
    }
    if (hits != 1)
        return m;
    json_decref(m);
    return json_deep_copy(hit);
}

static int maint_machines(struct ctx *c, bool down)
{
    char err[512];
    int rc = need_pos(c, 1, 1, OCTL_MAX_POS, "MACHINE (HOST/IP)");
    if (rc != 0)
        return rc;
    json_t *machines = json_array();
    bool partial = false;
    for (size_t i = 1; i < c->a->npos; i++) {
        json_t *m = octl_machine_id(c->a->pos[i], err, sizeof(err));
        if (m == NULL) {
            json_decref(machines);
            return usage_error(c, "%s", err);
        }
        partial = partial || strchr(c->a->pos[i], '/') == NULL;
        json_array_append_new(machines, m);
    }
    if (partial) {
        json_t *root = NULL;
        rc = call_master(
            c, octl_call_new("GET_MAINTENANCE_SCHEDULE", NULL, NULL), &root);
        if (rc != 0) {
            json_decref(machines);
            return rc;
        }
        const json_t *sched = json_object_get(
            json_object_get(root, "get_maintenance_schedule"), "schedule");
        for (size_t i = 0; i < json_array_size(machines); i++) {
            json_t *m = json_incref(json_array_get(machines, i));
            json_array_set_new(machines, i, complete_machine(sched, m));
        }
        json_decref(root);
    }
    return change(c, down ? "START_MAINTENANCE" : "STOP_MAINTENANCE",
                  down ? "start_maintenance" : "stop_maintenance",
                  json_pack("{s:o}", "machines", machines), "%zu machine(s) %s",
                  c->a->npos - 1, down ? "down" : "up");
}

static int cmd_maintenance(struct ctx *c)
{
    const char *sub = c->a->npos > 0 ? c->a->pos[0] : NULL;
    if (sub == NULL)
        return usage_error(c, "missing command: schedule, down, up or status");
    if (strcmp(sub, "schedule") == 0) {
        int rc = need_pos(c, 1, 0, 1, "");
        if (rc != 0)
            return rc;
        if (c->a->npos == 1)
            return show_view(c, &schedule_view);
        json_t *s = load_schedule(c, c->a->pos[1], &rc);
        if (s == NULL)
            return rc;
        return change(
            c, "UPDATE_MAINTENANCE_SCHEDULE", "update_maintenance_schedule",
            json_pack("{s:o}", "schedule", s), "maintenance schedule updated");
    }
    if (strcmp(sub, "down") == 0 || strcmp(sub, "up") == 0)
        return maint_machines(c, strcmp(sub, "down") == 0);
    if (strcmp(sub, "status") == 0) {
        int rc = need_pos(c, 1, 0, 0, "");
        return rc != 0 ? rc : show_view(c, &status_view);
    }
    return usage_error(c, "unknown maintenance command '%s'", sub);
}

/* ---- drain, deactivate, reactivate, teardown ---- */

static int cmd_drain(struct ctx *c)
{
    char err[512];
    int rc = need_pos(c, 0, 1, 1, "AGENT_ID");
    if (rc != 0)
        return rc;
    json_t *p = json_pack("{s:o}", "agent_id", octl_id_json(c->a->pos[0]));
    if (opt_set(c, OCTL_OPT_MAX_GRACE)) {
        int64_t ns;
        if (octl_duration(opt_val(c, OCTL_OPT_MAX_GRACE), &ns, err,
                          sizeof(err)) != 0) {
            json_decref(p);
            return usage_error(c, "--max_grace_period: %s", err);
        }
        json_object_set_new(p, "max_grace_period",
                            json_pack("{s:I,s:i}", "seconds",
                                      (json_int_t)(ns / 1000000000), "nanos",
                                      (int)(ns % 1000000000)));
    }
    if (opt_set(c, OCTL_OPT_MARK_GONE))
        json_object_set_new(p, "mark_gone", json_true());
    return change(c, "DRAIN_AGENT", "drain_agent", p, "agent %s draining",
                  c->a->pos[0]);
}

static const struct id_change deactivate_change = {
    "DEACTIVATE_AGENT", "deactivate_agent", "agent_id", "AGENT_ID", "agent",
    "deactivated",
};

static const struct id_change reactivate_change = {
    "REACTIVATE_AGENT", "reactivate_agent", "agent_id", "AGENT_ID", "agent",
    "reactivated",
};

static const struct id_change teardown_change = {
    "TEARDOWN",     "teardown",  "framework_id",
    "FRAMEWORK_ID", "framework", "torn down",
};

/* ---- logs ---- */

/* The first task named id in a GetTasks (borrowed), or NULL. */
static const json_t *find_task(const json_t *get_tasks, const char *id)
{
    static const char *const lists[] = {"tasks", "unreachable_tasks",
                                        "completed_tasks", "pending_tasks"};
    for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        size_t i;
        const json_t *t;
        json_array_foreach(json_object_get(get_tasks, lists[l]), i, t)
        {
            if (strcmp(jid(t, "task_id"), id) == 0)
                return t;
        }
    }
    return NULL;
}

/* The agent's address from its pid, "slave(1)@IP:PORT". */
static int agent_address(const json_t *agent, char *host, size_t hostlen,
                         uint16_t *port)
{
    const char *pid = jstr(agent, "pid");
    const char *at = strchr(pid, '@');
    const char *colon = at ? strrchr(at, ':') : NULL;
    if (at == NULL || colon == NULL || colon == at + 1 ||
        (size_t)(colon - at - 1) >= hostlen)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end != '\0' || p <= 0 || p > 65535)
        return -1;
    memcpy(host, at + 1, (size_t)(colon - at - 1));
    host[colon - at - 1] = '\0';
    *port = (uint16_t)p;
    return 0;
}

/* The sandbox directory of the task's executor in an agent's /state
 * (borrowed), or NULL. */
static const char *find_sandbox(const json_t *state, const char *fw_id,
                                const char *task_id)
{
    static const char *const fws[] = {"frameworks", "completed_frameworks"};
    static const char *const exs[] = {"executors", "completed_executors"};
    for (size_t a = 0; a < 2; a++) {
        size_t i;
        const json_t *f;
        json_array_foreach(json_object_get(state, fws[a]), i, f)
        {
            if (strcmp(jstr(f, "id"), fw_id) != 0)
                continue;
            for (size_t b = 0; b < 2; b++) {
                size_t k;
                const json_t *e;
                json_array_foreach(json_object_get(f, exs[b]), k, e)
                {
                    if (strcmp(jstr(e, "id"), task_id) == 0 &&
                        json_is_string(json_object_get(e, "directory")))
                        return jstr(e, "directory");
                }
            }
        }
    }
    return NULL;
}

/* Write s into out percent-encoded (RFC 3986 unreserved characters and '/'
 * kept), cut to fit outlen. */
static void url_encode(const char *s, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *s && o + 4 < outlen; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || strchr("-._~/", ch)) {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
}

/* Read what the sandbox file holds from *offset on and print it; returns
 * 0 (*offset moved past what was printed) or the exit status. */
static int read_file_once(struct ctx *c, const char *host, uint16_t port,
                          const char *path, long long *offset)
{
    char enc[4096 * 3 + 1], url[sizeof(enc) + 128];
    url_encode(path, enc, sizeof(enc));
    for (;;) {
        int n = snprintf(url, sizeof(url),
                         "/files/read?path=%s&offset=%lld&length=%d", enc,
                         *offset, OCTL_READ_CHUNK);
        if (n < 0 || (size_t)n >= sizeof(url)) {
            errorf(c, "sandbox path too long: %s", path);
            return OCTL_EXIT_USAGE;
        }
        struct octl_request rq = {
            .to_agent = true, .host = host, .port = port, .path = url};
        struct octl_reply rp;
        int rc = send_checked(c, &rq, &rp);
        if (rc != 0)
            return rc;
        json_t *j = json_loadb(rp.body, rp.len, 0, NULL);
        octl_reply_clear(&rp);
        const char *data = json_string_value(json_object_get(j, "data"));
        if (data == NULL) {
            json_decref(j);
            errorf(c, "the agent's /files/read answer has no data");
            return OCTL_EXIT_REFUSED;
        }
        /* Gap: /files/read writes bytes that are not UTF-8 as U+FFFD, so
         * such a file's offsets drift; logs are text. */
        size_t len = json_string_length(json_object_get(j, "data"));
        fwrite(data, 1, len, c->io->out);
        json_decref(j);
        *offset += (long long)len;
        if (len == 0)
            return 0;
    }
}

static int cmd_logs(struct ctx *c)
{
    char err[512];
    int rc = need_pos(c, 0, 1, 1, "TASK_ID");
    if (rc != 0)
        return rc;
    const char *task_id = c->a->pos[0];
    const char *file =
        opt_set(c, OCTL_OPT_FILE) ? opt_val(c, OCTL_OPT_FILE) : "stdout";
    if (file[0] == '\0' || file[0] == '/')
        return usage_error(c, "--file: a path inside the sandbox, e.g. "
                              "stderr");
    int64_t interval_ns = 1000000000;
    if (opt_set(c, OCTL_OPT_INTERVAL) &&
        (octl_duration(opt_val(c, OCTL_OPT_INTERVAL), &interval_ns, err,
                       sizeof(err)) != 0 ||
         interval_ns < 1000000))
        return usage_error(c, "--interval: %s",
                           interval_ns < 1000000 ? "at least 1ms" : err);
    json_t *root = NULL;
    rc = call_master(c, octl_call_new("GET_STATE", NULL, NULL), &root);
    if (rc != 0)
        return rc;
    const json_t *gs = json_object_get(root, "get_state");
    const json_t *task = find_task(json_object_get(gs, "get_tasks"), task_id);
    if (task == NULL) {
        errorf(c, "no task '%s' in the master's state", task_id);
        json_decref(root);
        return OCTL_EXIT_REFUSED;
    }
    char agent_id[256];
    snprintf(agent_id, sizeof(agent_id), "%s", jid(task, "agent_id"));
    const json_t *agent = NULL;
    size_t i;
    const json_t *ag;
    json_array_foreach(
        json_object_get(json_object_get(gs, "get_agents"), "agents"), i, ag)
    {
        if (strcmp(jid(json_object_get(ag, "agent_info"), "id"), agent_id) == 0)
            agent = ag;
    }
    char host[256];
    uint16_t port;
    if (agent == NULL || agent_address(agent, host, sizeof(host), &port)) {
        errorf(c, "task '%s' is on agent %s, which is not registered", task_id,
               agent_id[0] ? agent_id : "(none)");
        json_decref(root);
        return OCTL_EXIT_REFUSED;
    }
    char *fw_id = xstrdup(jid(task, "framework_id"));
    json_decref(root);

    struct octl_request rq = {
        .to_agent = true, .host = host, .port = port, .path = "/state"};
    struct octl_reply rp;
    rc = send_checked(c, &rq, &rp);
    if (rc != 0) {
        free(fw_id);
        return rc;
    }
    json_t *state = json_loadb(rp.body, rp.len, 0, NULL);
    octl_reply_clear(&rp);
    const char *dir = find_sandbox(state, fw_id, task_id);
    free(fw_id);
    if (dir == NULL) {
        errorf(c, "agent %s holds no sandbox of task '%s'", agent_id, task_id);
        json_decref(state);
        return OCTL_EXIT_REFUSED;
    }
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, file);
    json_decref(state);
    if (n < 0 || (size_t)n >= sizeof(path))
        return usage_error(c, "--file: path too long");

    long long offset = 0;
    for (;;) {
        rc = read_file_once(c, host, port, path, &offset);
        fflush(c->io->out);
        if (rc != 0 || !opt_set(c, OCTL_OPT_FOLLOW))
            return rc;
        if (c->io->stopped != NULL && c->io->stopped(c->io->arg))
            return 0;
        c->io->sleep_ms(c->io->arg, interval_ns / 1000000);
        if (c->io->stopped != NULL && c->io->stopped(c->io->arg))
            return 0;
    }
}

/* ---- state, health, version, flags, metrics ---- */

static void state_rows(struct ctx *c, struct octl_table *t, const json_t *gs)
{
    const json_t *ags = json_object_get(gs, "get_agents");
    const json_t *fws = json_object_get(gs, "get_frameworks");
    const json_t *tks = json_object_get(gs, "get_tasks");
    size_t i, active = 0;
    const json_t *x;
    json_array_foreach(json_object_get(ags, "agents"), i, x) active +=
        jtrue(x, "active");
    octl_table_set(t, 0, "agents");
    octl_table_setf(t, 1, "%zu (%zu active, %zu recovered)",
                    json_array_size(json_object_get(ags, "agents")), active,
                    json_array_size(json_object_get(ags, "recovered_agents")));
    octl_table_end_row(t);
    active = 0;
    json_array_foreach(json_object_get(fws, "frameworks"), i, x) active +=
        jtrue(x, "active");
    octl_table_set(t, 0, "frameworks");
    octl_table_setf(
        t, 1, "%zu (%zu active, %zu completed)",
        json_array_size(json_object_get(fws, "frameworks")), active,
        json_array_size(json_object_get(fws, "completed_frameworks")));
    octl_table_end_row(t);
    /* Tasks per state, in the order the states first appear. */
    json_t *by = json_object();
    static const char *const lists[] = {"pending_tasks", "tasks",
                                        "unreachable_tasks", "completed_tasks"};
    for (size_t l = 0; l < 4; l++)
        json_array_foreach(json_object_get(tks, lists[l]), i, x)
        {
            const char *st = jstr(x, "state");
            json_int_t n = json_integer_value(json_object_get(by, st));
            json_object_set_new(by, st, json_integer(n + 1));
        }
    const char *k;
    json_t *v;
    json_object_foreach(by, k, v)
    {
        octl_table_setf(t, 0, "tasks %s", k);
        octl_table_setf(t, 1, "%lld", (long long)json_integer_value(v));
        octl_table_end_row(t);
    }
    json_decref(by);
}

VIEW(state, "GET_STATE", "get_state", NULL, 0, "WHAT", "COUNT");

static int cmd_health(struct ctx *c)
{
    int rc = need_pos(c, 0, 0, 0, "");
    if (rc != 0)
        return rc;
    /* The exit status says whether the master is healthy, --json or not. */
    json_t *root = NULL;
    rc = call_master(c, octl_call_new("GET_HEALTH", NULL, NULL), &root);
    if (rc != 0)
        return rc;
    bool ok = jtrue(json_object_get(root, "get_health"), "healthy");
    if (c->a->json)
        print_json(c, root);
    else
        fprintf(c->io->out, "%s\n", ok ? "healthy" : "unhealthy");
    json_decref(root);
    return ok ? 0 : OCTL_EXIT_REFUSED;
}

static int cmd_version(struct ctx *c)
{
    int rc = need_pos(c, 0, 0, 0, "");
    if (rc != 0)
        return rc;
    json_t *root, *ans;
    rc = read_call(c, "GET_VERSION", "get_version", &root, &ans);
    if (rc == 0 && ans != NULL) {
        const json_t *vi = json_object_get(ans, "version_info");
        fprintf(c->io->out, "offerctl %s\nmaster   %s", OFFERD_VERSION,
                jstr(vi, "version"));
        if (json_object_get(vi, "build_date") != NULL)
            fprintf(c->io->out, " (built %s)", jstr(vi, "build_date"));
        fputc('\n', c->io->out);
    }
    json_decref(root);
    return rc;
}

static void flags_rows(struct ctx *c, struct octl_table *t, const json_t *f)
{
    octl_table_set(t, 0, jstr(f, "name"));
    octl_table_set(
        t, 1,
        json_is_string(json_object_get(f, "value")) ? jstr(f, "value") : NULL);
    octl_table_end_row(t);
}

VIEW(flags, "GET_FLAGS", "get_flags", "flags", 0, "FLAG", "VALUE");

/* The metrics whose names start with the PREFIX argument (if any). */
static void metrics_rows(struct ctx *c, struct octl_table *t, const json_t *m)
{
    const char *prefix = c->a->npos ? c->a->pos[0] : "";
    if (strncmp(jstr(m, "name"), prefix, strlen(prefix)) != 0)
        return;
    octl_table_set(t, 0, jstr(m, "name"));
    set_num(t, 1, m, "value");
    octl_table_end_row(t);
}

VIEW(metrics, "GET_METRICS", "get_metrics", "metrics", 1, "METRIC", "VALUE");

/* ---- The command table ---- */

static const struct octl_cmd commands[] = {
    {"agents", run_view, 0, "agents",
     "agents: state, allocated/total cpus, mem, disk, reserved roles", NULL,
     &agents_view},
    {"frameworks", run_view, OPT(OCTL_OPT_ALL), "frameworks [--all]",
     "frameworks: roles, state, allocated resources", NULL, &frameworks_view},
    {"tasks", run_view, OPT(OCTL_OPT_ALL), "tasks [--all]",
     "tasks not completed (--all: completed too)", NULL, &tasks_view},
    {"roles", run_view, 0, "roles",
     "roles: weight, frameworks, allocated resources", NULL, &roles_view},
    {"quota", cmd_quota,
     OPT(OCTL_OPT_GUARANTEE) | OPT(OCTL_OPT_LIMIT) | OPT(OCTL_OPT_FORCE),
     "quota\n"
     "  offerctl quota set ROLE [--guarantee=RESOURCES] [--limit=RESOURCES] "
     "[--force]\n"
     "  offerctl quota remove ROLE",
     "show, set or remove quota",
     "RESOURCES are scalars in Mesos's text form (cpus:2;mem:512) or a JSON\n"
     "array of Resource objects. set replaces the role's guarantees and\n"
     "limits; one left out is unset.",
     NULL},
    {"weights", cmd_weights, 0,
     "weights\n  offerctl weights set ROLE=WEIGHT...",
     "show or set role weights", NULL, NULL},
    {"reserve", cmd_reserve, OPT(OCTL_OPT_ROLE) | OPT(OCTL_OPT_PRINCIPAL),
     "reserve AGENT_ID RESOURCES [--role=ROLE] [--principal=P]",
     "reserve an agent's resources to a role",
     "RESOURCES: Mesos's text form, each entry reserved to the role it\n"
     "names (cpus(db):2) or to --role (--role=db cpus:2;mem:512); or a\n"
     "JSON array of Resource objects with their reservations, sent as\n"
     "given.",
     NULL},
    {"unreserve", cmd_unreserve, OPT(OCTL_OPT_ROLE) | OPT(OCTL_OPT_PRINCIPAL),
     "unreserve AGENT_ID RESOURCES [--role=ROLE] [--principal=P]",
     "undo a dynamic reservation",
     "RESOURCES as for reserve; the reservation must match the one made.",
     NULL},
    {"volumes", cmd_volumes,
     OPT(OCTL_OPT_ROLE) | OPT(OCTL_OPT_PRINCIPAL) | OPT(OCTL_OPT_ID) |
         OPT(OCTL_OPT_CONTAINER_PATH) | OPT(OCTL_OPT_MODE),
     "volumes\n"
     "  offerctl volumes create AGENT_ID DISK --id=ID --container_path=PATH "
     "[--role=ROLE] [--principal=P] [--mode=RW|RO]\n"
     "  offerctl volumes destroy AGENT_ID VOLUME_ID|JSON\n"
     "  offerctl volumes grow AGENT_ID VOLUME_ID SIZE\n"
     "  offerctl volumes shrink AGENT_ID VOLUME_ID SIZE",
     "list, create, destroy or resize persistent volumes",
     "DISK is reserved disk in the text form (disk(db):1024, or disk:1024\n"
     "with --role=db) or a JSON array of volumes. destroy finds the volume\n"
     "by its id on the agent, or takes a JSON array. grow adds SIZE MB of\n"
     "the disk reserved beside the volume (GROW_VOLUME); shrink gives SIZE\n"
     "MB of it back as reserved disk (SHRINK_VOLUME).",
     NULL},
    {"maintenance", cmd_maintenance, 0,
     "maintenance schedule [SCHEDULE]\n"
     "  offerctl maintenance down MACHINE...\n"
     "  offerctl maintenance up MACHINE...\n"
     "  offerctl maintenance status",
     "the maintenance schedule, machines down and up, status",
     "SCHEDULE is a mesos.v1.maintenance.Schedule in JSON: the text itself,\n"
     "a file, or - for stdin; it replaces the schedule ({\"windows\": []}\n"
     "clears it). MACHINE is HOST/IP; HOST or IP alone is completed from\n"
     "the schedule.",
     NULL},
    {"drain", cmd_drain, OPT(OCTL_OPT_MAX_GRACE) | OPT(OCTL_OPT_MARK_GONE),
     "drain AGENT_ID [--max_grace_period=DURATION] [--mark_gone]",
     "deactivate an agent and kill its tasks", NULL, NULL},
    {"deactivate", run_id_change, 0, "deactivate AGENT_ID",
     "stop offering an agent's resources; tasks keep running", NULL,
     &deactivate_change},
    {"reactivate", run_id_change, 0, "reactivate AGENT_ID",
     "undo drain or deactivate", NULL, &reactivate_change},
    {"teardown", run_id_change, 0, "teardown FRAMEWORK_ID",
     "remove a framework and kill its tasks", NULL, &teardown_change},
    {"logs", cmd_logs,
     OPT(OCTL_OPT_FILE) | OPT(OCTL_OPT_FOLLOW) | OPT(OCTL_OPT_INTERVAL),
     "logs TASK_ID [--file=stdout|stderr|PATH] [--follow] "
     "[--interval=DURATION]",
     "print (--follow: tail) a file of a task's sandbox",
     "The task's agent comes from the master's GET_STATE, its sandbox from\n"
     "the agent's /state; the file is read with /files/read. --follow polls\n"
     "for what is appended until Ctrl-C.",
     NULL},
    {"state", run_view, 0, "state",
     "a summary of GET_STATE (--json: all of it)", NULL, &state_view},
    {"health", cmd_health, 0, "health",
     "whether the master is healthy (exit 0) or not", NULL, NULL},
    {"version", cmd_version, 0, "version",
     "offerctl's and the master's "
     "versions",
     NULL, NULL},
    {"flags", run_view, 0, "flags", "the master's flags", NULL, &flags_view},
    {"metrics", run_view, 0, "metrics [PREFIX]",
     "the master's metrics, those starting with PREFIX", NULL, &metrics_view},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const char *octl_cmd_name(const struct octl_cmd *cmd)
{
    return cmd->name;
}

static const char global_help[] =
    "Global options:\n"
    "  --master=MASTER     the master (default $" OCTL_MASTER_ENV
    ", else " OCTL_DEFAULT_MASTER "):\n"
    "                      HOST:PORT, zk://HOST:PORT[,...]/PATH (the\n"
    "                      leader, found within --timeout) or\n"
    "                      file:///PATH holding either\n"
    "  --json              print the API's JSON answer instead of a table\n"
    "  --timeout=DURATION  per request (default 10secs)\n"
    "  --principal=NAME    authenticate as NAME (HTTP Basic; default\n"
    "                      $OFFERD_PRINCIPAL)\n"
    "  --secret=SECRET     its secret (default $OFFERD_SECRET)\n"
    "  --secret_file=PATH  read the secret from PATH instead\n"
    "  --help              this help; after a command, the command's\n"
    "\n"
    "Exit status: 0 done, 1 the master refused (its reason is printed),\n"
    "2 usage error, 3 the master could not be reached.\n";

void octl_usage(FILE *out)
{
    fprintf(out, "Usage: " OCTL_PROGRAM " [--master=MASTER] [--json] "
                 "COMMAND [ARGS] [OPTIONS]\n\n"
                 "Operate an offerd (Mesos-compatible) cluster through the "
                 "master's v1 operator API.\n\nCommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n%s\nRun '" OCTL_PROGRAM " COMMAND --help' for a "
            "command's arguments.\n",
            global_help);
}

static void cmd_usage(const struct octl_cmd *cmd, FILE *out)
{
    fprintf(out, "Usage: " OCTL_PROGRAM " %s\n\n%s.\n", cmd->synopsis,
            cmd->summary);
    if (cmd->details != NULL)
        fprintf(out, "\n%s\n", cmd->details);
    if (cmd->opts != 0) {
        fprintf(out, "\nOptions:\n");
        for (int o = 0; o < OCTL_OPT_COUNT; o++)
            if (cmd->opts & OPT(o)) {
                char name[64];
                snprintf(name, sizeof(name), "--%s%s", opt_defs[o].name,
                         opt_defs[o].has_value ? "=..." : "");
                fprintf(out, "  %-22s %s\n", name, opt_defs[o].help);
            }
    }
    fprintf(out, "\n%s", global_help);
}

/* ---- Parsing ---- */

int octl_parse_args(int argc, char *const *argv, const char *master_env,
                    struct octl_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    a->timeout_ms = 10000;
    const char *master = NULL;
    bool rest_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!rest_positional && strcmp(arg, "--") == 0) {
            rest_positional = true;
            continue;
        }
        if (!rest_positional && strncmp(arg, "--", 2) == 0) {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
            const char *val = eq ? eq + 1 : NULL;
#define IS(n) (nlen == strlen(n) && strncmp(name, n, nlen) == 0)
            if (IS("principal") || IS("secret") || IS("secret_file")) {
                if (val == NULL || *val == '\0') {
                    snprintf(err, errlen, "--%.*s needs a value: --%.*s=...",
                             (int)nlen, name, (int)nlen, name);
                    return -1;
                }
                if (IS("principal"))
                    a->principal = val;
                else if (IS("secret"))
                    a->secret = val;
                else
                    a->secret_file = val;
                continue;
            }
            if (IS("master") || IS("timeout")) {
                if (val == NULL) {
                    snprintf(err, errlen, "--%.*s needs a value: --%.*s=...",
                             (int)nlen, name, (int)nlen, name);
                    return -1;
                }
                if (IS("master")) {
                    master = val;
                } else {
                    int64_t ns;
                    char why[256];
                    if (octl_duration(val, &ns, why, sizeof(why)) != 0 ||
                        ns < 1000000 || ns / 1000000 > OCTL_MAX_TIMEOUT_MS) {
                        snprintf(err, errlen, "--timeout: %s",
                                 ns < 1000000 ? "between 1ms and 1hrs" : why);
                        return -1;
                    }
                    a->timeout_ms = ns / 1000000;
                }
                continue;
            }
            if (IS("json") || IS("help")) {
                if (val != NULL) {
                    snprintf(err, errlen, "--%.*s takes no value", (int)nlen,
                             name);
                    return -1;
                }
                if (IS("json"))
                    a->json = true;
                else
                    a->help = true;
                continue;
            }
            int o;
            for (o = 0; o < OCTL_OPT_COUNT; o++)
                if (IS(opt_defs[o].name))
                    break;
#undef IS
            if (o == OCTL_OPT_COUNT) {
                snprintf(err, errlen, "unknown option --%.*s", (int)nlen, name);
                return -1;
            }
            if (opt_defs[o].has_value && (val == NULL || *val == '\0')) {
                snprintf(err, errlen, "--%s needs a value: --%s=...",
                         opt_defs[o].name, opt_defs[o].name);
                return -1;
            }
            if (!opt_defs[o].has_value && val != NULL) {
                snprintf(err, errlen, "--%s takes no value", opt_defs[o].name);
                return -1;
            }
            if (a->opt[o] != NULL) {
                snprintf(err, errlen, "--%s given twice", opt_defs[o].name);
                return -1;
            }
            a->opt[o] = val ? val : "true";
            continue;
        }
        if (a->cmd == NULL && !rest_positional) {
            if (strcmp(arg, "help") == 0 && !a->help) {
                a->help = true;
                continue;
            }
            for (size_t k = 0; k < NCOMMANDS; k++)
                if (strcmp(arg, commands[k].name) == 0)
                    a->cmd = &commands[k];
            if (a->cmd == NULL) {
                snprintf(err, errlen, "unknown command '%s'", arg);
                return -1;
            }
            continue;
        }
        if (a->cmd == NULL) {
            snprintf(err, errlen, "unknown command '%s'", arg);
            return -1;
        }
        if (a->npos == OCTL_MAX_POS) {
            snprintf(err, errlen, "more than %d arguments", OCTL_MAX_POS);
            return -1;
        }
        a->pos[a->npos++] = arg;
    }
    if (a->help)
        return 0;
    if (a->cmd == NULL) {
        snprintf(err, errlen, "missing command");
        return -1;
    }
    /* --principal is global (who offerctl authenticates as) and, for the
     * commands that record one, the reservation's or volume's principal
     * too: the master requires them to be the same when it authenticates. */
    if (a->principal != NULL && (a->cmd->opts & OPT(OCTL_OPT_PRINCIPAL)))
        a->opt[OCTL_OPT_PRINCIPAL] = a->principal;
    for (int o = 0; o < OCTL_OPT_COUNT; o++)
        if (a->opt[o] != NULL && !(a->cmd->opts & OPT(o))) {
            snprintf(err, errlen, "%s does not take --%s", a->cmd->name,
                     opt_defs[o].name);
            return -1;
        }
    if (master == NULL)
        master = master_env != NULL && *master_env ? master_env
                                                   : OCTL_DEFAULT_MASTER;
    a->master = master;
    return 0;
}

int octl_run(const struct octl_args *a, const struct octl_io *io)
{
    struct ctx c = {.a = a, .io = io};
    if (a->help || a->cmd == NULL) {
        if (a->cmd != NULL)
            cmd_usage(a->cmd, io->out);
        else
            octl_usage(io->out);
        return OCTL_EXIT_OK;
    }
    return a->cmd->run(&c);
}
