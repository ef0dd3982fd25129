/*
 * Table-driven flags: parsing of the command line, the MESOS_* and OFFERD_*
 * environment and flag directories (Mesos packages' one file per flag),
 * value syntaxes (Mesos's durations and byte sizes), usage text and the
 * /flags JSON.
 */
#include "common/flags.h"

#include "common/errbuf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/mem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define ENV_PREFIX       "OFFERD_"
#define MESOS_ENV_PREFIX "MESOS_"
#define FLAGS_DIR_ARG    "--flags_dir"
/* Largest flag file read; a value is a line of text, a few KB at most even
 * for --resources in JSON, so anything bigger is a mistake. */
#define FLAG_FILE_MAX (64 * 1024)
/* Most entries read from one flag directory (or one attributes/ or
 * resources/ subdirectory). */
#define FLAGS_DIR_MAX_ENTRIES 1024

struct flags {
    const char *program;
    const char *summary;
    const struct flag_def *defs;
    size_t n;
    bool *set;      /* per row: got a value */
    char **strings; /* per row: owned copy of a FLAG_STRING value */
};

struct flags *flags_new(const char *program, const char *summary,
                        const struct flag_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (defs[i].name == NULL || defs[i].name[0] == '\0' ||
            defs[i].value == NULL) {
            log_error("flags: row %zu has no name or no storage", i);
            abort();
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(defs[i].name, defs[j].name) == 0) {
                log_error("flags: flag '%s' declared twice", defs[i].name);
                abort();
            }
        }
    }
    struct flags *f = xcalloc(1, sizeof(*f));
    f->program = program;
    f->summary = summary;
    f->defs = defs;
    f->n = n;
    f->set = xcalloc(n > 0 ? n : 1, sizeof(*f->set));
    f->strings = xcalloc(n > 0 ? n : 1, sizeof(*f->strings));
    return f;
}

void flags_free(struct flags *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->strings[i]);
    free(f->strings);
    free(f->set);
    free(f);
}

/* ---- Number-with-unit syntax shared by durations and byte sizes ---- */

struct unit {
    const char *suffix;
    uint64_t scale;
};

static const struct unit duration_units[] = {
    {"ns", 1ULL},
    {"us", 1000ULL},
    {"ms", 1000000ULL},
    {"secs", 1000000000ULL},
    {"mins", 60ULL * 1000000000ULL},
    {"hrs", 3600ULL * 1000000000ULL},
    {"days", 86400ULL * 1000000000ULL},
    {"weeks", 7ULL * 86400ULL * 1000000000ULL},
};

static const struct unit bytes_units[] = {
    {"B", 1ULL},        {"KB", 1ULL << 10}, {"MB", 1ULL << 20},
    {"GB", 1ULL << 30}, {"TB", 1ULL << 40},
};

/* Parse "<digits>[.<digits>]<unit>" into value * scale, at most max. */
static int parse_scaled(const char *text, const struct unit *units,
                        size_t nunits, uint64_t max, const char *what,
                        uint64_t *out, char *err, size_t errlen)
{
    const char *p = text;
    uint64_t whole = 0;
    size_t ndigits = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10) {
            errbuf_set(err, errlen, "%s '%s' is too large", what, text);
            return -1;
        }
        whole = whole * 10 + d;
        ndigits++;
        p++;
    }
    long double frac = 0;
    if (*p == '.') {
        long double place = 0.1L;
        p++;
        size_t nfrac = 0;
        while (*p >= '0' && *p <= '9') {
            frac += place * (long double)(*p - '0');
            place /= 10;
            nfrac++;
            p++;
        }
        if (nfrac == 0) {
            errbuf_set(err, errlen,
                       "invalid %s '%s': expected digits after '.'", what,
                       text);
            return -1;
        }
    }
    if (ndigits == 0) {
        errbuf_set(err, errlen, "invalid %s '%s': expected a number and a unit",
                   what, text);
        return -1;
    }
    const struct unit *u = NULL;
    for (size_t i = 0; i < nunits; i++) {
        if (strcmp(p, units[i].suffix) == 0) {
            u = &units[i];
            break;
        }
    }
    if (u == NULL) {
        char list[96];
        size_t used = 0;
        for (size_t i = 0; i < nunits; i++) {
            int w = snprintf(list + used, sizeof(list) - used, "%s%s",
                             i ? ", " : "", units[i].suffix);
            if (w < 0 || (size_t)w >= sizeof(list) - used)
                break;
            used += (size_t)w;
        }
        errbuf_set(err, errlen, "invalid %s '%s': unknown unit '%s' (use %s)",
                   what, text, p, list);
        return -1;
    }
    if (whole > max / u->scale) {
        errbuf_set(err, errlen, "%s '%s' is too large", what, text);
        return -1;
    }
    uint64_t value = whole * u->scale;
    uint64_t extra = (uint64_t)llroundl(frac * (long double)u->scale);
    if (extra > max - value) {
        errbuf_set(err, errlen, "%s '%s' is too large", what, text);
        return -1;
    }
    *out = value + extra;
    return 0;
}

int flags_parse_duration(const char *text, int64_t *out, char *err,
                         size_t errlen)
{
    uint64_t v;
    if (parse_scaled(text, duration_units,
                     sizeof(duration_units) / sizeof(duration_units[0]),
                     (uint64_t)INT64_MAX, "duration", &v, err, errlen) != 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int flags_parse_bytes(const char *text, uint64_t *out, char *err, size_t errlen)
{
    return parse_scaled(text, bytes_units,
                        sizeof(bytes_units) / sizeof(bytes_units[0]),
                        UINT64_MAX, "byte size", out, err, errlen);
}

/* Write value/scale with up to 9 fraction digits, zeros trimmed. */
static int format_scaled(uint64_t value, const struct unit *units,
                         size_t nunits, char *out, size_t outlen)
{
    const struct unit *u = &units[0];
    for (size_t i = 0; i < nunits; i++)
        if (value >= units[i].scale)
            u = &units[i];
    uint64_t whole = value / u->scale;
    uint64_t rem = value % u->scale;
    char frac[16];
    size_t nf = 0;
    while (rem != 0 && nf < 9) {
        /* rem < scale <= 2^40 or 6.05e14, so rem * 10 cannot overflow. */
        rem *= 10;
        frac[nf++] = (char)('0' + rem / u->scale);
        rem %= u->scale;
    }
    while (nf > 0 && frac[nf - 1] == '0')
        nf--;
    frac[nf] = '\0';
    int w = snprintf(out, outlen, "%" PRIu64 "%s%s%s", whole, nf ? "." : "",
                     frac, u->suffix);
    return (w < 0 || (size_t)w >= outlen) ? -1 : 0;
}

int flags_format_duration(int64_t ns, char *out, size_t outlen)
{
    if (ns < 0) {
        /* Flags never hold negative durations; format the magnitude. */
        if (outlen < 2)
            return -1;
        out[0] = '-';
        return format_scaled(
            ns == INT64_MIN ? (uint64_t)INT64_MAX + 1 : (uint64_t)-ns,
            duration_units, sizeof(duration_units) / sizeof(duration_units[0]),
            out + 1, outlen - 1);
    }
    return format_scaled((uint64_t)ns, duration_units,
                         sizeof(duration_units) / sizeof(duration_units[0]),
                         out, outlen);
}

int flags_format_bytes(uint64_t bytes, char *out, size_t outlen)
{
    return format_scaled(bytes, bytes_units,
                         sizeof(bytes_units) / sizeof(bytes_units[0]), out,
                         outlen);
}

/* ---- Parsing ---- */

static const char *type_name(enum flag_type t)
{
    switch (t) {
    case FLAG_STRING:
        return "string";
    case FLAG_INT:
        return "int";
    case FLAG_PORT:
        return "port";
    case FLAG_DOUBLE:
        return "double";
    case FLAG_BOOL:
        return "bool";
    case FLAG_DURATION:
        return "duration";
    case FLAG_BYTES:
        return "bytes";
    }
    return "?";
}

/* Parse text for row i and store it. source names where the value came from
 * for the error message ("--port", "OFFERD_PORT", "default of --port"). */
static int apply_value(struct flags *f, size_t i, const char *text,
                       const char *source, char *err, size_t errlen)
{
    const struct flag_def *d = &f->defs[i];
    char why[160];
    char *end;
    switch (d->type) {
    case FLAG_STRING:
        free(f->strings[i]);
        f->strings[i] = xstrdup(text);
        *(const char **)d->value = f->strings[i];
        break;
    case FLAG_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (text[0] == '\0' || *end != '\0' || isspace((unsigned char)*text)) {
            errbuf_set(err, errlen, "%s: invalid int '%s'", source, text);
            return -1;
        }
        if (errno == ERANGE) {
            errbuf_set(err, errlen, "%s: int '%s' is out of range", source,
                       text);
            return -1;
        }
        *(int64_t *)d->value = (int64_t)v;
        break;
    }
    case FLAG_PORT: {
        unsigned long v = 0;
        size_t k = 0;
        for (; text[k] >= '0' && text[k] <= '9' && k < 6; k++)
            v = v * 10 + (unsigned long)(text[k] - '0');
        if (k == 0 || text[k] != '\0' || v > 65535) {
            errbuf_set(err, errlen, "%s: invalid port '%s' (expected 0-65535)",
                       source, text);
            return -1;
        }
        *(uint16_t *)d->value = (uint16_t)v;
        break;
    }
    case FLAG_DOUBLE: {
        errno = 0;
        double v = strtod(text, &end);
        if (text[0] == '\0' || *end != '\0' || isspace((unsigned char)*text) ||
            !isfinite(v) || errno == ERANGE) {
            errbuf_set(err, errlen, "%s: invalid number '%s'", source, text);
            return -1;
        }
        *(double *)d->value = v;
        break;
    }
    case FLAG_BOOL:
        if (strcmp(text, "true") == 0) {
            *(bool *)d->value = true;
        } else if (strcmp(text, "false") == 0) {
            *(bool *)d->value = false;
        } else {
            errbuf_set(err, errlen,
                       "%s: invalid bool '%s' (expected true or "
                       "false)",
                       source, text);
            return -1;
        }
        break;
    case FLAG_DURATION: {
        int64_t v;
        if (flags_parse_duration(text, &v, why, sizeof(why)) != 0) {
            errbuf_set(err, errlen, "%s: %s", source, why);
            return -1;
        }
        *(int64_t *)d->value = v;
        break;
    }
    case FLAG_BYTES: {
        uint64_t v;
        if (flags_parse_bytes(text, &v, why, sizeof(why)) != 0) {
            errbuf_set(err, errlen, "%s: %s", source, why);
            return -1;
        }
        *(uint64_t *)d->value = v;
        break;
    }
    }
    f->set[i] = true;
    return 0;
}

static ssize_t find_row(const struct flags *f, const char *name, size_t len)
{
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->defs[i].name) == len &&
            strncmp(f->defs[i].name, name, len) == 0)
            return (ssize_t)i;
    return -1;
}

/* Row whose name matches text[0..len) ignoring case (environment names
 * are upper case: OFFERD_WORK_DIR, MESOS_work_dir both name work_dir). */
static ssize_t find_row_nocase(const struct flags *f, const char *text,
                               size_t len)
{
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->defs[i].name) == len &&
            strncasecmp(f->defs[i].name, text, len) == 0)
            return (ssize_t)i;
    return -1;
}

/* Apply a value that came without the command line's --name / --no-name
 * forms (an environment variable, a flag file): an empty value for a bool
 * means true, as in Mesos. */
static int apply_loose_value(struct flags *f, size_t i, const char *text,
                             const char *source, char *err, size_t errlen)
{
    if (f->defs[i].type == FLAG_BOOL && text[0] == '\0')
        text = "true";
    return apply_value(f, i, text, source, err, errlen);
}

/* Apply every prefix<NAME>=value of env that names a flag. Variables that
 * name no flag are skipped (the master and the agent share one
 * environment, and Mesos skips them too); with warn_unknown each is logged
 * once, so that a Mesos flag offerd lacks is never silently dropped. */
static int apply_env(struct flags *f, char *const *env, const char *prefix,
                     bool warn_unknown, char *err, size_t errlen)
{
    size_t plen = strlen(prefix);
    for (char *const *e = env; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, prefix, plen) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL)
            continue;
        const char *name = *e + plen;
        size_t nlen = (size_t)(eq - name);
        ssize_t row = find_row_nocase(f, name, nlen);
        if (row < 0) {
            if (warn_unknown) {
                char lower[128];
                size_t k = 0;
                for (; k < nlen && k < sizeof(lower) - 1; k++)
                    lower[k] = (char)tolower((unsigned char)name[k]);
                lower[k] = '\0';
                log_warn("ignoring %.*s: %s has no flag --%s", (int)(eq - *e),
                         *e, f->program, lower);
            }
            continue;
        }
        char source[160];
        snprintf(source, sizeof(source), "%.*s", (int)(eq - *e), *e);
        if (apply_loose_value(f, (size_t)row, eq + 1, source, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Read the flag file at path (at most FLAG_FILE_MAX bytes) without its
 * trailing newlines, as the shell's $(cat file) gives it. Returns a new
 * string (caller frees), or NULL with the reason in err. */
static char *read_flag_file(const char *path, char *err, size_t errlen)
{
    uint8_t *data = NULL;
    size_t len = 0;
    int r = fs_read(path, FLAG_FILE_MAX, &data, &len);
    if (r != 1) {
        errbuf_set(err, errlen, "%s: %s", path,
                   r == 0           ? "vanished while being read"
                   : errno == EFBIG ? "larger than 64KB"
                                    : strerror(errno));
        return NULL;
    }
    if (memchr(data, '\0', len) != NULL) {
        errbuf_set(err, errlen, "%s: contains a NUL byte", path);
        free(data);
        return NULL;
    }
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
        data[--len] = '\0';
    return (char *)data;
}

/* The sorted entries of dir without dot files (*names, caller frees with
 * free_names), or -1 with errno set. */
static int list_dir(const char *dir, char ***names, size_t *count)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    char **v = NULL;
    size_t n = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == FLAGS_DIR_MAX_ENTRIES) {
            errno = E2BIG;
            break;
        }
        v = xreallocarray(v, n + 1, sizeof(*v));
        v[n++] = xstrdup(de->d_name);
    }
    int saved = errno;
    closedir(d);
    if (saved != 0) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        errno = saved;
        return -1;
    }
    /* Sorted, so that which of two bad files is reported is stable. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *names = v;
    *count = n;
    return 0;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The value of a flag given as a directory (Mesos packages'
 * /etc/mesos-slave/attributes/ and resources/): "key:value;..." with one
 * key per non-empty file. Returns a new string, or NULL with err set. */
static char *read_keyed_dir(const char *dir, char *err, size_t errlen)
{
    char **names = NULL;
    size_t n = 0;
    if (list_dir(dir, &names, &n) != 0) {
        errbuf_set(err, errlen, "%s: %s", dir,
                   errno == E2BIG ? "more than 1024 entries" : strerror(errno));
        return NULL;
    }
    char *out = xstrdup("");
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", dir, names[i]);
        char *value = read_flag_file(path, err, errlen);
        free(path);
        if (value == NULL) {
            free(out);
            out = NULL;
            break;
        }
        if (value[0] != '\0') {
            char *joined =
                xasprintf("%s%s%s:%s", out, out[0] ? ";" : "", names[i], value);
            free(out);
            out = joined;
        }
        free(value);
    }
    free_names(names, n);
    return out;
}

/* Apply one entry of a flag directory: "<name>" holds the value of --name,
 * "?<name>" and "?no-<name>" set a bool, a directory "<name>/" holds
 * key:value files. seen marks the rows this directory already set. */
static int apply_dir_entry(struct flags *f, const char *dir, const char *entry,
                           bool *seen, char *err, size_t errlen)
{
    char *path = xasprintf("%s/%s", dir, entry);
    char *value = NULL;
    int rc = -1;
    bool query = entry[0] == '?';
    const char *name = query ? entry + 1 : entry;
    bool negated = false;
    ssize_t row = find_row(f, name, strlen(name));
    if (row < 0 && query && strncmp(name, "no-", 3) == 0) {
        row = find_row(f, name + 3, strlen(name + 3));
        negated = row >= 0;
    }
    if (row < 0) {
        errbuf_set(err, errlen, "%s: unknown flag '--%s' (%s has no such flag)",
                   path, negated ? name + 3 : name, f->program);
        goto out;
    }
    const struct flag_def *d = &f->defs[row];
    if (seen[row]) {
        errbuf_set(err, errlen, "%s: flag '--%s' given more than once in %s",
                   path, d->name, dir);
        goto out;
    }
    seen[row] = true;
    struct stat st;
    if (stat(path, &st) != 0) {
        errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (query) {
        if (d->type != FLAG_BOOL) {
            errbuf_set(err, errlen,
                       "%s: flag '--%s' is not a bool; write its value "
                       "into %s/%s instead",
                       path, d->name, dir, d->name);
            goto out;
        }
        rc = apply_value(f, (size_t)row, negated ? "false" : "true", path, err,
                         errlen);
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        if (d->type != FLAG_STRING) {
            errbuf_set(err, errlen,
                       "%s: a directory, but only a string flag "
                       "(attributes, resources) may be given as key files",
                       path);
            goto out;
        }
        value = read_keyed_dir(path, err, errlen);
    } else if (S_ISREG(st.st_mode)) {
        value = read_flag_file(path, err, errlen);
    } else {
        errbuf_set(err, errlen, "%s: not a regular file", path);
        goto out;
    }
    if (value != NULL)
        rc = apply_loose_value(f, (size_t)row, value, path, err, errlen);
out:
    free(value);
    free(path);
    return rc;
}

/* Apply every entry of the flag directory dir; a missing dir is fine (a
 * unit lists both Mesos's and offerd's, and a host has one or none). */
static int apply_flags_dir(struct flags *f, const char *dir, char *err,
                           size_t errlen)
{
    char **names = NULL;
    size_t n = 0;
    if (list_dir(dir, &names, &n) != 0) {
        if (errno == ENOENT)
            return 0;
        errbuf_set(err, errlen, "%s=%s: %s", FLAGS_DIR_ARG, dir,
                   errno == E2BIG ? "more than 1024 entries" : strerror(errno));
        return -1;
    }
    bool *seen = xcalloc(f->n > 0 ? f->n : 1, sizeof(*seen));
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = apply_dir_entry(f, dir, names[i], seen, err, errlen);
    free(seen);
    free_names(names, n);
    return rc;
}

/* Apply the flag directories of a --flags_dir=DIR[:DIR...] argument, in
 * order (a later directory's value wins). */
static int apply_flags_dirs(struct flags *f, const char *list, char *err,
                            size_t errlen)
{
    char *copy = xstrdup(list);
    int rc = 0;
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir != NULL && rc == 0;
         dir = strtok_r(NULL, ":", &save))
        rc = apply_flags_dir(f, dir, err, errlen);
    free(copy);
    return rc;
}

/* Whether arg is the built-in --flags_dir (with or without a value). */
static bool is_flags_dir_arg(const char *arg)
{
    size_t n = strlen(FLAGS_DIR_ARG);
    return strncmp(arg, FLAGS_DIR_ARG, n) == 0 &&
           (arg[n] == '\0' || arg[n] == '=');
}

enum flags_result flags_parse(struct flags *f, int argc, char *const *argv,
                              char *const *env, char *err, size_t errlen)
{
    char source[160];
    const char *flags_dirs = NULL;

    for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], "--help") == 0)
            return FLAGS_HELP;

    for (int a = 1; a < argc; a++) {
        if (!is_flags_dir_arg(argv[a]))
            continue;
        if (flags_dirs != NULL) {
            errbuf_set(err, errlen, "flag '%s' given more than once",
                       FLAGS_DIR_ARG);
            return FLAGS_ERROR;
        }
        if (argv[a][strlen(FLAGS_DIR_ARG)] != '=') {
            errbuf_set(err, errlen, "flag '%s' needs a value: %s=DIR[:DIR...]",
                       FLAGS_DIR_ARG, FLAGS_DIR_ARG);
            return FLAGS_ERROR;
        }
        flags_dirs = argv[a] + strlen(FLAGS_DIR_ARG) + 1;
    }

    for (size_t i = 0; i < f->n; i++) {
        if (f->defs[i].default_value == NULL)
            continue;
        snprintf(source, sizeof(source), "default of --%s", f->defs[i].name);
        if (apply_value(f, i, f->defs[i].default_value, source, err, errlen) !=
            0)
            return FLAGS_ERROR;
    }

    /* MESOS_ first, so that OFFERD_ wins whatever the order of env. */
    if (apply_env(f, env, MESOS_ENV_PREFIX, true, err, errlen) != 0 ||
        apply_env(f, env, ENV_PREFIX, false, err, errlen) != 0)
        return FLAGS_ERROR;

    /* Flag files stand for command-line flags placed before the real
     * ones (Mesos packages' wrapper turns them into arguments), so they
     * win over the environment and lose to the command line. */
    if (flags_dirs != NULL && apply_flags_dirs(f, flags_dirs, err, errlen) != 0)
        return FLAGS_ERROR;

    bool *seen = xcalloc(f->n > 0 ? f->n : 1, sizeof(*seen));
    enum flags_result rc = FLAGS_ERROR;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (is_flags_dir_arg(arg))
            continue;
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            errbuf_set(err, errlen,
                       "unexpected argument '%s' (flags are "
                       "--name=value)",
                       arg);
            goto out;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        ssize_t row = find_row(f, name, nlen);
        bool negated = false;
        if (row < 0 && nlen > 3 && strncmp(name, "no-", 3) == 0) {
            row = find_row(f, name + 3, nlen - 3);
            negated = row >= 0;
        }
        if (row < 0) {
            errbuf_set(err, errlen, "unknown flag '--%.*s'", (int)nlen, name);
            goto out;
        }
        const struct flag_def *d = &f->defs[row];
        if (seen[row]) {
            errbuf_set(err, errlen, "flag '--%s' given more than once",
                       d->name);
            goto out;
        }
        seen[row] = true;
        snprintf(source, sizeof(source), "--%s", d->name);
        if (negated) {
            if (d->type != FLAG_BOOL) {
                errbuf_set(err, errlen,
                           "flag '--%s' is not a bool and cannot "
                           "be negated with --no-%s",
                           d->name, d->name);
                goto out;
            }
            if (eq != NULL) {
                errbuf_set(err, errlen, "flag '--no-%s' takes no value",
                           d->name);
                goto out;
            }
            if (apply_value(f, (size_t)row, "false", source, err, errlen))
                goto out;
            continue;
        }
        if (eq == NULL) {
            if (d->type != FLAG_BOOL) {
                errbuf_set(err, errlen, "flag '--%s' needs a value: --%s=VALUE",
                           d->name, d->name);
                goto out;
            }
            if (apply_value(f, (size_t)row, "true", source, err, errlen))
                goto out;
            continue;
        }
        if (apply_value(f, (size_t)row, eq + 1, source, err, errlen) != 0)
            goto out;
    }
    rc = FLAGS_OK;
out:
    free(seen);
    return rc;
}

bool flags_is_set(const struct flags *f, const char *name)
{
    ssize_t row = find_row(f, name, strlen(name));
    return row >= 0 && f->set[row];
}

/* ---- Output ---- */

/* Text of row i's current value, or NULL when unset. buf holds it. */
static const char *value_text(const struct flags *f, size_t i, char *buf,
                              size_t buflen)
{
    const struct flag_def *d = &f->defs[i];
    int w = 0;
    if (!f->set[i])
        return NULL;
    switch (d->type) {
    case FLAG_STRING:
        return *(const char **)d->value;
    case FLAG_INT:
        w = snprintf(buf, buflen, "%" PRId64, *(int64_t *)d->value);
        break;
    case FLAG_PORT:
        w = snprintf(buf, buflen, "%u", (unsigned)*(uint16_t *)d->value);
        break;
    case FLAG_DOUBLE:
        w = snprintf(buf, buflen, "%.17g", *(double *)d->value);
        /* Prefer the shortest form that reads back the same. */
        for (int prec = 1; prec <= 17; prec++) {
            char tmp[64];
            snprintf(tmp, sizeof(tmp), "%.*g", prec, *(double *)d->value);
            if (strtod(tmp, NULL) == *(double *)d->value) {
                w = snprintf(buf, buflen, "%s", tmp);
                break;
            }
        }
        break;
    case FLAG_BOOL:
        return *(bool *)d->value ? "true" : "false";
    case FLAG_DURATION:
        w = flags_format_duration(*(int64_t *)d->value, buf, buflen);
        break;
    case FLAG_BYTES:
        w = flags_format_bytes(*(uint64_t *)d->value, buf, buflen);
        break;
    }
    if (w < 0 || (size_t)w >= buflen)
        return NULL;
    return buf;
}

json_t *flags_to_json(const struct flags *f)
{
    json_t *inner = json_object();
    for (size_t i = 0; i < f->n; i++) {
        char buf[64];
        const char *v = value_text(f, i, buf, sizeof(buf));
        if (v != NULL)
            json_object_set_new(inner, f->defs[i].name, json_string(v));
    }
    json_t *root = json_object();
    json_object_set_new(root, "flags", inner);
    return root;
}

/* Write text wrapped to width columns, each line indented by indent. */
static void write_wrapped(FILE *out, const char *text, int indent, int width)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        int room = width - indent;
        const char *line_end = p;
        const char *last_break = NULL;
        while (*line_end && *line_end != '\n' && line_end - p < room) {
            if (*line_end == ' ')
                last_break = line_end;
            line_end++;
        }
        if (*line_end && *line_end != '\n' && *line_end != ' ' &&
            last_break != NULL)
            line_end = last_break;
        fprintf(out, "%*s%.*s\n", indent, "", (int)(line_end - p), p);
        p = line_end;
        if (*p == '\n')
            p++;
    }
}

int flags_report(const struct flags *f, enum flags_result r, const char *err)
{
    switch (r) {
    case FLAGS_HELP:
        flags_usage(f, stdout);
        return 0;
    case FLAGS_ERROR:
        fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", f->program, err,
                f->program);
        return 1;
    case FLAGS_OK:
        break;
    }
    return -1;
}

void flags_usage(const struct flags *f, FILE *out)
{
    fprintf(out, "Usage: %s [options]\n\n", f->program);
    if (f->summary != NULL) {
        write_wrapped(out, f->summary, 0, 80);
        fprintf(out, "\n");
    }
    fprintf(out,
            "Every flag is also read from the environment as OFFERD_<NAME> "
            "or\nMESOS_<NAME> (OFFERD_ wins), and from flag files with\n"
            "--flags_dir; the command line wins over files, files over the\n"
            "environment.\n\n");
    for (size_t i = 0; i < f->n; i++) {
        const struct flag_def *d = &f->defs[i];
        if (d->type == FLAG_BOOL)
            fprintf(out, "  --[no-]%s", d->name);
        else
            fprintf(out, "  --%s=VALUE", d->name);
        fprintf(out, "  (%s", type_name(d->type));
        if (d->default_value != NULL)
            fprintf(out, "; default: %s",
                    d->default_value[0] ? d->default_value : "\"\"");
        fprintf(out, ")\n");
        if (d->help != NULL)
            write_wrapped(out, d->help, 6, 80);
    }
    fprintf(out, "  --flags_dir=DIR[:DIR...]\n");
    write_wrapped(out,
                  "Read flags from files, one per flag, as Mesos packages "
                  "lay them out (/etc/mesos-master): DIR/<name> holds the "
                  "value of --<name>, DIR/?<name> and DIR/?no-<name> set a "
                  "bool, DIR/attributes/<key> and DIR/resources/<key> hold "
                  "one key's value each. Missing directories are skipped; a "
                  "later directory wins.",
                  6, 80);
    fprintf(out, "  --help  print this text and exit\n");
}
