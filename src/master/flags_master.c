/*
 * The master's flag table.
 */
#include "master/flags_master.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "master/domains.h"
#include "master/quota.h"
#include "master/webui.h"

void master_flags_init(struct master_flags *mf)
{
    memset(mf, 0, sizeof(*mf));
    const struct flag_def defs[MASTER_FLAGS_ROWS - TLS_FLAG_ROWS] = {
        {"ip", FLAG_STRING, "0.0.0.0", "IP address to listen on.", &mf->ip},
        {"port", FLAG_PORT, "5050", "Port to listen on.", &mf->port},
        {"work_dir", FLAG_STRING, ".offerd/master",
         "Directory of the master's persistent state (the registry), created "
         "if missing. Relative paths are taken from the current directory.",
         &mf->work_dir},
        {"hostname", FLAG_STRING, NULL,
         "Hostname the master advertises. Defaults to this machine's "
         "hostname.",
         &mf->hostname},
        {"logging_level", FLAG_STRING, "INFO",
         "Lowest level of log messages written to stderr: DEBUG, INFO, "
         "WARNING or ERROR.",
         &mf->logging_level},
        {"allocation_interval", FLAG_DURATION, "1secs",
         "Time between periodic allocation cycles over every agent (cycles "
         "also run right after events that free or add resources).",
         &mf->allocation_interval},
        {"offer_timeout", FLAG_DURATION, NULL,
         "Rescind offers a framework has not answered within this time. "
         "Unset: offers are never rescinded for age.",
         &mf->offer_timeout},
        {"agent_ping_timeout", FLAG_DURATION, "15secs",
         "Interval of the master's PINGs to each agent; a PING not answered "
         "before the next one counts as a miss.",
         &mf->agent_ping_timeout},
        {"max_agent_ping_timeouts", FLAG_INT, "5",
         "Missed PINGs in a row after which an agent is removed as "
         "unreachable.",
         &mf->max_agent_ping_timeouts},
        {"agent_reregister_timeout", FLAG_DURATION, "10mins",
         "After a master restart, how long the cluster has to come back: "
         "frameworks known from the registry or from agents may re-subscribe "
         "for at least this long, even past their failover timeout.",
         &mf->agent_reregister_timeout},
        {"registry_gc_interval", FLAG_DURATION, "15mins",
         "How often the registry forgets agents that are not connected "
         "(see --registry_max_agent_age and --registry_max_agent_count).",
         &mf->registry_gc_interval},
        {"registry_max_agent_age", FLAG_DURATION, "2weeks",
         "How long an agent marked unreachable or gone is remembered. Until "
         "then frameworks hear TASK_UNREACHABLE for its tasks and a gone "
         "agent may not register again; after, its tasks are TASK_UNKNOWN "
         "and it registers as a new agent would.",
         &mf->registry_max_agent_age},
        {"registry_max_agent_count", FLAG_INT, "102400",
         "How many agents marked unreachable (and, separately, gone) are "
         "remembered; beyond it the oldest are forgotten first.",
         &mf->registry_max_agent_count},
        {"min_allocatable_resources", FLAG_STRING, "cpus:0.01|mem:32",
         "An agent's leftover is offered only if it holds at least one of "
         "these alternatives ('|'-separated lists of scalar resources).",
         &mf->min_allocatable_resources},
        {"offer_allocation_slack", FLAG_BOOL, "false",
         "Offer resources reserved to a role but not used by its tasks as "
         "revocable resources to frameworks with REVOCABLE_RESOURCES; the "
         "tasks on them are evicted (with their grace period) when the role "
         "uses its reservation.",
         &mf->offer_allocation_slack},
        {"filter_gpu_resources", FLAG_BOOL, "true",
         "Offer agents with GPUs only to frameworks with the GPU_RESOURCES "
         "capability.",
         &mf->filter_gpu_resources},
        {"role_sorter", FLAG_STRING, "drf",
         "How sibling roles are ordered for offers: 'drf' (lowest weighted "
         "dominant share first) or 'random' (a random order, each role "
         "drawn with a probability proportional to its weight).",
         &mf->role_sorter},
        {"framework_sorter", FLAG_STRING, "drf",
         "How the frameworks of a role are ordered for offers: 'drf' "
         "(lowest dominant share first) or 'random' (a uniformly random "
         "order).",
         &mf->framework_sorter},
        {"registry", FLAG_STRING, "sqlite",
         "Where the master keeps what must survive a restart: 'sqlite' (a "
         "crash-safe file in --work_dir), 'zk' (ZooKeeper at --zk, shared "
         "by the masters of an HA group) or 'in_memory' (nothing survives; "
         "for tests and experiments).",
         &mf->registry},
        {"zk", FLAG_STRING, NULL,
         "ZooKeeper URL of the masters' election group (and of the "
         "registry with --registry=zk): 'zk://host1:port1,host2:port2/path' "
         "or 'zk://user:password@host1:port1/path', or 'file:///path' of a "
         "file holding it. Set: the master starts as a standby and serves "
         "as leader only once elected (docs/ha.md). Unset: it leads alone.",
         &mf->zk},
        {"zk_session_timeout", FLAG_DURATION, "10secs",
         "ZooKeeper session timeout: how long a master cut off from "
         "ZooKeeper keeps its candidacy (a leader stops serving at once, "
         "and exits once it is over).",
         &mf->zk_session_timeout},
        {"quorum", FLAG_INT, "1",
         "Accepted for compatibility with Mesos (the size of its "
         "replicated log's quorum); offerd's registry does not use it.",
         &mf->quorum},
        {"max_completed_frameworks", FLAG_INT, "50",
         "Completed frameworks (torn down or past their failover timeout) "
         "kept in memory for /state; the oldest is forgotten first. A "
         "framework forgotten here could subscribe again with its id.",
         &mf->max_completed_frameworks},
        {"max_completed_tasks_per_framework", FLAG_INT, "1000",
         "Completed tasks kept in memory per framework (running or "
         "completed) for /state and /tasks; the oldest is forgotten first.",
         &mf->max_completed_tasks_per_framework},
        {"weights", FLAG_STRING, NULL,
         "A comma-separated list of role/weight pairs of the form "
         "'role=weight,role=weight', used at start when the registry holds "
         "no weights (then recorded there). Deprecated in Mesos: set weights "
         "with PUT /weights or UPDATE_WEIGHTS instead.",
         &mf->weights},
        {"log_dir", FLAG_STRING, NULL,
         "Directory (created if missing) of the master's log file, "
         "offerd-master.log, written in addition to stderr and served as "
         "/master/log by /files/read and the operator API's READ_FILE. "
         "Unset: no log file.",
         &mf->log_dir},
        {"cluster", FLAG_STRING, NULL,
         "Human readable name for the cluster, shown in /state as "
         "'cluster' (as Mesos; absent when unset).",
         &mf->cluster},
        {"domain", FLAG_STRING, NULL,
         "Fault domain of the master, as Mesos's DomainInfo JSON or the "
         "path of a file holding it (file:// allowed): "
         "'{\"fault_domain\": {\"region\": {\"name\": \"eu\"}, "
         "\"zone\": {\"name\": \"a\"}}}'. Agents in another region "
         "are offered only to REGION_AWARE frameworks; without it, agents "
         "with a domain are refused.",
         &mf->domain},
        {"require_agent_domain", FLAG_BOOL, "false",
         "If true, only agents with a configured domain can register (an "
         "agent without one is answered 403 and retries). Needs --domain.",
         &mf->require_agent_domain},
        {"webui_dir", FLAG_STRING, NULL,
         "Directory of the web UI served at / (index.html and static/). "
         "Defaults to the installed copy, <datadir>/offerd/webui, or to the "
         "source tree's webui/ when offerd runs from its build tree.",
         &mf->webui_dir},
        /* Authentication and authorization: master/authz.c. */
        {"credentials", FLAG_STRING, NULL,
         "Path (or file://path) of the principals and secrets the master "
         "accepts: JSON {\"credentials\": [{\"principal\": ..., "
         "\"secret\": ...}]} or one 'principal secret' per line.",
         &mf->credentials},
        {"authenticate_frameworks", FLAG_BOOL, "false",
         "Require frameworks to authenticate (HTTP Basic, --credentials) on "
         "every scheduler API call.",
         &mf->authenticate_frameworks},
        {"authenticate_http_frameworks", FLAG_BOOL, "false",
         "Mesos's name for --authenticate_frameworks on the HTTP scheduler "
         "API; either one turns it on.",
         &mf->authenticate_http_frameworks},
        {"authenticate_agents", FLAG_BOOL, "false",
         "Require agents to authenticate (HTTP Basic, --credentials) on "
         "every agent API call.",
         &mf->authenticate_agents},
        {"authenticate_http_readwrite", FLAG_BOOL, "false",
         "Require authentication on the operator API (/api/v1) and on the "
         "endpoints that change state.",
         &mf->authenticate_http_readwrite},
        {"authenticate_http_readonly", FLAG_BOOL, "false",
         "Require authentication on the read-only endpoints (/state, "
         "/flags, /metrics/snapshot ...); /health and /version stay open.",
         &mf->authenticate_http_readonly},
        {"acls", FLAG_STRING, NULL,
         "Mesos's ACL JSON, inline or as a file path (file:// allowed): who "
         "may do what (docs/security.md). Unset: everything is allowed.",
         &mf->acls},
        {"authenticators", FLAG_STRING, "crammd5",
         "Framework and agent authenticator. Only Mesos's default name "
         "'crammd5' is accepted; offerd authenticates over HTTP Basic.",
         &mf->authenticators},
        {"http_authenticators", FLAG_STRING, "basic",
         "HTTP authenticator. Only 'basic' (HTTP Basic) is implemented.",
         &mf->http_authenticators},
        {"max_connections", FLAG_INT, "0",
         "Open HTTP connections allowed; past it each new connection closes "
         "an idle one (one that never completed a request first, oldest "
         "first). 0: the file descriptor limit (raised to its hard limit at "
         "start) less a reserve of an eighth.",
         &mf->max_connections},
        {"http_idle_timeout", FLAG_DURATION, "10secs",
         "A connection that sends no complete request header within this "
         "time of its accept or of its last reply is closed. Requests at a "
         "handler and event streams are not affected. 0secs: never.",
         &mf->http_idle_timeout},
        {"http_min_body_rate", FLAG_BYTES, "1KB",
         "Bytes per second a request body must average once "
         "--http_idle_timeout has passed since its header, or the "
         "connection is closed. 0B: no minimum.",
         &mf->http_min_body_rate},
        {"max_buffered_request_bytes", FLAG_BYTES, "64MB",
         "Bytes of requests being received, over all connections together; "
         "a request that would pass it is answered 503 and its connection "
         "closed. 0B: no budget.",
         &mf->max_buffered_request_bytes},
        {"rate_limits", FLAG_STRING, NULL,
         "Mesos's framework rate limits as JSON (or file:///path to it): "
         "{\"limits\": [{\"principal\": \"p\", \"qps\": 1, "
         "\"capacity\": 10}], \"aggregate_default_qps\": 5, "
         "\"aggregate_default_capacity\": 100}; offerd limits the SUBSCRIBE "
         "calls of each principal (or, for frameworks without one, of each "
         "peer address) with it.",
         &mf->rate_limits},
        {"max_frameworks_per_principal", FLAG_INT, "1000",
         "Frameworks one principal (or, without one, one peer address) may "
         "have registered at once; a new one past it is answered 503. A "
         "framework re-subscribing with its id is never refused. 0: no cap.",
         &mf->max_frameworks_per_principal},
        {"max_failover_timeout", FLAG_DURATION, "1hrs",
         "Cap on the failover timeout honoured for a framework that has "
         "never launched a task, so that abandoned subscriptions do not hold "
         "the framework table for weeks. Frameworks that launched tasks get "
         "their full failover_timeout. 0secs: no cap.",
         &mf->max_failover_timeout},
    };
    memcpy(mf->defs, defs, sizeof(defs));
    tls_flag_defs(&mf->tls, mf->defs + MASTER_FLAGS_ROWS - TLS_FLAG_ROWS);
    mf->flags = flags_new("offerd",
                          "offerd, a Mesos-compatible master: owns the "
                          "cluster's state and hands out resources as offers.",
                          mf->defs, MASTER_FLAGS_ROWS);
}

enum flags_result master_flags_parse(struct master_flags *mf, int argc,
                                     char *const *argv, char *const *env,
                                     char *err, size_t errlen)
{
    enum flags_result r = flags_parse(mf->flags, argc, argv, env, err, errlen);
    if (r != FLAGS_OK)
        return r;
    if (log_parse_level(mf->logging_level, &mf->log_level) != 0) {
        snprintf(err, errlen,
                 "--logging_level: unknown level '%s' (expected DEBUG, INFO, "
                 "WARNING or ERROR)",
                 mf->logging_level);
        return FLAGS_ERROR;
    }
    if (mf->max_connections < 0 || mf->http_idle_timeout < 0 ||
        mf->max_frameworks_per_principal < 0 || mf->max_failover_timeout < 0) {
        snprintf(err, errlen,
                 "--max_connections, --http_idle_timeout, "
                 "--max_frameworks_per_principal and --max_failover_timeout "
                 "must not be negative");
        return FLAGS_ERROR;
    }
    if (mf->allocation_interval <= 0) {
        snprintf(err, errlen, "--allocation_interval: must be positive");
        return FLAGS_ERROR;
    }
    if (mf->registry_gc_interval <= 0) {
        snprintf(err, errlen, "--registry_gc_interval: must be positive");
        return FLAGS_ERROR;
    }
    if (mf->registry_max_agent_count < 0) {
        snprintf(err, errlen,
                 "--registry_max_agent_count: must not be negative");
        return FLAGS_ERROR;
    }
    if (mf->agent_reregister_timeout < 0) {
        snprintf(err, errlen,
                 "--agent_reregister_timeout: must not be negative");
        return -1;
    }
    if (mf->agent_ping_timeout <= 0) {
        snprintf(err, errlen, "--agent_ping_timeout: must be positive");
        return FLAGS_ERROR;
    }
    if (mf->max_agent_ping_timeouts < 1 || mf->max_agent_ping_timeouts > 1000) {
        snprintf(err, errlen,
                 "--max_agent_ping_timeouts: must be between 1 and 1000");
        return FLAGS_ERROR;
    }
    if (mf->max_completed_frameworks < 0 ||
        mf->max_completed_frameworks > MASTER_MAX_COMPLETED_FRAMEWORKS) {
        snprintf(err, errlen,
                 "--max_completed_frameworks: must be between 0 and %d",
                 MASTER_MAX_COMPLETED_FRAMEWORKS);
        return FLAGS_ERROR;
    }
    if (mf->max_completed_tasks_per_framework < 0 ||
        mf->max_completed_tasks_per_framework > MASTER_MAX_COMPLETED_TASKS) {
        snprintf(err, errlen,
                 "--max_completed_tasks_per_framework: must be between 0 and "
                 "%d",
                 MASTER_MAX_COMPLETED_TASKS);
        return FLAGS_ERROR;
    }
    const char *const sorters[] = {"role_sorter", mf->role_sorter,
                                   "framework_sorter", mf->framework_sorter};
    for (int i = 0; i < 4; i += 2) {
        if (strcmp(sorters[i + 1], "drf") != 0 &&
            strcmp(sorters[i + 1], "random") != 0) {
            snprintf(err, errlen,
                     "--%s: unknown sorter '%s' (expected drf or random)",
                     sorters[i], sorters[i + 1]);
            return FLAGS_ERROR;
        }
    }
    if (strcmp(mf->registry, "sqlite") != 0 &&
        strcmp(mf->registry, "in_memory") != 0 &&
        strcmp(mf->registry, "zk") != 0) {
        snprintf(err, errlen,
                 "--registry: unknown registry '%s' (expected sqlite, "
                 "in_memory or zk)",
                 mf->registry);
        return FLAGS_ERROR;
    }
    if (mf->zk_session_timeout < 100 * 1000000LL ||
        mf->zk_session_timeout > 3600 * 1000000000LL) {
        snprintf(err, errlen,
                 "--zk_session_timeout: must be between 100ms and 1hrs");
        return FLAGS_ERROR;
    }
    if (mf->zk != NULL && mf->zk[0] != '\0' &&
        strncmp(mf->zk, "zk://", 5) != 0 &&
        strncmp(mf->zk, "file://", 7) != 0) {
        snprintf(err, errlen, "--zk: expected zk://... or file://...");
        return FLAGS_ERROR;
    }
    if (strcmp(mf->registry, "zk") == 0 &&
        (mf->zk == NULL || mf->zk[0] == '\0')) {
        snprintf(err, errlen,
                 "--registry=zk needs --zk=zk://host:port/path (or "
                 "file:///path holding it)");
        return FLAGS_ERROR;
    }
    if (master_quota_weights_flag_check(mf->weights, err, errlen) != 0 ||
        master_domain_flags_check(mf, err, errlen) != 0)
        return FLAGS_ERROR;
    if (strcmp(mf->authenticators, "crammd5") != 0) {
        snprintf(err, errlen,
                 "--authenticators: only 'crammd5' (the default) is accepted "
                 "(offerd authenticates with HTTP Basic)");
        return FLAGS_ERROR;
    }
    if (strcmp(mf->http_authenticators, "basic") != 0) {
        snprintf(err, errlen,
                 "--http_authenticators: only 'basic' is implemented");
        return FLAGS_ERROR;
    }
    if ((mf->authenticate_frameworks || mf->authenticate_http_frameworks ||
         mf->authenticate_agents || mf->authenticate_http_readwrite ||
         mf->authenticate_http_readonly) &&
        mf->credentials == NULL) {
        snprintf(err, errlen,
                 "--authenticate_*: authentication needs --credentials");
        return FLAGS_ERROR;
    }
    if (mf->work_dir[0] == '\0') {
        snprintf(err, errlen, "--work_dir: must not be empty");
        return FLAGS_ERROR;
    }
    if (mf->webui_dir == NULL || mf->webui_dir[0] == '\0')
        mf->webui_dir = master_webui_default_dir();
    if (mf->hostname == NULL) {
        if (gethostname(mf->hostname_buf, sizeof(mf->hostname_buf) - 1) != 0)
            snprintf(mf->hostname_buf, sizeof(mf->hostname_buf), "localhost");
        mf->hostname_buf[sizeof(mf->hostname_buf) - 1] = '\0';
        mf->hostname = mf->hostname_buf;
    }
    return FLAGS_OK;
}

const struct flags *master_flags_object(const struct master_flags *mf)
{
    return mf->flags;
}

void master_flags_fini(struct master_flags *mf)
{
    flags_free(mf->flags);
    mf->flags = NULL;
}
