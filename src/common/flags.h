/*
 * Command-line flags, Mesos style, driven by a table each program declares.
 *
 * Syntax (as Mesos's stout flags):
 *   --name=value          every type; the '=' is required ("--port 5050" is
 *                         an error naming the flag, and "5050" would be an
 *                         unexpected argument)
 *   --name, --no-name     bools only: true, false
 *   --name=true|false     bools
 *   --help                print usage generated from the table; the caller
 *                         exits 0
 * Every flag can also come from the environment as OFFERD_<NAME> or, as in
 * Mesos, MESOS_<NAME> (name in any case after the prefix, e.g.
 * OFFERD_WORK_DIR); OFFERD_ wins over MESOS_. Variables that name no flag
 * are skipped (the master and the agent share one environment, and Mesos
 * skips them too); an unknown MESOS_ one is logged as a warning. An empty
 * value of a bool variable means true, as in Mesos.
 *
 * Built in for every program, like --help:
 *   --flags_dir=DIR[:DIR...]  flag files, one per flag, as Mesos packages
 *                         lay out /etc/mesos-master: DIR/<name> holds the
 *                         value of --name (trailing newlines dropped),
 *                         DIR/?<name> and DIR/?no-<name> set a bool, a
 *                         directory DIR/<name>/ of a string flag gives
 *                         "key:value;..." from its files (attributes/,
 *                         resources/). Dot files are skipped, missing
 *                         directories too; a later directory wins. A file
 *                         that names no flag, a bad value or a flag given
 *                         twice in one directory is an error naming the
 *                         file.
 *
 * Precedence, lowest first: default, MESOS_ variables, OFFERD_ variables,
 * flag directories, command line. An unknown flag, a repeated flag or a
 * bad value on the command line is an error whose one-line reason names
 * the flag.
 *
 * Value syntax per type:
 *   FLAG_STRING    anything, copied
 *   FLAG_INT       decimal int64, optional sign
 *   FLAG_PORT      decimal 0..65535
 *   FLAG_DOUBLE    a finite number (strtod syntax)
 *   FLAG_BOOL      true | false
 *   FLAG_DURATION  a non-negative number (fraction allowed) and a unit:
 *                  ns, us, ms, secs, mins, hrs, days, weeks ("100ms",
 *                  "1.5secs"); stored as int64 nanoseconds
 *   FLAG_BYTES     a non-negative number (fraction allowed) and a unit:
 *                  B, KB, MB, GB, TB, powers of 1024 ("512KB", "1.5GB");
 *                  stored as uint64 bytes
 *
 * flags_to_json gives the effective values for the /flags endpoint in
 * Mesos's shape, {"flags": {"name": "value", ...}}, every value a string
 * (durations and bytes in the unit form above, e.g. "15secs", "4MB").
 *
 * Gap: Mesos's "file://path" values (read the value from a file) are not
 * supported; such a value is taken literally.
 */
#ifndef OFFERD_COMMON_FLAGS_H
#define OFFERD_COMMON_FLAGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Value types; each names the C type its storage pointer points to. */
enum flag_type {
    FLAG_STRING,   /* const char *: borrowed from the flags object */
    FLAG_INT,      /* int64_t */
    FLAG_PORT,     /* uint16_t */
    FLAG_DOUBLE,   /* double */
    FLAG_BOOL,     /* bool */
    FLAG_DURATION, /* int64_t nanoseconds */
    FLAG_BYTES,    /* uint64_t bytes */
};

/* One row of a program's flag table. */
struct flag_def {
    const char *name;          /* without "--", e.g. "work_dir" */
    enum flag_type type;       /* how value is parsed and stored */
    const char *default_value; /* text, parsed as a command-line value would
                                  be; NULL: no default (a FLAG_STRING stays
                                  NULL, other types stay as the caller
                                  initialised them) and the flag is absent
                                  from /flags until set */
    const char *help;          /* one or more sentences for --help */
    void *value;               /* storage of the type named above; written
                                  by flags_parse */
};

/* Outcome of flags_parse. */
enum flags_result {
    FLAGS_OK = 0,     /* every value stored */
    FLAGS_HELP = 1,   /* --help given: print flags_usage, exit 0 */
    FLAGS_ERROR = -1, /* bad flag or value: reason in err, exit 1 */
};

struct flags;

/* Create a flags object over defs (n rows), which must outlive it, as must
 * the storage the rows point to. program and summary head the usage text
 * ("Usage: <program> [options]", then summary); both are borrowed. A table
 * with a repeated or empty name is a bug and aborts. */
struct flags *flags_new(const char *program, const char *summary,
                        const struct flag_def *defs, size_t n);

/* Free the flags object and the strings it stored for FLAG_STRING flags
 * (pointers to them in the caller's storage are dead afterwards); NULL is
 * ignored. */
void flags_free(struct flags *f);

/* Apply defaults, then the environment env (a NULL-terminated "NAME=value"
 * array such as environ; NULL reads no environment), then argv[1..argc-1].
 * On FLAGS_ERROR err holds a one-line reason and storage may be partly
 * written; parse at most once per flags object. */
enum flags_result flags_parse(struct flags *f, int argc, char *const *argv,
                              char *const *env, char *err, size_t errlen);

/* What a program's main() does with the outcome r of parsing f: for
 * FLAGS_HELP write the usage to stdout and return 0; for FLAGS_ERROR write
 * "<program>: <err>" and "Run '<program> --help' for usage." to stderr and
 * return 1; for FLAGS_OK write nothing and return -1 (carry on). The
 * return is the exit status for main() to return after freeing f. */
int flags_report(const struct flags *f, enum flags_result r, const char *err);

/* True when the flag got a value from its default, the environment or the
 * command line. Unknown names are false. */
bool flags_is_set(const struct flags *f, const char *name);

/* Write the usage text: the header, then every flag with its value form,
 * default and help text wrapped to 80 columns. */
void flags_usage(const struct flags *f, FILE *out);

/* Effective values as {"flags": {"name": "value", ...}} (flags without a
 * value left out). New reference; the caller json_decref's it. */
json_t *flags_to_json(const struct flags *f);

/* Parse helpers, also used by flags_parse; each returns 0 and writes *out,
 * or -1 with a one-line reason in err (out untouched). */
int flags_parse_duration(const char *text, int64_t *out, char *err,
                         size_t errlen);
int flags_parse_bytes(const char *text, uint64_t *out, char *err,
                      size_t errlen);

/* Format a duration (ns) or a byte count the way /flags shows them, in the
 * largest unit not above the value, with up to 9 significant fraction
 * digits: "15secs", "1.5secs", "100ms", "0ns"; "4MB", "1.5KB", "10B".
 * Returns 0, or -1 when out (outlen bytes) is too small. */
int flags_format_duration(int64_t ns, char *out, size_t outlen);
int flags_format_bytes(uint64_t bytes, char *out, size_t outlen);

#endif
