/*
 * offerctl_build: operator Call pieces from offerctl's command line; see
 * offerctl_build.h. Resources go through offerd's own parsers
 * (common/resources.h, common/resources_pb.h) so that offerctl accepts
 * exactly what --resources and /reserve accept, and the JSON it sends is
 * what res_to_pb writes.
 */
#include "cli/offerctl_build.h"

#include "common/flags.h"
#include "common/mem.h"
#include "common/resources.h"
#include "common/resources_pb.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *octl_call_new(const char *type, const char *field, json_t *payload)
{
    json_t *c = json_object();
    json_object_set_new(c, "type", json_string(type));
    if (payload != NULL)
        json_object_set_new(c, field, payload);
    return c;
}

json_t *octl_id_json(const char *id)
{
    return json_pack("{s:s}", "value", id);
}

static bool is_json_array_text(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    return *text == '[';
}

/* Parse a JSON array given on the command line, checked as /reserve checks
 * resources; the parsed JSON is returned as given. */
static json_t *resources_as_given(const char *text, char *err, size_t errlen)
{
    res_list l = RES_LIST_INIT;
    if (res_list_from_json(text, &l, err, errlen) != 0)
        return NULL;
    res_list_clear(&l);
    return json_loads(text, 0, NULL);
}

/* Parse text and reserve each entry dynamically; *l (OUT) on success. */
static int reserve_text(const char *text, const char *role,
                        const char *principal, res_list *l, char *err,
                        size_t errlen)
{
    char why[256];
    if (role != NULL && res_role_validate(role, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--role: %s", why);
        return -1;
    }
    if (role != NULL && strcmp(role, "*") == 0) {
        snprintf(err, errlen, "--role: cannot reserve to '*'");
        return -1;
    }
    res_list_init(l);
    if (res_parse_text(text, NULL, l, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "bad resources '%s': %s", text, why);
        return -1;
    }
    if (res_list_is_empty(l)) {
        snprintf(err, errlen, "no resources in '%s'", text);
        return -1;
    }
    for (uint32_t i = 0; i < l->n; i++) {
        struct resource *r = &l->v[i];
        if (r->nresv > 0) {
            /* "cpus(db):2": the text form's static reservation names the
             * role to reserve to. */
            r->resv[0].type = RES_RESV_DYNAMIC;
            free(r->resv[0].principal);
            r->resv[0].principal = principal ? xstrdup(principal) : NULL;
        } else if (role != NULL) {
            res_push_reservation(r, RES_RESV_DYNAMIC, role, principal, NULL, 0);
        } else {
            snprintf(err, errlen,
                     "%s: no role to reserve to: give --role=ROLE or "
                     "write %s(ROLE):...",
                     r->name, r->name);
            res_list_clear(l);
            return -1;
        }
    }
    return 0;
}

json_t *octl_reserved_resources(const char *text, const char *role,
                                const char *principal, char *err, size_t errlen)
{
    if (is_json_array_text(text)) {
        if (role != NULL || principal != NULL) {
            snprintf(err, errlen,
                     "--role and --principal do not apply to JSON "
                     "resources (write the reservations in the JSON)");
            return NULL;
        }
        return resources_as_given(text, err, errlen);
    }
    res_list l;
    if (reserve_text(text, role, principal, &l, err, errlen) != 0)
        return NULL;
    json_t *arr = res_list_to_json(&l);
    res_list_clear(&l);
    return arr;
}

json_t *octl_volume_resources(const char *text, const char *role,
                              const char *principal, const char *id,
                              const char *container_path, const char *mode,
                              char *err, size_t errlen)
{
    if (is_json_array_text(text)) {
        if (role || principal || id || container_path || mode) {
            snprintf(err, errlen,
                     "--role, --principal, --id, --container_path and "
                     "--mode do not apply to JSON volumes");
            return NULL;
        }
        return resources_as_given(text, err, errlen);
    }
    if (id == NULL || container_path == NULL) {
        snprintf(err, errlen,
                 "a volume needs --id=ID and "
                 "--container_path=PATH");
        return NULL;
    }
    if (mode != NULL && strcmp(mode, "RW") != 0 && strcmp(mode, "RO") != 0) {
        snprintf(err, errlen, "--mode: expected RW or RO, got '%s'", mode);
        return NULL;
    }
    res_list l;
    if (reserve_text(text, role, principal, &l, err, errlen) != 0)
        return NULL;
    if (l.n != 1 || strcmp(l.v[0].name, "disk") != 0 ||
        l.v[0].type != RES_SCALAR) {
        snprintf(err, errlen, "a volume is one disk resource, e.g. disk:1024");
        res_list_clear(&l);
        return NULL;
    }
    json_t *arr = res_list_to_json(&l);
    res_list_clear(&l);
    json_t *persistence = json_pack("{s:s}", "id", id);
    if (principal != NULL)
        json_object_set_new(persistence, "principal", json_string(principal));
    json_t *disk =
        json_pack("{s:o,s:{s:s,s:s}}", "persistence", persistence, "volume",
                  "container_path", container_path, "mode", mode ? mode : "RW");
    json_object_set_new(json_array_get(arr, 0), "disk", disk);
    return arr;
}

json_t *octl_quantities(const char *text, char *err, size_t errlen)
{
    res_list l = RES_LIST_INIT;
    char why[256];
    if (res_list_parse(text, NULL, &l, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "bad resources '%s': %s", text, why);
        return NULL;
    }
    json_t *map = json_object();
    for (uint32_t i = 0; i < l.n; i++) {
        const struct resource *r = &l.v[i];
        if (r->type != RES_SCALAR) {
            snprintf(err, errlen, "%s: quota takes scalar resources only",
                     r->name);
            json_decref(map);
            res_list_clear(&l);
            return NULL;
        }
        json_t *have = json_object_get(map, r->name);
        int64_t milli = r->scalar;
        if (have != NULL)
            milli += (int64_t)llround(
                json_number_value(json_object_get(have, "value")) * RES_SCALE);
        json_object_set_new(
            map, r->name,
            json_pack("{s:f}", "value", res_scalar_to_double(milli)));
    }
    res_list_clear(&l);
    if (json_object_size(map) == 0) {
        snprintf(err, errlen, "no resources in '%s'", text);
        json_decref(map);
        return NULL;
    }
    return map;
}

json_t *octl_weight_info(const char *text, char *err, size_t errlen)
{
    const char *eq = strchr(text, '=');
    if (eq == NULL || eq == text) {
        snprintf(err, errlen, "expected ROLE=WEIGHT, got '%s'", text);
        return NULL;
    }
    char role[256];
    size_t rlen = (size_t)(eq - text);
    if (rlen >= sizeof(role)) {
        snprintf(err, errlen, "role too long in '%s'", text);
        return NULL;
    }
    memcpy(role, text, rlen);
    role[rlen] = '\0';
    char why[256];
    if (res_role_validate(role, why, sizeof(why)) != 0 ||
        strcmp(role, "*") == 0) {
        snprintf(err, errlen, "bad role '%s': %s", role,
                 strcmp(role, "*") == 0 ? "'*' has no weight" : why);
        return NULL;
    }
    char *end;
    double w = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || !isfinite(w) || w <= 0) {
        snprintf(err, errlen, "bad weight in '%s': a positive number", text);
        return NULL;
    }
    return json_pack("{s:f,s:s}", "weight", w, "role", role);
}

json_t *octl_machine_id(const char *text, char *err, size_t errlen)
{
    const char *slash = strchr(text, '/');
    struct in_addr a;
    if (text[0] == '\0' || (slash != NULL && (slash == text || !slash[1]))) {
        snprintf(err, errlen,
                 "expected a machine as HOST/IP, HOST or IP, "
                 "got '%s'",
                 text);
        return NULL;
    }
    if (slash == NULL) {
        if (inet_pton(AF_INET, text, &a) == 1)
            return json_pack("{s:s}", "ip", text);
        return json_pack("{s:s}", "hostname", text);
    }
    if (inet_pton(AF_INET, slash + 1, &a) != 1) {
        snprintf(err, errlen, "bad IPv4 address in machine '%s'", text);
        return NULL;
    }
    return json_pack("{s:s%,s:s}", "hostname", text, (size_t)(slash - text),
                     "ip", slash + 1);
}

int octl_duration(const char *text, int64_t *ns, char *err, size_t errlen)
{
    return flags_parse_duration(text, ns, err, errlen);
}

/* Append "sep name:value" to a growing string. */
static void append(char **s, const char *piece)
{
    size_t a = strlen(*s), b = strlen(piece);
    *s = xrealloc(*s, a + b + 2);
    if (a > 0)
        (*s)[a++] = ';';
    memcpy(*s + a, piece, b + 1);
}

char *octl_resources_text(const json_t *arr)
{
    char *s = xstrdup("");
    json_t *names = json_object(); /* name -> summed scalar, in order */
    size_t i;
    const json_t *r;
    if (!json_is_array(arr)) {
        json_decref(names);
        return s;
    }
    json_array_foreach(arr, i, r)
    {
        const char *n = json_string_value(json_object_get(r, "name"));
        const json_t *v =
            json_object_get(json_object_get(r, "scalar"), "value");
        if (n == NULL)
            continue;
        if (json_is_number(v)) {
            json_t *have = json_object_get(names, n);
            double sum = (json_is_number(have) ? json_number_value(have) : 0) +
                         json_number_value(v);
            json_object_set_new(names, n, json_real(sum));
            continue;
        }
        const json_t *ranges =
            json_object_get(json_object_get(r, "ranges"), "range");
        if (json_is_array(ranges)) {
            char buf[512] = "";
            size_t k, used = 0;
            const json_t *g;
            json_array_foreach(ranges, k, g)
            {
                int w = snprintf(
                    buf + used, sizeof(buf) - used, "%s%lld-%lld", k ? "," : "",
                    (long long)json_integer_value(json_object_get(g, "begin")),
                    (long long)json_integer_value(json_object_get(g, "end")));
                if (w < 0 || (size_t)w >= sizeof(buf) - used)
                    break;
                used += (size_t)w;
            }
            json_object_set_new(names, n, json_sprintf("[%s]", buf));
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(names, k, v)
    {
        char piece[600], num[64];
        double d = json_number_value(v);
        snprintf(piece, sizeof(piece), "%s:%s", k,
                 json_is_string(v)
                     ? json_string_value(v)
                     : (snprintf(num, sizeof(num), "%.3f", d), num));
        /* Trim trailing zeros of the scalar. */
        if (!json_is_string(v)) {
            char *e = piece + strlen(piece) - 1;
            while (*e == '0')
                *e-- = '\0';
            if (*e == '.')
                *e = '\0';
        }
        append(&s, piece);
    }
    json_decref(names);
    return s;
}

char *octl_quantities_text(const json_t *map)
{
    char *s = xstrdup("");
    const char *k;
    const json_t *v;
    if (!json_is_object(map))
        return s;
    json_object_foreach((json_t *)map, k, v)
    {
        char piece[300], num[64];
        snprintf(num, sizeof(num), "%.3f",
                 json_number_value(json_object_get(v, "value")));
        char *e = num + strlen(num) - 1;
        while (*e == '0')
            *e-- = '\0';
        if (*e == '.')
            *e = '\0';
        snprintf(piece, sizeof(piece), "%s:%s", k, num);
        append(&s, piece);
    }
    return s;
}
