/*
 * The agent's flag table.
 */
#include "agent/flags_agent.h"
#include "common/master_detect.h"
#include "common/zk_url.h"

#include "agent/estimator.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void agent_flags_init(struct agent_flags *af)
{
    memset(af, 0, sizeof(*af));
    const struct flag_def defs[AGENT_FLAGS_BASE_ROWS] = {
        {"master", FLAG_STRING, NULL,
         "Required. The master to register with: HOST:PORT (an IPv4 address "
         "or a host name, resolved at each connection attempt), "
         "zk://host1:port1,host2:port2/path (the leading master of a "
         "ZooKeeper group, followed as leadership changes; see docs/ha.md), "
         "or file:///path of a file holding one of these.",
         &af->master},
        {"ip", FLAG_STRING, "0.0.0.0",
         "IP address to listen on (the agent's /state, /files, /health).",
         &af->ip},
        {"port", FLAG_PORT, "5051", "Port to listen on; 0 picks a free one.",
         &af->port},
        {"hostname", FLAG_STRING, NULL,
         "Hostname the agent reports to the master. Defaults to this "
         "machine's hostname.",
         &af->hostname},
        {"work_dir", FLAG_STRING, "./.offerd/agent",
         "Directory of the agent's checkpointed state (meta/), the task "
         "sandboxes (sandboxes/<framework_id>/<task_id>/<run>/) and the "
         "persistent volumes (volumes/roles/<role>/<id>), created if "
         "missing.",
         &af->work_dir},
        {"resources", FLAG_STRING, NULL,
         "Total consumable resources of the agent, as Mesos's text form "
         "(\"cpus:4;mem:8192;disk:100000;ports:[31000-32000]\") or a JSON "
         "array of Resource objects. Each of cpus, mem, disk and ports that "
         "is not given is detected: cpus = the online CPUs; mem (MB) = total "
         "RAM minus 1 GB when RAM is at least 2 GB, else half of it; disk "
         "(MB) = size of the work_dir filesystem minus max(5 GB, 10%) when "
         "that size is at least 10 GB, else half of it; ports = "
         "[31000-32000].",
         &af->resources},
        {"attributes", FLAG_STRING, NULL,
         "Attributes of the machine, as \"name:value\" pairs separated by "
         "';' (e.g. \"rack:r1;zone:z1;cores:8;slots:[1-4]\"). A value is a "
         "range list in [], a number (scalar) or else text; sets are not "
         "allowed, as in Mesos.",
         &af->attributes},
        {"domain", FLAG_STRING, NULL,
         "Fault domain of the agent, as Mesos's DomainInfo JSON or the path "
         "of a file holding it (file:// allowed), e.g. "
         "'{\"fault_domain\": {\"region\": {\"name\": \"eu\"}, "
         "\"zone\": {\"name\": \"a\"}}}'. A master without --domain "
         "refuses an agent with one.",
         &af->domain},
        {"default_role", FLAG_STRING, "*",
         "Role of the --resources entries that name none, and of the "
         "detected resources.",
         &af->default_role},
        {"logging_level", FLAG_STRING, "INFO",
         "Lowest level of log messages written to stderr: DEBUG, INFO, "
         "WARNING or ERROR.",
         &af->logging_level},
        {"registration_backoff_factor", FLAG_DURATION, "1secs",
         "After the connection to the master fails or closes, the agent "
         "subscribes again after a random delay in [0, b], where b starts at "
         "this factor and doubles with each failed attempt, up to "
         "--registration_backoff_max.",
         &af->registration_backoff_factor_ns},
        {"registration_backoff_max", FLAG_DURATION, "1mins",
         "Largest bound of the reconnection delay (see "
         "--registration_backoff_factor).",
         &af->registration_backoff_max_ns},
        {"status_update_retry_interval_min", FLAG_DURATION, "10secs",
         "A status update the master has not acknowledged is sent again "
         "after this interval, which doubles with each resend up to "
         "--status_update_retry_interval_max.",
         &af->update_retry_min_ns},
        {"status_update_retry_interval_max", FLAG_DURATION, "10mins",
         "Largest interval between resends of an unacknowledged status "
         "update.",
         &af->update_retry_max_ns},
        {"shutdown_timeout", FLAG_DURATION, "1mins",
         "On SIGUSR1 or a SHUTDOWN from the master the agent kills every "
         "task (SIGTERM, then SIGKILL after each task's grace period) and "
         "exits once they are gone, or after this long at the latest.",
         &af->shutdown_timeout_ns},
        {"executor_registration_timeout", FLAG_DURATION, "1mins",
         "How long a custom executor has to subscribe after its launch; "
         "one that has not is killed and its tasks fail "
         "(REASON_EXECUTOR_REGISTRATION_TIMEOUT).",
         &af->executor_registration_timeout_ns},
        {"executor_reregistration_timeout", FLAG_DURATION, "2secs",
         "After a restart, how long the recovered executors have to "
         "subscribe again; those that have not are killed and their tasks "
         "fail.",
         &af->executor_reregistration_timeout_ns},
        {"executor_shutdown_grace_period", FLAG_DURATION, "5secs",
         "Between the SHUTDOWN event to an executor and the SIGTERM to its "
         "process group (SIGKILL follows after as long again).",
         &af->executor_shutdown_grace_period_ns},
        {"recover", FLAG_STRING, "reconnect",
         "What a restarted agent does with the tasks it finds in its "
         "work_dir: reconnect = re-attach to the tasks that still run, "
         "report those that ended meanwhile with their exit status and "
         "resend unacknowledged status updates, then register again with "
         "its agent id; cleanup = kill the tasks that still run, forget the "
         "checkpoint (agent id included) and exit, so that the next start "
         "registers as a new agent (as Mesos's agent, e.g. before an "
         "incompatible upgrade).",
         &af->recover},
        {"resource_estimator", FLAG_STRING, "none",
         "What the agent reports to the master as revocable (oversubscribed) "
         "resources: none; fixed = --oversubscribed_resources; usage = the "
         "cpus and mem its regular tasks hold but do not use (measured from "
         "/proc every --oversubscription_interval, smoothed, less "
         "--oversubscription_margin).",
         &af->resource_estimator},
        {"oversubscribed_resources", FLAG_STRING, NULL,
         "With --resource_estimator=fixed: the resources to report as "
         "revocable, as --resources takes them (e.g. \"cpus:2;mem:1024\"); "
         "or file://PATH, a file holding such text, read again every "
         "--oversubscription_interval (a file that cannot be read or parsed "
         "keeps the previous estimate).",
         &af->oversubscribed_resources},
        {"oversubscription_interval", FLAG_DURATION, "15secs",
         "How often the resource estimator estimates and the QoS controller "
         "decides.",
         &af->oversubscription_interval_ns},
        {"oversubscription_margin", FLAG_DOUBLE, "0.1",
         "With --resource_estimator=usage: the fraction of the regular "
         "tasks' cpus and mem never reported as revocable (headroom for "
         "their bursts), from 0 to below 1.",
         &af->oversubscription_margin},
        {"qos_controller", FLAG_STRING, "none",
         "none: revocable tasks are never evicted; load: evict revocable "
         "tasks, newest first and only as many as needed, when the estimate "
         "shrinks below what they hold, and one per "
         "--oversubscription_interval while the 1-minute load average is "
         "above --qos_load_threshold (each with its kill policy's grace "
         "period, reported TASK_KILLED with REASON_CONTAINER_PREEMPTED).",
         &af->qos_controller},
        {"qos_load_threshold", FLAG_DOUBLE, NULL,
         "With --qos_controller=load: the 1-minute load average above which "
         "revocable tasks are evicted. Defaults to the number of online "
         "CPUs.",
         &af->qos_load_threshold},
        /* Authentication and authorization: auth_agent.c. */
        {"credential", FLAG_STRING, NULL,
         "Path (or file://path) of the principal and secret this agent "
         "authenticates to the master with (HTTP Basic): JSON "
         "{\"principal\": ..., \"secret\": ...} or one line 'principal "
         "secret'.",
         &af->credential},
        {"http_credentials", FLAG_STRING, NULL,
         "Path of the principals and secrets the agent's own endpoints "
         "accept, as the master's --credentials.",
         &af->http_credentials},
        {"authenticate_http_readwrite", FLAG_BOOL, "false",
         "Require authentication on the agent's endpoints that change "
         "state (/api/v1, /logging/toggle).",
         &af->authenticate_http_readwrite},
        {"authenticate_http_readonly", FLAG_BOOL, "false",
         "Require authentication on the agent's read-only endpoints "
         "(/state, /flags, /files/*, /metrics/snapshot); /health stays "
         "open.",
         &af->authenticate_http_readonly},
        {"acls", FLAG_STRING, NULL,
         "Mesos's ACL JSON for the agent's endpoints, inline or as a file "
         "path: access_sandboxes (/files/*), view_flags (/flags and "
         "/state's flags), set_log_level, view_frameworks, view_tasks and "
         "view_executors (what /state and the operator API show), "
         "view_roles (/state's reserved resources). Unset: everything is "
         "allowed.",
         &af->acls},
        {"authenticate_http_executors", FLAG_BOOL, "false",
         "Require each executor's calls on /api/v1/executor to carry the "
         "token the agent gave it (Authorization: Bearer); needs "
         "--executor_secret_key.",
         &af->authenticate_http_executors},
        {"executor_secret_key", FLAG_STRING, NULL,
         "Path of the key the agent signs its executors' tokens with "
         "(HMAC-SHA256 JWTs in MESOS_EXECUTOR_AUTHENTICATION_TOKEN). Also "
         "--jwt_secret_key, Mesos's newer name.",
         &af->executor_secret_key},
        {"jwt_secret_key", FLAG_STRING, NULL, "As --executor_secret_key.",
         &af->jwt_secret_key},
        /* What /state keeps of what ended: completed.h. */
        {"max_completed_executors_per_framework", FLAG_INT, "150",
         "Maximum number of completed executors per framework kept in "
         "memory (for /state's completed_executors).",
         &af->max_completed_executors_per_framework},
        {"max_completed_frameworks", FLAG_INT, "50",
         "Maximum number of completed frameworks kept in memory (for "
         "/state's completed_frameworks).",
         &af->max_completed_frameworks},
    };
    memcpy(af->defs, defs, sizeof(defs));
    agent_iso_flag_defs(&af->iso, af->defs + AGENT_FLAGS_BASE_ROWS);
    agent_launch_flag_defs(&af->launch, af->defs + AGENT_FLAGS_BASE_ROWS +
                                            AGENT_ISO_FLAGS_ROWS);
    tls_flag_defs(&af->tls, af->defs + AGENT_FLAGS_ROWS - TLS_FLAG_ROWS);
    af->flags = flags_new("offerd-agent",
                          "offerd-agent, the agent of offerd: registers this "
                          "machine's resources with the master and runs "
                          "tasks in sandboxes under --work_dir.",
                          af->defs, AGENT_FLAGS_ROWS);
}

int agent_parse_master(const char *text, char ip[AGENT_IP_SIZE], uint16_t *port,
                       char *err, size_t errlen)
{
    char why[300];
    ip[0] = '\0';
    *port = 0;
    if (strncmp(text, "file://", 7) == 0) {
        /* Read when the agent starts (common/master_detect). */
        if (text[7] != '/') {
            snprintf(err, errlen, "--master: '%s': expected file:///path",
                     text);
            return -1;
        }
        return 0;
    }
    if (strncmp(text, "zk://", 5) == 0) {
        struct zk_url u;
        if (zk_url_parse(text, &u, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "--master: %s", why);
            return -1;
        }
        return 0;
    }
    struct master_leader l;
    if (master_detect_parse_hostport(text, &l, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--master: %s", why);
        return -1;
    }
    if (strcmp(l.hostname, "localhost") == 0)
        snprintf(l.ip, sizeof(l.ip), "127.0.0.1");
    if (strlen(l.ip) >= AGENT_IP_SIZE) {
        snprintf(err, errlen, "--master: host too long");
        return -1;
    }
    memcpy(ip, l.ip, strlen(l.ip) + 1);
    *port = l.port;
    return 0;
}

/* The oversubscription flags (see agent_flags_parse). */
static int check_oversubscription(struct agent_flags *af, char *err,
                                  size_t errlen)
{
    if (strcmp(af->resource_estimator, "none") == 0) {
        af->estimator = AGENT_ESTIMATOR_NONE;
    } else if (strcmp(af->resource_estimator, "fixed") == 0) {
        af->estimator = AGENT_ESTIMATOR_FIXED;
    } else if (strcmp(af->resource_estimator, "usage") == 0) {
        af->estimator = AGENT_ESTIMATOR_USAGE;
    } else {
        snprintf(err, errlen,
                 "--resource_estimator: '%s' is not none, fixed or usage",
                 af->resource_estimator);
        return -1;
    }
    if (af->estimator == AGENT_ESTIMATOR_FIXED &&
        af->oversubscribed_resources == NULL) {
        snprintf(err, errlen,
                 "--resource_estimator=fixed needs "
                 "--oversubscribed_resources");
        return -1;
    }
    if (af->estimator != AGENT_ESTIMATOR_FIXED &&
        af->oversubscribed_resources != NULL) {
        snprintf(err, errlen,
                 "--oversubscribed_resources is only for "
                 "--resource_estimator=fixed");
        return -1;
    }
    if (af->oversubscribed_resources != NULL &&
        strncmp(af->oversubscribed_resources, "file://", 7) != 0) {
        res_list l = RES_LIST_INIT;
        char perr[512];
        int rc = agent_est_parse_fixed(af->oversubscribed_resources, &l, perr,
                                       sizeof(perr));
        res_list_clear(&l);
        if (rc != 0) {
            snprintf(err, errlen, "--oversubscribed_resources: %s", perr);
            return -1;
        }
    }
    if (af->oversubscribed_resources != NULL &&
        strcmp(af->oversubscribed_resources, "file://") == 0) {
        snprintf(err, errlen,
                 "--oversubscribed_resources: file:// needs a "
                 "path");
        return -1;
    }
    if (af->oversubscription_interval_ns <= 0) {
        snprintf(err, errlen, "--oversubscription_interval: must be above 0");
        return -1;
    }
    if (!(af->oversubscription_margin >= 0 &&
          af->oversubscription_margin < 1)) {
        snprintf(err, errlen,
                 "--oversubscription_margin: must be at least 0 and below 1");
        return -1;
    }
    if (strcmp(af->qos_controller, "none") == 0) {
        af->qos = AGENT_QOS_NONE;
    } else if (strcmp(af->qos_controller, "load") == 0) {
        af->qos = AGENT_QOS_LOAD;
    } else {
        snprintf(err, errlen, "--qos_controller: '%s' is not none or load",
                 af->qos_controller);
        return -1;
    }
    if (flags_is_set(af->flags, "qos_load_threshold") &&
        !(af->qos_load_threshold > 0)) {
        snprintf(err, errlen, "--qos_load_threshold: must be above 0");
        return -1;
    }
    return 0;
}

enum flags_result agent_flags_parse(struct agent_flags *af, int argc,
                                    char *const *argv, char *const *env,
                                    char *err, size_t errlen)
{
    enum flags_result r = flags_parse(af->flags, argc, argv, env, err, errlen);
    if (r != FLAGS_OK)
        return r;
    if (log_parse_level(af->logging_level, &af->log_level) != 0) {
        snprintf(err, errlen,
                 "--logging_level: unknown level '%s' (expected DEBUG, INFO, "
                 "WARNING or ERROR)",
                 af->logging_level);
        return FLAGS_ERROR;
    }
    if (af->master == NULL) {
        snprintf(err, errlen,
                 "--master is required (HOST:PORT, zk://... or file://...)");
        return FLAGS_ERROR;
    }
    if (agent_parse_master(af->master, af->master_ip, &af->master_port, err,
                           errlen) != 0)
        return FLAGS_ERROR;
    struct in_addr a;
    if (inet_pton(AF_INET, af->ip, &a) != 1) {
        snprintf(err, errlen, "--ip: '%s' is not a numeric IPv4 address",
                 af->ip);
        return FLAGS_ERROR;
    }
    if (agent_iso_flags_check(&af->iso, err, errlen) != 0)
        return FLAGS_ERROR;
    if (af->work_dir[0] == '\0') {
        snprintf(err, errlen, "--work_dir: must not be empty");
        return FLAGS_ERROR;
    }
    if ((af->authenticate_http_readwrite || af->authenticate_http_readonly) &&
        af->http_credentials == NULL) {
        snprintf(err, errlen,
                 "--authenticate_http_*: authentication needs "
                 "--http_credentials");
        return FLAGS_ERROR;
    }
    if (af->executor_secret_key == NULL)
        af->executor_secret_key = af->jwt_secret_key;
    if (af->authenticate_http_executors && af->executor_secret_key == NULL) {
        snprintf(err, errlen,
                 "--authenticate_http_executors needs --executor_secret_key");
        return FLAGS_ERROR;
    }
    if (af->default_role[0] == '\0') {
        snprintf(err, errlen, "--default_role: must not be empty");
        return FLAGS_ERROR;
    }
    if (af->registration_backoff_max_ns < af->registration_backoff_factor_ns) {
        snprintf(err, errlen,
                 "--registration_backoff_max: must not be below "
                 "--registration_backoff_factor");
        return FLAGS_ERROR;
    }
    if (af->update_retry_min_ns <= 0) {
        snprintf(err, errlen,
                 "--status_update_retry_interval_min: must be above 0");
        return FLAGS_ERROR;
    }
    if (af->update_retry_max_ns < af->update_retry_min_ns) {
        snprintf(err, errlen,
                 "--status_update_retry_interval_max: must not be below "
                 "--status_update_retry_interval_min");
        return FLAGS_ERROR;
    }
    if (strcmp(af->recover, "reconnect") == 0) {
        af->recover_cleanup = false;
    } else if (strcmp(af->recover, "cleanup") == 0) {
        af->recover_cleanup = true;
    } else {
        snprintf(err, errlen, "--recover: '%s' is not reconnect or cleanup",
                 af->recover);
        return FLAGS_ERROR;
    }
    if (check_oversubscription(af, err, errlen) != 0)
        return FLAGS_ERROR;
    if (af->max_completed_executors_per_framework < 0 ||
        af->max_completed_executors_per_framework > AGENT_MAX_COMPLETED ||
        af->max_completed_frameworks < 0 ||
        af->max_completed_frameworks > AGENT_MAX_COMPLETED) {
        snprintf(err, errlen, "--max_completed_%s: must be between 0 and %d",
                 af->max_completed_frameworks < 0 ||
                         af->max_completed_frameworks > AGENT_MAX_COMPLETED
                     ? "frameworks"
                     : "executors_per_framework",
                 AGENT_MAX_COMPLETED);
        return FLAGS_ERROR;
    }
    if (agent_launch_flags_check(&af->launch, err, errlen) != 0)
        return FLAGS_ERROR;
    if (af->hostname == NULL) {
        if (gethostname(af->hostname_buf, sizeof(af->hostname_buf) - 1) != 0)
            snprintf(af->hostname_buf, sizeof(af->hostname_buf), "localhost");
        af->hostname_buf[sizeof(af->hostname_buf) - 1] = '\0';
        af->hostname = af->hostname_buf;
    }
    return FLAGS_OK;
}

const struct flags *agent_flags_object(const struct agent_flags *af)
{
    return af->flags;
}

void agent_flags_fini(struct agent_flags *af)
{
    agent_launch_flags_fini(&af->launch);
    flags_free(af->flags);
    af->flags = NULL;
}
