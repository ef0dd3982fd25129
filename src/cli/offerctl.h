/*
 * offerctl: the operator command line over the master's v1 operator API
 * (POST /api/v1, JSON) and the agents' /files endpoints.
 *
 * The program is three steps, each testable alone:
 *  1. octl_parse_args turns argv into a struct octl_args (a usage error is
 *     a one-line reason, exit status OCTL_EXIT_USAGE);
 *  2. octl_run runs the command: it builds the operator Calls
 *     (offerctl_build.h), sends them through the caller's struct octl_io
 *     and prints the answer, as a table (offerctl_table.h) or, with --json,
 *     as the API wrote it;
 *  3. main_offerctl.c resolves --master, wires octl_io to the HTTP client
 *     (offerctl_http.h) and returns octl_run's exit status.
 * Tests give octl_run a fake octl_io that answers from canned replies.
 *
 * Exit status: 0 done; 1 the master (or agent) refused, its one-line reason
 * printed; 2 usage error; 3 the master (or agent) could not be reached.
 * Every error is one line on stderr, "offerctl: <reason>".
 */
#ifndef OFFERD_CLI_OFFERCTL_H
#define OFFERD_CLI_OFFERCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OCTL_PROGRAM "offerctl"

/* Exit statuses. */
enum octl_exit {
    OCTL_EXIT_OK = 0,          /* done (also --help) */
    OCTL_EXIT_REFUSED = 1,     /* the master or agent answered an error */
    OCTL_EXIT_USAGE = 2,       /* bad command line */
    OCTL_EXIT_UNREACHABLE = 3, /* no answer from the master or agent */
};

/* Default master, and the environment variable that overrides it. */
#define OCTL_DEFAULT_MASTER "127.0.0.1:5050"
#define OCTL_MASTER_ENV     "OFFERD_MASTER"

/* Most positional arguments one command takes. */
#define OCTL_MAX_POS 32

/* Options a command may take (bit numbers in struct octl_cmd's mask). */
enum octl_opt {
    OCTL_OPT_ALL,            /* --all: completed frameworks and tasks too */
    OCTL_OPT_ROLE,           /* --role=ROLE */
    OCTL_OPT_PRINCIPAL,      /* --principal=P */
    OCTL_OPT_FORCE,          /* --force */
    OCTL_OPT_GUARANTEE,      /* --guarantee=RESOURCES */
    OCTL_OPT_LIMIT,          /* --limit=RESOURCES */
    OCTL_OPT_ID,             /* --id=PERSISTENCE_ID */
    OCTL_OPT_CONTAINER_PATH, /* --container_path=PATH */
    OCTL_OPT_MODE,           /* --mode=RW|RO */
    OCTL_OPT_MAX_GRACE,      /* --max_grace_period=DURATION */
    OCTL_OPT_MARK_GONE,      /* --mark_gone */
    OCTL_OPT_FILE,           /* --file=stdout|stderr|NAME */
    OCTL_OPT_FOLLOW,         /* --follow */
    OCTL_OPT_INTERVAL,       /* --interval=DURATION */
    OCTL_OPT_COUNT,
};

struct octl_cmd;

/* A parsed command line. Strings are borrowed from argv / the environment. */
struct octl_args {
    const struct octl_cmd *cmd;    /* NULL: no command (top-level --help) */
    const char *master;            /* --master, OFFERD_MASTER or the default */
    bool json;                     /* --json */
    bool help;                     /* --help */
    int64_t timeout_ms;            /* --timeout, per request; default 10 s */
    const char *principal;         /* --principal; NULL: $OFFERD_PRINCIPAL */
    const char *secret;            /* --secret; NULL: see secret_file */
    const char *secret_file;       /* --secret_file; NULL: $OFFERD_SECRET */
    const char *pos[OCTL_MAX_POS]; /* positionals after the command */
    size_t npos;
    const char *opt[OCTL_OPT_COUNT]; /* value, "true" for flags; NULL unset */
};

/*
 * Parse argv[1..argc-1]: global options (--master=, --json, --timeout=,
 * --help) anywhere, the command, then its arguments and options, all in
 * --name=value form (a flag option is --name). master_env is the value of
 * OFFERD_MASTER or NULL. Returns 0 with *a filled (OUT), or -1 with a
 * one-line reason in err. The master text is kept as given (main turns it
 * into an address: cli/master_addr.h).
 */
int octl_parse_args(int argc, char *const *argv, const char *master_env,
                    struct octl_args *a, char *err, size_t errlen);

/* One HTTP request of a command; every pointer is borrowed for the call. */
struct octl_request {
    bool to_agent;    /* false: the master; true: host and port below */
    const char *host; /* to_agent: numeric address of the agent */
    uint16_t port;    /* to_agent: its port */
    bool post;        /* POST body as application/json, else GET */
    const char *path; /* with the query string */
    const char *body; /* POST only, NUL-terminated JSON */
};

/* Its answer. */
struct octl_reply {
    int status; /* HTTP status; 0: no answer (error says why) */
    char *body; /* malloc'd, NUL-terminated (never NULL once filled); for
                   status 0 the one-line reason */
    size_t len; /* bytes of body, NUL not counted */
};

/* Where octl_run sends requests and prints. */
struct octl_io {
    /* Send rq and fill *rp (which the caller frees with octl_reply_clear).
     * Always fills *rp. */
    void (*request)(void *arg, const struct octl_request *rq,
                    struct octl_reply *rp);
    /* Wait ms milliseconds between two polls of `logs --follow`. */
    void (*sleep_ms)(void *arg, int64_t ms);
    /* True once `logs --follow` should stop (Ctrl-C). May be NULL. */
    bool (*stopped)(void *arg);
    void *arg;
    FILE *out; /* tables and answers */
    FILE *err; /* one-line errors */
};

/* Free what a reply holds and zero it. */
void octl_reply_clear(struct octl_reply *rp);

/* Run the parsed command against io; returns the exit status
 * (enum octl_exit). Prints help for a->help or no command. */
int octl_run(const struct octl_args *a, const struct octl_io *io);

/* Write the top-level usage (every command) to out. */
void octl_usage(FILE *out);

/* The command's name ("agents"); cmd must not be NULL. */
const char *octl_cmd_name(const struct octl_cmd *cmd);

#endif
