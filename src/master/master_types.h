/*
 * The master's types: the entities it holds (frameworks, agents, tasks,
 * offers, machines, inverse offers), its metrics and struct master itself.
 * Types and limits only; each entity's functions are declared in the header
 * of the file that owns it (frameworks.h, agents.h, tasks.h, offers.h,
 * maintenance.h, ...), and docs/master-internals.md maps them.
 *
 * Everything here is touched only from the event loop's callbacks (STYLE.md,
 * "One loop, one owner"). The master owns frameworks, agents, tasks and
 * offers; the allocator (src/allocator) makes every allocation decision and
 * hears back what is used and what is given back.
 */
#ifndef OFFERD_MASTER_MASTER_TYPES_H
#define OFFERD_MASTER_MASTER_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "allocator/alloc.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/ids.h"
#include "common/prom.h"
#include "common/resources.h"
#include "master/flags_master.h"
#include "master/master.h"
#include "mesos/v1/maintenance.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/agent.pb-c.h"

struct admin_state;
struct files;
struct files_proxy;
struct master_webui;
struct event;
struct event_base;
struct master;
struct task_record;
struct master_quota;

/* Mesos's default heartbeat interval for scheduler streams. */
#define MASTER_HEARTBEAT_SECS 15

/* Most frameworks, agents, offers, tasks per framework the master keeps:
 * bounds on what peers can make it hold. */
#define MASTER_MAX_FRAMEWORKS   10000
#define MASTER_MAX_AGENTS       100000
#define MASTER_MAX_TASKS_PER_FW 1000000
#define MASTER_MAX_UNREACHABLE  100000 /* unreachable tasks per framework */

/* ---- Frameworks ---------------------------------------------------------- */

struct framework {
    struct master *m;
    char *id;
    Mesos__V1__FrameworkInfo *info; /* owned; info->id set */
    struct alloc_framework *alloc;
    uint32_t alloc_caps;
    bool partition_aware;
    bool refinement; /* RESERVATION_REFINEMENT: post-refinement format */
    char **roles;    /* the roles it subscribed with */
    uint32_t nroles;
    /* Kept by live_counters.c for /state's "used_resources": milli-units
     * of the regular cpus, mem, disk and gpus (master_live_names) its
     * non-terminal tasks hold, and how many of those tasks hold anything
     * else (another name, a range or set, a shared resource): while that
     * is not 0, /state sums the tasks instead. */
    int64_t live_used[4];
    uint32_t live_other;
    /* Its tasks (of the map below, any state) per Mesos__V1__TaskState,
     * kept by live_counters.c for /state-summary's counts. */
    uint32_t live_tasks[16];

    struct http_stream *stream; /* NULL while disconnected */
    char stream_id[ID_UUID_SIZE];
    enum http_encoding enc; /* the stream's encoding */
    bool active;            /* connected and not removed */
    bool subscribing;       /* a SUBSCRIBE waits for the registry */

    struct hmap *tasks;  /* task id -> struct task */
    struct hmap *offers; /* offer id -> struct offer */
    /* Its executors (custom or default, not the agents' command
     * executors): "<agent id>/<executor id>" -> struct executor, owned
     * (executors.c). */
    struct hmap *executors;
    /* Partition-aware frameworks: tasks last seen on agents now
     * unreachable, task id -> agent id (malloc'd), for reconciliation
     * (TASK_UNREACHABLE) until the agent comes back. */
    struct hmap *unreachable_tasks;
    struct event *failover_timer;
    /* Tasks that ended and were forgotten (terminal and acknowledged, or
     * removed with their agent or with the framework), oldest first: a
     * ring of at most --max_completed_tasks_per_framework records (tasks.c
     * adds and frees them): completed_tasks[(head + i) % cap] is the i-th
     * oldest (master_task_completed_at). */
    struct task_record *completed_tasks;
    uint32_t ncompleted_tasks, capcompleted_tasks, headcompleted_tasks;

    double registered_time;   /* wall seconds */
    double reregistered_time; /* 0: never */
    double unregistered_time; /* set when completed */

    /* Offers made in the current allocation cycle, sent as one OFFERS
     * event when the cycle ends. */
    struct offer **pending_offers;
    uint32_t npending, cappending;
};

/* ---- Agents ----------------------------------------------------------------
 */

/* One entry of struct agent's live_use: strings owned. */
struct live_use_entry {
    char *name;
    char *role; /* NULL: no allocation role */
    int64_t v;  /* milli-units */
};

struct agent {
    struct master *m;
    char *id;
    /* Kept by live_counters.c for /state-summary, as struct framework's
     * fields of the same names: over the tasks on this agent. */
    int64_t live_used[4];
    uint32_t live_other;
    uint32_t live_tasks[16];
    /* Kept by live_counters.c for /state's used_resources_full, so that
     * writing an agent walks none of its tasks: the live tasks' plain
     * scalars (master_live_plain_scalar) summed per name and allocation
     * role, in the order of the first task's entries. Usable while every
     * live task with anything to add lists the same (name, role) pairs in
     * the same order (live_use_same of them; live_use_odd list others) and
     * none holds anything else (live_use_slow): then any walk of the tasks
     * makes this list. */
    struct live_use_entry *live_use; /* owned, live_nuse entries */
    uint32_t live_nuse;
    uint32_t live_use_same, live_use_odd, live_use_slow;
    Mesos__V1__AgentInfo *info; /* owned; info->id set */
    char *ip;                   /* address the agent reported or came from */
    uint16_t port;
    char *version;
    struct alloc_agent *alloc;
    res_list static_res; /* resources it registered with */
    /* Its total: static_res with the checkpointed resources applied (the
     * allocator holds the live copy). */
    res_list total;
    /* Dynamic reservations and persistent volumes (no allocation roles),
     * and the version of that list (CHECKPOINT_RESOURCES). */
    res_list ckpt;
    uint64_t ckpt_version;
    /* Revocable resources: the agent's estimate (UPDATE_OVERSUBSCRIBED)
     * and the allocation slack the master adds (--offer_allocation_slack);
     * the allocator's revocable total is their sum. */
    res_list estimate;
    res_list slack;

    struct http_stream *stream; /* NULL while disconnected */
    char stream_id[ID_UUID_SIZE];
    enum http_encoding enc;
    bool connected;
    bool subscribing;
    char *principal; /* the principal it subscribed as; NULL: anonymous */

    struct hmap *tasks;  /* "<framework id>/<task id>" -> struct task */
    struct hmap *offers; /* offer id -> struct offer */
    /* "<framework id>/<executor id>" -> struct executor (owned by its
     * framework's map). */
    struct hmap *executors;

    uint64_t ping_seq;   /* last PING sent */
    bool pong_pending;   /* no PONG since the last PING */
    uint32_t ping_slot1; /* 1 + its slot (ping_spread.c); 0: not yet known */
    uint32_t missed_pings;

    double registered_time;
    double reregistered_time;

    /* Operator state (persisted with the agent): DEACTIVATE_AGENT or
     * DRAIN_AGENT stop its offers until REACTIVATE_AGENT. */
    bool deactivated;
    Mesos__V1__DrainInfo *drain; /* owned; NULL unless drained/draining */
    bool drain_writing;          /* DRAINED is being recorded */

    /* The frameworks' answers to this agent's inverse offers since its
     * unavailability was set, for /maintenance/status. */
    struct io_answer *io_answers;
    uint32_t nio_answers, capio_answers;
};

/* A framework's latest answer to an agent's inverse offer. */
struct io_answer {
    char *framework_id;
    enum alloc_io_status status; /* UNKNOWN until answered */
    double timestamp;            /* wall seconds of the answer (or offer) */
};

/* ---- Maintenance ------------------------------------------------------------
 */

/* A machine in the maintenance schedule (machines not listed are UP). */
struct machine {
    char *key;      /* "<hostname>/<ip>", as master_machine_key makes it */
    char *hostname; /* lower case; "" when not given */
    char *ip;       /* "" when not given */
    Mesos__V1__MachineInfo__Mode mode; /* DRAINING or DOWN */
    struct alloc_unavailability unav;
};

/* An inverse offer sent to a framework and not yet answered. */
struct inverse_offer {
    char *id;
    struct framework *fw;
    struct agent *agent;
    struct alloc_unavailability unav;
    struct event *timer; /* --offer_timeout, NULL when none */
};

/* ---- Tasks
 * ------------------------------------------------------------------- */

/* A state a task went through, and when (wall seconds). */
struct task_state_at {
    Mesos__V1__TaskState state;
    double timestamp;
};
#define MASTER_TASK_HISTORY 8

struct task {
    struct framework *fw; /* may be a placeholder for an unknown framework */
    struct agent *agent;
    /* agent->id (borrowed; "" without an agent), so that /state writes a
     * task without touching its agent's struct: with 10,000 agents that
     * was a cache miss per task. */
    const char *agent_id;
    /* info->task_id->value (borrowed), for the same reason: one pointer
     * fewer to follow. */
    const char *id;
    Mesos__V1__TaskInfo *info; /* owned */
    /* "<framework id>/<task id>": the agent's map borrows it as the key,
     * as the framework's borrows info->task_id->value. */
    char *key;
    res_list resources; /* with allocation role; read-only */
    char *role;         /* allocation role */
    Mesos__V1__TaskState state;
    /* (The bools sit in what would be padding: 160 bytes a task.) */
    bool resources_packed;         /* resources is res_list_copy_packed's */
    Mesos__V1__TaskStatus *status; /* latest status, owned; NULL: none yet */
    /* The uuid of the last update forwarded for a terminal state: its
     * acknowledgement lets the master forget the task. */
    uint8_t terminal_uuid[16];
    bool has_terminal_uuid;
    bool live_counted; /* in m->live (live_counters.c) */
    /* The state of the latest update forwarded to the framework (or, for
     * an adopted task, of the update its agent is delivering): what
     * reconciliation answers, so it never runs ahead of the updates. */
    Mesos__V1__TaskState status_update_state;
    bool has_status_update_state;
    bool recovered;      /* resources given back to the allocator */
    bool kill_requested; /* resend KILL_TASK when the agent reconnects */
    bool preempted;      /* evicted to free revocable resources */
    double launched;     /* wall seconds it was launched (or adopted) */
    /* The states the task went through, oldest first (the latest
     * MASTER_TASK_HISTORY), for /state's "statuses": an array of caphist
     * entries grown as states come (a running task has two; eight inline
     * were 128 bytes), NULL before the first. */
    struct task_state_at *hist;
    uint32_t nhist;
    uint32_t caphist;
    /* m->live's list of every task in the order the master learned of it
     * (launch or adoption): /tasks pages over it. */
    struct task *live_prev, *live_next;
};

/* An executor of a framework on an agent, from the LAUNCH or LAUNCH_GROUP
 * that first named it (or the agent's report after a master failover)
 * until the agent says it exited, or the agent or framework goes. Its
 * resources are allocated once, however many tasks share it. */
struct executor {
    struct framework *fw;
    struct agent *agent;
    /* Owned: framework_id set, resources with their allocation role (what
     * RUN_TASK carries and what a later launch must match). */
    Mesos__V1__ExecutorInfo *info;
    char *fw_key;       /* "<agent id>/<executor id>" (fw->executors) */
    char *ag_key;       /* "<framework id>/<executor id>" (agent->executors) */
    res_list resources; /* with allocation role */
};

/* A task that ended, as the master remembers it for /state and /tasks
 * (Mesos's completed tasks): what those endpoints show of it, not the
 * TaskInfo. Strings owned. */
struct task_record {
    char *id;
    char *name;
    char *agent_id;             /* "" when it had none */
    char *role;                 /* allocation role */
    Mesos__V1__TaskState state; /* terminal (TASK_KILLED when the framework
                                   was removed under a live task) */
    res_list resources;         /* with allocation role */
    struct task_state_at hist[MASTER_TASK_HISTORY];
    uint32_t nhist;
    /* What Mesos's Task keeps of the TaskInfo (owned copies, NULL when the
     * TaskInfo had none), and the latest status forwarded (owned, NULL:
     * none), for its uuid and source. */
    char *user; /* the command's user */
    Mesos__V1__Labels *labels;
    Mesos__V1__DiscoveryInfo *discovery;
    Mesos__V1__ContainerInfo *container;
    Mesos__V1__HealthCheck *health_check;
    Mesos__V1__TaskStatus *status;
};

/* ---- Offers
 * ------------------------------------------------------------------- */

struct offer {
    char *id;
    struct framework *fw;
    struct agent *agent;
    char *role;
    res_list resources; /* with allocation role; packed (one block, see
                           res_list_copy_packed): read-only */
    bool has_unav;
    struct alloc_unavailability unav;
    struct event *timer; /* --offer_timeout, NULL when none */
    int64_t created_ns;  /* monotonic, when made (offer_accept_seconds) */
};

/* ---- Metrics
 * ------------------------------------------------------------------ */

/* What /metrics/snapshot would otherwise count by scanning every task,
 * kept current by live_counters.c. */
struct master_live {
    uint64_t tasks[16]; /* tasks the master holds, by TaskState */
    /* Milli-units of cpus, mem, disk, gpus (master_live_names) held by
     * non-terminal tasks: [0] regular resources, [1] revocable ones. */
    int64_t used[2][4];
    struct task *head, *tail; /* every task, oldest first */
};

/* What /metrics/snapshot would otherwise count by visiting every agent,
 * framework and offer, kept current by metrics_counters.c. */
struct master_mcounts {
    uint32_t agents_connected;     /* in m->agents with ag->connected */
    uint32_t frameworks_active;    /* in m->frameworks with fw->active */
    uint32_t frameworks_connected; /* in m->frameworks with a stream */
    /* Milli-units of cpus, mem, disk, gpus (master_live_names) in the
     * offers of m->offers, regular and revocable together. */
    int64_t offered[4];
};

struct master_metrics {
    uint64_t tasks_by_state[16]; /* terminal transitions counted, by state */
    uint64_t messages_register_framework;
    uint64_t messages_reregister_framework;
    uint64_t messages_unregister_framework;
    uint64_t messages_launch_tasks;
    uint64_t messages_decline_offers;
    uint64_t messages_revive_offers;
    uint64_t messages_resource_request; /* REQUEST calls */
    uint64_t messages_suppress_offers;
    uint64_t messages_kill_task;
    uint64_t messages_status_update;
    uint64_t messages_status_update_acknowledgement;
    /* ACKNOWLEDGEs forwarded to a connected agent, and the others (agent
     * unknown or disconnected, task update not from this master). */
    uint64_t valid_status_update_acknowledgements;
    uint64_t invalid_status_update_acknowledgements;
    uint64_t messages_reconcile_tasks;
    uint64_t messages_reconcile_operations;
    uint64_t messages_operation_status_update_acknowledgement;
    uint64_t valid_operation_status_update_acknowledgements;
    uint64_t invalid_operation_status_update_acknowledgements;
    uint64_t messages_framework_to_executor;
    uint64_t messages_register_slave;
    uint64_t messages_reregister_slave;
    uint64_t messages_unregister_slave; /* the agent API's UNREGISTER */
    uint64_t valid_status_updates;
    uint64_t invalid_status_updates;
    uint64_t valid_framework_to_executor_messages;
    uint64_t invalid_framework_to_executor_messages;
    uint64_t messages_executor_to_framework;
    uint64_t valid_executor_to_framework_messages;
    uint64_t invalid_executor_to_framework_messages;
    uint64_t messages_exited_executor;
    uint64_t slave_registrations;
    uint64_t slave_reregistrations;
    uint64_t slave_removals;
    /* slave_removals by how (indexed by enum agent_removal, agents.h):
     * unreachable, shut down, by an operator. */
    uint64_t slave_removals_by_how[3];
    uint64_t recovery_slave_removals; /* not back after a master restart */
    uint64_t tasks_adopted;           /* learnt from re-registering agents */
    uint64_t agent_reconciliations;   /* tasks the master asked agents about */
    uint64_t slack_evictions;         /* revocable tasks evicted for slack */
    uint64_t tasks_preempted; /* ended REASON_CONTAINER_PREEMPTED (agent QoS
                                 or slack) */
    uint64_t offers_rescinded;
    uint64_t offers_declined;
    uint64_t offers_accepted;
    uint64_t invalid_calls;
    uint64_t allocation_runs;
    double allocation_run_ms;          /* last cycle */
    struct prom_hist allocation_cycle; /* every cycle's run time, seconds */
    struct prom_hist offer_answer;     /* offer made -> ACCEPT or DECLINE, s */
    uint64_t opev_dropped; /* operator subscribers cut off as too slow */
    /* Events meant for a framework or an agent that had no connected
     * stream to take them (Mesos's master/dropped_messages). */
    uint64_t dropped_messages;
};

/* ---- The master -------------------------------------------------------------
 */

/* An agent marked unreachable or gone: when (wall seconds, as recorded in
 * the registry). The values of m->unreachable_agents and m->gone_agents;
 * registry_gc.h puts and deletes them. */
struct agent_mark {
    double time;
};

/* Operator changes waiting to run one at a time (changes.c). */
struct master_change;
struct master_changes {
    struct master_change *head, *tail; /* waiting, in arrival order */
    struct master_change *running;     /* started, not ended */
    bool pumping;                      /* inside the loop that starts them */
    bool stopped;                      /* shutting down: no more changes */
};

struct master {
    struct event_base *base;
    struct http_server *http;
    const struct master_flags *flags;
    struct master_options opts;
    struct alloc *alloc;
    Mesos__V1__DomainInfo *domain; /* --domain (owned); NULL: none */
    struct registry *registry;
    struct master_quota *quota;   /* weights and quota (quota.c) */
    struct master_ops *ops;       /* operations with feedback (operations.c) */
    struct master_authz *authz;   /* credentials and ACLs (authz.c) */
    struct master_limits *limits; /* frameworks per principal, SUBSCRIBE
                                     rates (limits.c) */

    /* /state written in slices: its productions (state_stream.c). */
    struct state_streams *state_streams;

    char id[ID_UUID_SIZE]; /* this master's id, the base of derived ids */
    char *ip;              /* advertised address */
    uint16_t port;
    double start_time;  /* wall seconds */
    int64_t start_mono; /* monotonic ns */

    struct hmap *frameworks; /* id -> struct framework */
    struct hmap *agents;     /* id -> struct agent */
    struct hmap *offers;     /* id -> struct offer */
    /* Frameworks removed (torn down or failed over for good), the latest
     * --max_completed_frameworks: they may not subscribe again, and /state
     * shows them with their completed tasks. id -> struct framework (no
     * live tasks, no stream). */
    struct hmap *completed;
    char **completed_order; /* FIFO of completed ids, for the cap */
    uint32_t ncompleted;
    /* Agents the registry knows from before a restart that have not
     * re-registered yet: id -> Offerd__Registry__Agent (owned). */
    struct hmap *recovered_agents;
    /* Agents marked gone (MARK_AGENT_GONE, DRAIN_AGENT with mark_gone):
     * refused until --registry_max_agent_age or --registry_max_agent_count
     * forgets them (registry_gc.h). id -> struct agent_mark (owned). */
    struct hmap *gone_agents;
    /* The agent whose MARK_AGENT_GONE is being recorded (agents.c; one at
     * a time, as an operator change), refused registration meanwhile;
     * NULL: none. Borrowed from the change. */
    const char *marking_gone;
    /* Agents marked unreachable (missed pings, or not back within
     * --agent_reregister_timeout after a restart): id -> struct agent_mark
     * (owned). */
    struct hmap *unreachable_agents;
    struct event *registry_gc_timer; /* --registry_gc_interval */
    bool registry_gc_writing;        /* a collection's batch is in flight */
    struct event *reregister_timer;  /* --agent_reregister_timeout */

    /* Maintenance: the schedule as posted (hostnames in lower case; NULL:
     * none) and the machines in it, key -> struct machine. */
    Mesos__V1__Maintenance__Schedule *schedule;
    struct hmap *machines;
    struct hmap *inverse_offers; /* id -> struct inverse_offer */
    /* Operator changes run one at a time, in arrival order. */
    struct master_changes changes;
    struct event *drain_check; /* looks for drained agents, soon */

    uint64_t next_framework, next_agent, next_offer, next_inverse_offer;

    struct event *alloc_timer; /* every --allocation_interval */
    struct event *alloc_soon;  /* a cycle right after events */
    bool alloc_soon_pending;
    struct event *ping_timer; /* MASTER_PING_SLOTS per --agent_ping_timeout */
    uint32_t ping_slot;       /* the slot the last tick pinged */
    int64_t ping_due_ns;      /* monotonic time the next tick is due; 0: none
                                 yet (ping_spread.c) */
    struct event *heartbeat_timer; /* every MASTER_HEARTBEAT_SECS */

    bool in_cycle; /* inside alloc_run: offers batch per framework */
    struct framework **cycle_fws; /* frameworks with pending offers */
    uint32_t ncycle_fws, capcycle_fws;

    /* Operator API subscribers (operator_events.c owns them). */
    struct opev_sub *opev_subs;
    uint32_t nopev_subs;

    struct master_metrics metrics;
    struct master_live live;  /* live_counters.c */
    struct master_mcounts mc; /* metrics_counters.c */

    struct admin_state *admin; /* admin_endpoints.c's (/logging/toggle) */
    struct files *files;       /* files.c's: /files, LIST_FILES, READ_FILE */
    /* webui.c's (/ and /static/) and files_proxy.c's (/agent/<id>/files) */
    struct master_webui *webui;
    struct files_proxy *files_proxy;
};

#endif
