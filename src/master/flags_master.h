/*
 * The master's flag table (Mesos's names and defaults where Mesos has the
 * flag) and its parsing, on top of common/flags. Modules that need a setting
 * read it from struct master_flags; the table itself is the one place a new
 * master flag is declared.
 */
#ifndef OFFERD_MASTER_FLAGS_MASTER_H
#define OFFERD_MASTER_FLAGS_MASTER_H

#include "common/flags.h"
#include "common/log.h"
#include "common/tls.h"

#include <stdint.h>
#include <stdio.h>

/* Upper bounds of --max_completed_frameworks and
 * --max_completed_tasks_per_framework (Mesos has none; these keep a typo
 * from reserving gigabytes). */
#define MASTER_MAX_COMPLETED_FRAMEWORKS 100000
#define MASTER_MAX_COMPLETED_TASKS      1000000

/* Rows in the master's flag table. */
#define MASTER_FLAGS_ROWS (46 + TLS_FLAG_ROWS)

/* Effective master settings. Strings are borrowed from the flags object and
 * live until master_flags_fini. */
struct master_flags {
    const char *ip;                   /* --ip: address to listen on */
    uint16_t port;                    /* --port: port to listen on */
    const char *work_dir;             /* --work_dir: where the registry lives */
    const char *hostname;             /* --hostname: advertised name (default:
                                         this machine's hostname) */
    const char *logging_level;        /* --logging_level text */
    enum log_level log_level;         /* parsed --logging_level */
    int64_t allocation_interval;      /* --allocation_interval, ns */
    int64_t offer_timeout;            /* --offer_timeout, ns; 0: none */
    int64_t agent_ping_timeout;       /* --agent_ping_timeout, ns */
    int64_t max_agent_ping_timeouts;  /* --max_agent_ping_timeouts */
    int64_t agent_reregister_timeout; /* --agent_reregister_timeout, ns */
    /* --registry_gc_interval (ns), --registry_max_agent_age (ns),
     * --registry_max_agent_count (registry_gc.h) */
    int64_t registry_gc_interval;
    int64_t registry_max_agent_age;
    int64_t registry_max_agent_count;
    const char *min_allocatable_resources; /* "cpus:0.01|mem:32" */
    bool filter_gpu_resources;             /* --filter_gpu_resources */
    const char *role_sorter;               /* --role_sorter: drf | random */
    const char *framework_sorter; /* --framework_sorter: drf | random */
    bool offer_allocation_slack;  /* --offer_allocation_slack */
    const char *registry;         /* --registry: sqlite | zk | in_memory */
    /* --max_completed_frameworks, --max_completed_tasks_per_framework */
    int64_t max_completed_frameworks;
    int64_t max_completed_tasks_per_framework;
    const char *weights; /* --weights: "role=weight,..."; NULL: none */
    const char *cluster; /* --cluster: the cluster's name; NULL: none */
    const char *domain;  /* --domain: DomainInfo JSON or file; NULL: none
                            (loaded by master_new, common/domain.h) */
    const char *log_dir; /* --log_dir: where offerd-master.log is written;
                            NULL: no log file */
    /* --require_agent_domain: refuse agents without a domain (needs
     * --domain; master/domains.h) */
    bool require_agent_domain;
    /* --webui_dir: the web UI's files (webui.h) */
    const char *webui_dir;
    /* Authentication and authorization (master/authz.c, docs/security.md). */
    const char *credentials;           /* --credentials: file; NULL: none */
    bool authenticate_frameworks;      /* --authenticate_frameworks */
    bool authenticate_http_frameworks; /* --authenticate_http_frameworks */
    bool authenticate_agents;          /* --authenticate_agents */
    bool authenticate_http_readwrite;  /* --authenticate_http_readwrite */
    bool authenticate_http_readonly;   /* --authenticate_http_readonly */
    const char *acls;                  /* --acls: JSON or file; NULL: none */
    const char *authenticators;        /* --authenticators: crammd5 */
    const char *http_authenticators;   /* --http_authenticators: basic */
    /* Holding under abuse (master/limits.h, docs/security.md). */
    int64_t max_connections;             /* --max_connections; 0: from the fd
                                            limit (main.c) */
    int64_t http_idle_timeout;           /* --http_idle_timeout, ns; 0: none */
    uint64_t http_min_body_rate;         /* --http_min_body_rate, bytes/s */
    uint64_t max_buffered_request_bytes; /* --max_buffered_request_bytes */
    const char *rate_limits; /* --rate_limits: JSON or file://path */
    int64_t max_frameworks_per_principal; /* 0: no cap */
    int64_t max_failover_timeout;         /* ns, for frameworks that never
                                             launched a task; 0: no cap */
    /* HA (master/ha.h, docs/ha.md). */
    const char *zk;             /* --zk: zk://... or file://; NULL: none */
    int64_t zk_session_timeout; /* --zk_session_timeout, ns */
    int64_t quorum;             /* --quorum: accepted, unused */

    struct tls_flags tls; /* --ssl_* (common/tls.h) */

    /* Private: the table rows point at the fields above. */
    struct flag_def defs[MASTER_FLAGS_ROWS];
    struct flags *flags;
    char hostname_buf[256];
};

/* Build the table over mf's fields (mf must not move afterwards). */
void master_flags_init(struct master_flags *mf);

/* Parse argv and env (see flags_parse) and check the values (a known
 * logging level); fill in the hostname default. Returns FLAGS_OK,
 * FLAGS_HELP (flags_report prints the usage) or FLAGS_ERROR with a
 * one-line reason in err. */
enum flags_result master_flags_parse(struct master_flags *mf, int argc,
                                     char *const *argv, char *const *env,
                                     char *err, size_t errlen);

/* The flags object, for the /flags endpoint (borrowed). */
const struct flags *master_flags_object(const struct master_flags *mf);

/* Free what master_flags_init and master_flags_parse allocated. */
void master_flags_fini(struct master_flags *mf);

#endif
