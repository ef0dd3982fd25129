/*
 * The agent's flag table (Mesos's names and defaults where Mesos has the
 * flag) and its parsing, on top of common/flags. Every setting of
 * offerd-agent is declared here, once; the rest of the agent reads it from
 * struct agent_flags.
 */
#ifndef OFFERD_AGENT_FLAGS_AGENT_H
#define OFFERD_AGENT_FLAGS_AGENT_H

#include "agent/isolation_flags.h"
#include "agent/flags_launch.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/tls.h"

#include <stdbool.h>
#include <stdint.h>

/* Rows in the agent's flag table: its own, then the isolation flags, then
 * the launch flags. */
#define AGENT_FLAGS_BASE_ROWS 35
#define AGENT_FLAGS_ROWS                                                       \
    (AGENT_FLAGS_BASE_ROWS + AGENT_ISO_FLAGS_ROWS + AGENT_LAUNCH_FLAG_ROWS +   \
     TLS_FLAG_ROWS)

/* --resource_estimator (oversub.h). */
enum agent_estimator {
    AGENT_ESTIMATOR_NONE,  /* no revocable resources */
    AGENT_ESTIMATOR_FIXED, /* --oversubscribed_resources */
    AGENT_ESTIMATOR_USAGE, /* allocated but unused cpus and mem */
};

/* --qos_controller (oversub.h). */
enum agent_qos {
    AGENT_QOS_NONE, /* never evict */
    AGENT_QOS_LOAD, /* evict on a shrunk estimate or a high load */
};

/* Bound of --max_completed_executors_per_framework and
 * --max_completed_frameworks: each completed executor keeps up to 200
 * tasks in memory. */
#define AGENT_MAX_COMPLETED 100000

/* Largest length of a numeric IP address in text, with the NUL. */
#define AGENT_IP_SIZE 64

/* Effective agent settings. Strings are borrowed from the flags object and
 * live until agent_flags_fini. */
struct agent_flags {
    const char *master;            /* --master text, "HOST:PORT" */
    char master_ip[AGENT_IP_SIZE]; /* numeric IPv4 of --master, or "" */
    uint16_t master_port;          /* port of --master, or 0 (zk://...) */
    const char *ip;                /* --ip: address to listen on */
    uint16_t port;                 /* --port: 0 picks a free port */
    const char *hostname;          /* --hostname (default: gethostname) */
    const char *work_dir;          /* --work_dir, created at start */
    const char *resources;         /* --resources text or JSON; NULL:
                                      detect every resource */
    const char *attributes;        /* --attributes text; NULL: none */
    const char *domain;            /* --domain JSON or file; NULL: none */
    const char *default_role;      /* --default_role for --resources */
    const char *logging_level;     /* --logging_level text */
    enum log_level log_level;      /* parsed --logging_level */
    int64_t registration_backoff_factor_ns; /* first reconnect delay bound */
    int64_t registration_backoff_max_ns;    /* cap of the reconnect delay */
    int64_t update_retry_min_ns; /* first status update resend interval */
    int64_t update_retry_max_ns; /* cap of the resend interval */
    int64_t shutdown_timeout_ns; /* SIGUSR1/SHUTDOWN: longest wait for the
                                    tasks to die before exiting anyway */
    int64_t executor_registration_timeout_ns; /* executors.h */
    int64_t executor_reregistration_timeout_ns;
    int64_t executor_shutdown_grace_period_ns;
    const char *recover;  /* --recover text */
    bool recover_cleanup; /* --recover=cleanup: kill the recovered
                             tasks, forget the checkpoint, exit */
    /* Oversubscription (oversub.h). */
    const char *resource_estimator;       /* --resource_estimator text */
    enum agent_estimator estimator;       /* parsed */
    const char *oversubscribed_resources; /* fixed: text, JSON or
                                             file://PATH; NULL: none */
    int64_t oversubscription_interval_ns; /* estimator and QoS round */
    double oversubscription_margin;       /* usage: kept unused, 0 to <1 */
    const char *qos_controller;           /* --qos_controller text */
    enum agent_qos qos;                   /* parsed */
    double qos_load_threshold;            /* > 0; 0 when not given (the
                                             number of online CPUs) */
    /* Authentication and authorization (auth_agent.c). */
    const char *credential;           /* --credential: file; NULL: none */
    const char *http_credentials;     /* --http_credentials: file; NULL: none */
    bool authenticate_http_readwrite; /* --authenticate_http_readwrite */
    bool authenticate_http_readonly;  /* --authenticate_http_readonly */
    const char *acls;                 /* --acls: JSON or file; NULL: none */
    bool authenticate_http_executors; /* --authenticate_http_executors */
    const char *executor_secret_key;  /* its key file (or --jwt_secret_key) */
    const char *jwt_secret_key;       /* Mesos's newer name of the same */
    /* What /state keeps of what ended (completed.h), 0 to the bounds. */
    int64_t max_completed_executors_per_framework;
    int64_t max_completed_frameworks;

    struct agent_iso_flags iso; /* isolation (isolation_flags.h) */
    /* Containerizers, users, environment, fetcher (flags_launch.h). */
    struct agent_launch_flags launch;

    /* Private: the table rows point at the fields above. */
    struct tls_flags tls; /* --ssl_* (common/tls.h) */
    struct flag_def defs[AGENT_FLAGS_ROWS];
    struct flags *flags;
    char hostname_buf[256];
};

/* Build the table over af's fields (af must not move afterwards). */
void agent_flags_init(struct agent_flags *af);

/* Parse argv and env (see flags_parse) and check the values: --master is
 * required and must be HOST:PORT with a numeric IPv4 host or "localhost";
 * a known logging level; durations in order (min <= max, retry min > 0);
 * --recover is reconnect or cleanup; --resource_estimator is none, fixed
 * or usage, and fixed needs --oversubscribed_resources (which nothing else
 * takes; its text, unless file://PATH, must parse as agent_est_parse_fixed
 * reads it); --oversubscription_interval above 0; --oversubscription_margin
 * in [0, 1); --qos_controller none or load; --qos_load_threshold above 0;
 * --max_completed_executors_per_framework and --max_completed_frameworks
 * from 0 to AGENT_MAX_COMPLETED.
 * Fills in the hostname default. Returns FLAGS_OK, FLAGS_HELP or
 * FLAGS_ERROR with a one-line reason in err (flags_report on
 * agent_flags_object says what main() does with the last two). */
enum flags_result agent_flags_parse(struct agent_flags *af, int argc,
                                    char *const *argv, char *const *env,
                                    char *err, size_t errlen);

/* Check a --master value: HOST:PORT (ip gets HOST when it is a numeric
 * IPv4 address or "localhost" (127.0.0.1), else ""; port the port), or
 * zk://... or file:///... (ip "" and port 0: common/master_detect follows
 * them). Returns 0, or -1 with a one-line reason in err. */
int agent_parse_master(const char *text, char ip[AGENT_IP_SIZE], uint16_t *port,
                       char *err, size_t errlen);

/* The flags object, for the /flags endpoint and flags_report (borrowed). */
const struct flags *agent_flags_object(const struct agent_flags *af);

/* Free what agent_flags_init and agent_flags_parse allocated. */
void agent_flags_fini(struct agent_flags *af);

#endif
