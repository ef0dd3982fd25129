/*
 * Tests for common/flags: value syntaxes (tables of good and bad values),
 * command-line forms, environment precedence (MESOS_ < OFFERD_), flag
 * directories (Mesos packages' one file per flag), --help, usage and
 * /flags JSON.
 */
#include "common/flags.h"

#include "common/fs.h"

#include "check_main.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A table with one flag of each type. */
struct vals {
    const char *s;
    int64_t i;
    uint16_t port;
    double d;
    bool b;
    int64_t dur;
    uint64_t bytes;
    const char *nodef;
};

static struct vals v;

static const struct flag_def defs[] = {
    {"name", FLAG_STRING, "dflt", "A string.", &v.s},
    {"count", FLAG_INT, "3", "An int.", &v.i},
    {"port", FLAG_PORT, "5050", "A port.", &v.port},
    {"ratio", FLAG_DOUBLE, "0.5", "A double.", &v.d},
    {"verbose", FLAG_BOOL, "false", "A bool.", &v.b},
    {"timeout", FLAG_DURATION, "15secs", "A duration.", &v.dur},
    {"limit", FLAG_BYTES, "4MB", "A byte size.", &v.bytes},
    {"hostname", FLAG_STRING, NULL, "No default.", &v.nodef},
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

/* Parse a NULL-terminated argument list (after argv[0]) and environment. */
static enum flags_result run(struct flags **fp, const char *const *args,
                             const char *const *env, char *err, size_t errlen)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"prog";
    for (; args != NULL && *args != NULL; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    memset(&v, 0, sizeof(v));
    *fp = flags_new("prog", "A test program.", defs, NDEFS);
    return flags_parse(*fp, argc, argv, (char *const *)env, err, errlen);
}

START_TEST(test_defaults)
{
    struct flags *f;
    char err[256] = "";
    ck_assert_int_eq(run(&f, NULL, NULL, err, sizeof(err)), FLAGS_OK);
    ck_assert_str_eq(v.s, "dflt");
    ck_assert_int_eq(v.i, 3);
    ck_assert_uint_eq(v.port, 5050);
    ck_assert(v.d == 0.5);
    ck_assert(!v.b);
    ck_assert_int_eq(v.dur, 15000000000LL);
    ck_assert_uint_eq(v.bytes, 4ULL << 20);
    ck_assert_ptr_null(v.nodef);
    ck_assert(flags_is_set(f, "port"));
    ck_assert(!flags_is_set(f, "hostname"));
    ck_assert(!flags_is_set(f, "nosuch"));
    flags_free(f);
}
END_TEST

START_TEST(test_good_values)
{
    static const struct {
        const char *arg;
        int field; /* 0 s, 1 i, 2 port, 3 d, 4 b, 5 dur, 6 bytes */
        double want;
        const char *want_s;
    } cases[] = {
        {"--name=", 0, 0, ""},
        {"--name=a=b c", 0, 0, "a=b c"},
        {"--count=-42", 1, -42, NULL},
        {"--count=0", 1, 0, NULL},
        {"--count=9223372036854775807", 1, 9223372036854775807.0, NULL},
        {"--port=0", 2, 0, NULL},
        {"--port=65535", 2, 65535, NULL},
        {"--ratio=1e3", 3, 1000, NULL},
        {"--ratio=-0.25", 3, -0.25, NULL},
        {"--verbose", 4, 1, NULL},
        {"--verbose=true", 4, 1, NULL},
        {"--verbose=false", 4, 0, NULL},
        {"--no-verbose", 4, 0, NULL},
        {"--timeout=10ns", 5, 10, NULL},
        {"--timeout=5us", 5, 5e3, NULL},
        {"--timeout=100ms", 5, 1e8, NULL},
        {"--timeout=5secs", 5, 5e9, NULL},
        {"--timeout=1.5secs", 5, 1.5e9, NULL},
        {"--timeout=2mins", 5, 120e9, NULL},
        {"--timeout=1hrs", 5, 3600e9, NULL},
        {"--timeout=1days", 5, 86400e9, NULL},
        {"--timeout=1weeks", 5, 604800e9, NULL},
        {"--timeout=0secs", 5, 0, NULL},
        {"--limit=10B", 6, 10, NULL},
        {"--limit=512KB", 6, 512.0 * 1024, NULL},
        {"--limit=64MB", 6, 64.0 * 1024 * 1024, NULL},
        {"--limit=2GB", 6, 2.0 * 1024 * 1024 * 1024, NULL},
        {"--limit=1TB", 6, 1024.0 * 1024 * 1024 * 1024, NULL},
        {"--limit=1.5KB", 6, 1536, NULL},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct flags *f;
        char err[256] = "";
        const char *args[] = {cases[c].arg, NULL};
        ck_assert_msg(run(&f, args, NULL, err, sizeof(err)) == FLAGS_OK,
                      "%s: %s", cases[c].arg, err);
        double got = 0;
        switch (cases[c].field) {
        case 0:
            ck_assert_str_eq(v.s, cases[c].want_s);
            break;
        case 1:
            got = (double)v.i;
            break;
        case 2:
            got = v.port;
            break;
        case 3:
            got = v.d;
            break;
        case 4:
            got = v.b;
            break;
        case 5:
            got = (double)v.dur;
            break;
        case 6:
            got = (double)v.bytes;
            break;
        }
        if (cases[c].field != 0)
            ck_assert_msg(got == cases[c].want, "%s: got %f", cases[c].arg,
                          got);
        flags_free(f);
    }
}
END_TEST

START_TEST(test_bad_values)
{
    static const struct {
        const char *arg;
        const char *reason_has;
    } cases[] = {
        {"--count=", "invalid int"},
        {"--count=12x", "invalid int"},
        {"--count= 1", "invalid int"},
        {"--count=99999999999999999999", "out of range"},
        {"--port=65536", "invalid port"},
        {"--port=-1", "invalid port"},
        {"--port=", "invalid port"},
        {"--port=80a", "invalid port"},
        {"--port=0000080", "invalid port"},
        {"--ratio=abc", "invalid number"},
        {"--ratio=inf", "invalid number"},
        {"--ratio=nan", "invalid number"},
        {"--ratio=", "invalid number"},
        {"--verbose=yes", "invalid bool"},
        {"--verbose=", "invalid bool"},
        {"--no-verbose=true", "takes no value"},
        {"--timeout=10", "unknown unit ''"},
        {"--timeout=10s", "unknown unit 's'"},
        {"--timeout=secs", "expected a number"},
        {"--timeout=-5secs", "expected a number"},
        {"--timeout=1.secs", "digits after '.'"},
        {"--timeout=100000000weeks", "too large"},
        {"--timeout=99999999999999999999ns", "too large"},
        {"--limit=10", "unknown unit ''"},
        {"--limit=10kb", "unknown unit 'kb'"},
        {"--limit=10 MB", "unknown unit ' MB'"},
        {"--limit=20000000TB", "too large"},
        {"--port", "needs a value: --port=VALUE"},
        {"--no-port", "not a bool"},
        {"--bogus", "unknown flag '--bogus'"},
        {"--bogus=1", "unknown flag '--bogus'"},
        {"--no-bogus", "unknown flag '--no-bogus'"},
        {"-port=1", "unexpected argument '-port=1'"},
        {"5050", "unexpected argument '5050'"},
        {"--", "unexpected argument '--'"},
        {"--bad\nname", "unknown flag '--bad?name'"},
        {"--port=8\r0", "invalid port '8?0'"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct flags *f;
        char err[256] = "";
        const char *args[] = {cases[c].arg, NULL};
        ck_assert_msg(run(&f, args, NULL, err, sizeof(err)) == FLAGS_ERROR,
                      "%s accepted", cases[c].arg);
        ck_assert_msg(strstr(err, cases[c].reason_has) != NULL,
                      "%s: reason \"%s\" lacks \"%s\"", cases[c].arg, err,
                      cases[c].reason_has);
        ck_assert_ptr_null(strchr(err, '\n'));
        flags_free(f);
    }
}
END_TEST

/* "--port 5050": the value is not taken from the next argument. */
START_TEST(test_space_separated_value_rejected)
{
    struct flags *f;
    char err[256] = "";
    const char *args[] = {"--port", "6060", NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--port=VALUE"));
    flags_free(f);
}
END_TEST

START_TEST(test_repeated_flag)
{
    struct flags *f;
    char err[256] = "";
    const char *args[] = {"--port=1", "--port=2", NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "more than once"));
    flags_free(f);
}
END_TEST

START_TEST(test_environment)
{
    struct flags *f;
    char err[256] = "";
    const char *env[] = {"OFFERD_PORT=7070",
                         "OFFERD_NAME=fromenv",
                         "OFFERD_VERBOSE=true",
                         "OFFERD_UNKNOWN=x",
                         "PORT=1",
                         "offerd_count=9",
                         "OFFERD_HOSTNAME=h",
                         NULL};
    ck_assert_int_eq(run(&f, NULL, env, err, sizeof(err)), FLAGS_OK);
    ck_assert_uint_eq(v.port, 7070);
    ck_assert_str_eq(v.s, "fromenv");
    ck_assert(v.b);
    ck_assert_int_eq(v.i, 3);
    ck_assert_str_eq(v.nodef, "h");
    ck_assert(flags_is_set(f, "hostname"));
    flags_free(f);
}
END_TEST

START_TEST(test_command_line_wins)
{
    struct flags *f;
    char err[256] = "";
    const char *env[] = {"OFFERD_PORT=7070", "OFFERD_VERBOSE=true", NULL};
    const char *args[] = {"--port=8080", "--no-verbose", NULL};
    ck_assert_int_eq(run(&f, args, env, err, sizeof(err)), FLAGS_OK);
    ck_assert_uint_eq(v.port, 8080);
    ck_assert(!v.b);
    flags_free(f);
}
END_TEST

START_TEST(test_bad_environment_value)
{
    struct flags *f;
    char err[256] = "";
    const char *env[] = {"OFFERD_PORT=http", NULL};
    ck_assert_int_eq(run(&f, NULL, env, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "OFFERD_PORT"));
    flags_free(f);
}
END_TEST

START_TEST(test_help)
{
    struct flags *f;
    char err[256] = "";
    const char *args[] = {"--bogus", "--help", NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_HELP);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    flags_usage(f, mem);
    fclose(mem);
    ck_assert_ptr_nonnull(strstr(text, "Usage: prog [options]"));
    ck_assert_ptr_nonnull(strstr(text, "--port=VALUE"));
    ck_assert_ptr_nonnull(strstr(text, "--[no-]verbose"));
    ck_assert_ptr_nonnull(strstr(text, "default: 15secs"));
    ck_assert_ptr_nonnull(strstr(text, "(duration"));
    ck_assert_ptr_nonnull(strstr(text, "A byte size."));
    ck_assert_ptr_nonnull(strstr(text, "--help"));
    /* Every line fits in 80 columns. */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        ck_assert_uint_le(strlen(line), 80);
    free(text);
    flags_free(f);
}
END_TEST

/* The text fd (1 or 2) received while flags_report ran; caller frees. */
static char *report_output(struct flags *f, enum flags_result r,
                           const char *reason, int fd, int *status)
{
    fflush(stdout);
    fflush(stderr);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(fd);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fileno(tmp), fd), 0);
    *status = flags_report(f, r, reason);
    fflush(stdout);
    fflush(stderr);
    ck_assert_int_ge(dup2(saved, fd), 0);
    close(saved);
    ck_assert_int_eq(fseek(tmp, 0, SEEK_END), 0);
    long n = ftell(tmp);
    ck_assert_int_ge(n, 0);
    char *text = calloc(1, (size_t)n + 1);
    rewind(tmp);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, tmp), (size_t)n);
    fclose(tmp);
    return text;
}

START_TEST(test_report)
{
    struct flags *f;
    char err[256] = "";
    const char *args[] = {"--count=x", NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_ERROR);
    int status;
    char *text = report_output(f, FLAGS_ERROR, err, 2, &status);
    ck_assert_int_eq(status, 1);
    char want[512];
    snprintf(want, sizeof(want), "prog: %s\nRun 'prog --help' for usage.\n",
             err);
    ck_assert_str_eq(text, want);
    free(text);
    text = report_output(f, FLAGS_ERROR, err, 1, &status);
    ck_assert_str_eq(text, ""); /* nothing on stdout */
    free(text);

    text = report_output(f, FLAGS_HELP, NULL, 1, &status);
    ck_assert_int_eq(status, 0);
    ck_assert_ptr_eq(strstr(text, "Usage: prog [options]"), text);
    free(text);
    text = report_output(f, FLAGS_HELP, NULL, 2, &status);
    ck_assert_str_eq(text, ""); /* nothing on stderr */
    free(text);

    for (int fd = 1; fd <= 2; fd++) {
        text = report_output(f, FLAGS_OK, NULL, fd, &status);
        ck_assert_int_eq(status, -1);
        ck_assert_str_eq(text, "");
        free(text);
    }
    flags_free(f);
}
END_TEST

START_TEST(test_usage_wraps_long_help)
{
    static const char *long_help =
        "This help text is deliberately long so that it must be wrapped "
        "over several lines of the usage output, each of them within the "
        "eighty columns of a terminal, without losing a word.";
    static const char *s;
    const struct flag_def one[] = {{"x", FLAG_STRING, NULL, long_help, &s}};
    struct flags *f = flags_new("p", NULL, one, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    flags_usage(f, mem);
    fclose(mem);
    ck_assert_ptr_nonnull(strstr(text, "without losing a word."));
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        ck_assert_uint_le(strlen(line), 80);
        lines++;
    }
    ck_assert_int_ge(lines, 5);
    free(text);
    flags_free(f);
}
END_TEST

START_TEST(test_json)
{
    struct flags *f;
    char err[256] = "";
    const char *args[] = {"--timeout=1500ms", "--limit=1536B", "--port=81",
                          "--ratio=0.1", NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_OK);
    json_t *j = flags_to_json(f);
    json_t *inner = json_object_get(j, "flags");
    ck_assert_ptr_nonnull(inner);
    ck_assert_str_eq(json_string_value(json_object_get(inner, "port")), "81");
    ck_assert_str_eq(json_string_value(json_object_get(inner, "name")), "dflt");
    ck_assert_str_eq(json_string_value(json_object_get(inner, "count")), "3");
    ck_assert_str_eq(json_string_value(json_object_get(inner, "ratio")), "0.1");
    ck_assert_str_eq(json_string_value(json_object_get(inner, "verbose")),
                     "false");
    ck_assert_str_eq(json_string_value(json_object_get(inner, "timeout")),
                     "1.5secs");
    ck_assert_str_eq(json_string_value(json_object_get(inner, "limit")),
                     "1.5KB");
    /* Unset flags are left out. */
    ck_assert_ptr_null(json_object_get(inner, "hostname"));
    json_decref(j);
    flags_free(f);
}
END_TEST

START_TEST(test_format_units)
{
    static const struct {
        int64_t ns;
        const char *want;
    } durs[] = {
        {0, "0ns"},
        {999, "999ns"},
        {1000, "1us"},
        {100000000, "100ms"},
        {15000000000LL, "15secs"},
        {90000000000LL, "1.5mins"},
        {3600000000000LL, "1hrs"},
        {86400000000000LL, "1days"},
        {604800000000000LL, "1weeks"},
        {1000000001, "1.000000001secs"},
    };
    for (size_t i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
        char buf[64];
        ck_assert_int_eq(flags_format_duration(durs[i].ns, buf, sizeof(buf)),
                         0);
        ck_assert_str_eq(buf, durs[i].want);
        int64_t back;
        ck_assert_int_eq(flags_parse_duration(buf, &back, NULL, 0), 0);
        ck_assert_int_eq(back, durs[i].ns);
    }
    static const struct {
        uint64_t b;
        const char *want;
    } sizes[] = {
        {0, "0B"},
        {1023, "1023B"},
        {1024, "1KB"},
        {4 << 20, "4MB"},
        {1ULL << 30, "1GB"},
        {1ULL << 40, "1TB"},
        {3ULL << 39, "1.5TB"},
    };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char buf[64];
        ck_assert_int_eq(flags_format_bytes(sizes[i].b, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, sizes[i].want);
    }
    char tiny[3];
    ck_assert_int_eq(flags_format_bytes(1024, tiny, sizeof(tiny)), -1);
}
END_TEST

START_TEST(test_mesos_environment)
{
    struct flags *f;
    char err[256] = "";
    /* MESOS_ names every flag too (any case after the prefix, as Mesos
     * allows); OFFERD_ wins whichever comes first in the environment. */
    const char *env[] = {"OFFERD_PORT=7070",     "MESOS_PORT=6060",
                         "MESOS_name=mesos",     "MESOS_TIMEOUT=2secs",
                         "OFFERD_TIMEOUT=3secs", "MESOS_NO_SUCH_FLAG=1",
                         "MESOS_VERBOSE=",       NULL};
    ck_assert_int_eq(run(&f, NULL, env, err, sizeof(err)), FLAGS_OK);
    ck_assert_uint_eq(v.port, 7070);
    ck_assert_str_eq(v.s, "mesos");
    ck_assert_int_eq(v.dur, 3000000000LL);
    ck_assert(v.b); /* an empty bool is true, as in Mesos */
    flags_free(f);

    const char *bad[] = {"MESOS_PORT=http", NULL};
    ck_assert_int_eq(run(&f, NULL, bad, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_str_eq(err, "MESOS_PORT: invalid port 'http' (expected 0-65535)");
    flags_free(f);
}
END_TEST

/* A temporary flag directory with the given files (name, content; a NULL
 * content makes a subdirectory). */
struct tmpdir {
    char path[64];
};

static void mkflags(struct tmpdir *t, const char *const files[][2], size_t n)
{
    snprintf(t->path, sizeof(t->path), "/tmp/offerd-flags-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t->path));
    for (size_t i = 0; i < n; i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", t->path, files[i][0]);
        if (files[i][1] == NULL)
            ck_assert_int_eq(mkdir(p, 0755), 0);
        else
            ck_assert_int_eq(
                fs_write_atomic(p, files[i][1], strlen(files[i][1])), 0);
    }
}

static void rmflags(struct tmpdir *t)
{
    ck_assert_int_eq(fs_remove_tree(t->path), 0);
}

START_TEST(test_flags_dir)
{
    static const char *const files[][2] = {
        {"port", "6060\n"}, {"name", "from file\n\n"}, {"?verbose", ""},
        {"hostname", ""},   {".hidden", "ignored"},    {"limit", "1MB"},
    };
    struct tmpdir t;
    mkflags(&t, files, sizeof(files) / sizeof(files[0]));
    char arg[128];
    snprintf(arg, sizeof(arg), "--flags_dir=%s", t.path);
    struct flags *f;
    char err[512] = "";
    /* Files win over the environment; the command line wins over files. */
    const char *env[] = {"OFFERD_PORT=7070", "OFFERD_COUNT=9", NULL};
    const char *args[] = {arg, "--limit=2MB", NULL};
    ck_assert_int_eq(run(&f, args, env, err, sizeof(err)), FLAGS_OK);
    ck_assert_uint_eq(v.port, 6060);
    ck_assert_str_eq(v.s, "from file");
    ck_assert(v.b);
    ck_assert_str_eq(v.nodef, "");
    ck_assert_int_eq(v.i, 9);
    ck_assert_uint_eq(v.bytes, 2u << 20);
    flags_free(f);
    rmflags(&t);
}
END_TEST

START_TEST(test_flags_dirs_later_wins)
{
    static const char *const mesos[][2] = {{"port", "6060"}, {"?verbose", ""}};
    static const char *const ours[][2] = {{"port", "7070"},
                                          {"?no-verbose", ""}};
    struct tmpdir a, b;
    mkflags(&a, mesos, 2);
    mkflags(&b, ours, 2);
    char arg[256];
    /* A missing directory is skipped: units list Mesos's and offerd's. */
    snprintf(arg, sizeof(arg), "--flags_dir=%s:/nonexistent/offerd:%s", a.path,
             b.path);
    struct flags *f;
    char err[512] = "";
    const char *args[] = {arg, NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_OK);
    ck_assert_uint_eq(v.port, 7070);
    ck_assert(!v.b);
    flags_free(f);
    rmflags(&a);
    rmflags(&b);
}
END_TEST

START_TEST(test_flags_dir_keyed_subdirectory)
{
    static const char *const files[][2] = {
        {"hostname", NULL},
        {"hostname/rack", "r1\n"},
        {"hostname/zone", "eu"},
        {"hostname/empty", ""},
    };
    struct tmpdir t;
    mkflags(&t, files, sizeof(files) / sizeof(files[0]));
    char arg[128];
    snprintf(arg, sizeof(arg), "--flags_dir=%s", t.path);
    struct flags *f;
    char err[512] = "";
    const char *args[] = {arg, NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_OK);
    ck_assert_str_eq(v.nodef, "rack:r1;zone:eu");
    flags_free(f);
    rmflags(&t);
}
END_TEST

/* Each bad directory is refused with one line naming the file. */
START_TEST(test_flags_dir_rejections)
{
    static const struct {
        const char *file, *content, *want;
    } cases[] = {
        {"registry_strict", "true",
         "/registry_strict: unknown flag '--registry_strict' (prog has no "
         "such flag)"},
        {"?no-quorum", "", "/?no-quorum: unknown flag '--no-quorum'"},
        {"?port", "", "/?port: flag '--port' is not a bool"},
        {"port", "http", "/port: invalid port 'http' (expected 0-65535)"},
        {"count", NULL, "/count: a directory, but only a string flag"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *const files[][2] = {{cases[i].file, cases[i].content}};
        struct tmpdir t;
        mkflags(&t, files, 1);
        char arg[128];
        snprintf(arg, sizeof(arg), "--flags_dir=%s", t.path);
        struct flags *f;
        char err[512] = "";
        const char *args[] = {arg, NULL};
        ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_ERROR);
        char want[512];
        snprintf(want, sizeof(want), "%s%s", t.path, cases[i].want);
        ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
                      "case %zu: got '%s', want '%s...'", i, err, want);
        ck_assert_ptr_null(strchr(err, '\n'));
        flags_free(f);
        rmflags(&t);
    }

    /* The same flag twice in one directory. */
    static const char *const twice[][2] = {{"?verbose", ""},
                                           {"?no-verbose", ""}};
    struct tmpdir t;
    mkflags(&t, twice, 2);
    char arg[128];
    snprintf(arg, sizeof(arg), "--flags_dir=%s", t.path);
    struct flags *f;
    char err[512] = "";
    const char *args[] = {arg, NULL};
    ck_assert_int_eq(run(&f, args, NULL, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "given more than once"));
    flags_free(f);
    rmflags(&t);
}
END_TEST

START_TEST(test_flags_dir_argument_errors)
{
    struct flags *f;
    char err[256] = "";
    const char *novalue[] = {"--flags_dir", NULL};
    ck_assert_int_eq(run(&f, novalue, NULL, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_str_eq(
        err, "flag '--flags_dir' needs a value: --flags_dir=DIR[:DIR...]");
    flags_free(f);
    const char *twice[] = {"--flags_dir=/a", "--flags_dir=/b", NULL};
    ck_assert_int_eq(run(&f, twice, NULL, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_str_eq(err, "flag '--flags_dir' given more than once");
    flags_free(f);
    /* A path that exists but is no directory is an error, not skipped. */
    const char *notdir[] = {"--flags_dir=/dev/null", NULL};
    ck_assert_int_eq(run(&f, notdir, NULL, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_str_eq(err, "--flags_dir=/dev/null: Not a directory");
    flags_free(f);
}
END_TEST

static Suite *flags_suite(void)
{
    Suite *s = suite_create("flags");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_good_values);
    tcase_add_test(tc, test_bad_values);
    tcase_add_test(tc, test_space_separated_value_rejected);
    tcase_add_test(tc, test_repeated_flag);
    tcase_add_test(tc, test_environment);
    tcase_add_test(tc, test_command_line_wins);
    tcase_add_test(tc, test_bad_environment_value);
    tcase_add_test(tc, test_mesos_environment);
    tcase_add_test(tc, test_flags_dir);
    tcase_add_test(tc, test_flags_dirs_later_wins);
    tcase_add_test(tc, test_flags_dir_keyed_subdirectory);
    tcase_add_test(tc, test_flags_dir_rejections);
    tcase_add_test(tc, test_flags_dir_argument_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("output");
    tcase_add_test(tc, test_help);
    tcase_add_test(tc, test_report);
    tcase_add_test(tc, test_usage_wraps_long_help);
    tcase_add_test(tc, test_json);
    tcase_add_test(tc, test_format_units);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(flags_suite)
