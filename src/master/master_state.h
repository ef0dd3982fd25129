/*
 * The master's state and the functions its files share. Private to
 * src/master: main.c sees only master.h.
 *
 * Everything here is touched only from the event loop's callbacks (STYLE.md,
 * "One loop, one owner"). The master owns frameworks, agents, tasks and
 * offers; the allocator (src/allocator) makes every allocation decision and
 * hears back what is used and what is given back.
 *
 * Files:
 *   master.c          lifecycle, timers, sending events, the allocator glue
 *   frameworks.c      subscription, disconnection, failover, removal
 *   agents.c          the agent API: registration, pings, status updates
 *   tasks.c           tasks: launch, status updates, kills, reconciliation
 *   offers.c          offers: creation from allocations, rescinds, timeouts
 *   scheduler_api.c   POST /api/v1/scheduler: decoding and every call
 *   state_endpoints.c /state, /frameworks, /slaves, /tasks, /roles, metrics
 *   persist.c         durable changes through the registry
 *   maintenance.c     machines, the schedule, inverse offers, agent draining
 *   operator_api.c    POST /api/v1: the v1 operator API
 */
#ifndef OFFERD_MASTER_MASTER_STATE_H
#define OFFERD_MASTER_MASTER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "allocator/alloc.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/ids.h"
#include "common/resources.h"
#include "master/flags_master.h"
#include "mesos/v1/maintenance.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/agent.pb-c.h"

struct event;
struct event_base;
struct master;

/* Mesos's default heartbeat interval for scheduler streams. */
#define MASTER_HEARTBEAT_SECS 15

/* Most frameworks, agents, offers, tasks per framework the master keeps:
 * bounds on what peers can make it hold. */
#define MASTER_MAX_FRAMEWORKS   10000
#define MASTER_MAX_AGENTS       100000
#define MASTER_MAX_TASKS_PER_FW 1000000
#define MASTER_MAX_COMPLETED    1000   /* completed frameworks remembered */
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

    struct http_stream *stream; /* NULL while disconnected */
    char stream_id[ID_UUID_SIZE];
    enum http_encoding enc; /* the stream's encoding */
    bool active;            /* connected and not removed */
    bool subscribing;       /* a SUBSCRIBE waits for the registry */

    struct hmap *tasks;  /* task id -> struct task */
    struct hmap *offers; /* offer id -> struct offer */
    /* Partition-aware frameworks: tasks last seen on agents now
     * unreachable, task id -> agent id (malloc'd), for reconciliation
     * (TASK_UNREACHABLE) until the agent comes back. */
    struct hmap *unreachable_tasks;
    struct event *failover_timer;

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

struct agent {
    struct master *m;
    char *id;
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

    struct hmap *tasks;  /* "<framework id>/<task id>" -> struct task */
    struct hmap *offers; /* offer id -> struct offer */

    uint64_t ping_seq; /* last PING sent */
    bool pong_pending; /* no PONG since the last PING */
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

struct task {
    struct framework *fw; /* may be a placeholder for an unknown framework */
    struct agent *agent;
    Mesos__V1__TaskInfo *info; /* owned */
    char *key;                 /* "<framework id>/<task id>" (agent's map) */
    res_list resources;        /* with allocation role */
    char *role;                /* allocation role */
    Mesos__V1__TaskState state;
    Mesos__V1__TaskStatus *status; /* latest status, owned; NULL: none yet */
    /* The uuid of the last update forwarded for a terminal state: its
     * acknowledgement lets the master forget the task. */
    uint8_t terminal_uuid[16];
    bool has_terminal_uuid;
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
     * MASTER_TASK_HISTORY), for /state's "statuses". */
    struct {
        Mesos__V1__TaskState state;
        double timestamp;
    } hist[8];
    uint32_t nhist;
};
#define MASTER_TASK_HISTORY 8

/* ---- Offers
 * ------------------------------------------------------------------- */

struct offer {
    char *id;
    struct framework *fw;
    struct agent *agent;
    char *role;
    res_list resources; /* with allocation role */
    bool has_unav;
    struct alloc_unavailability unav;
    struct event *timer; /* --offer_timeout, NULL when none */
};

/* ---- Metrics
 * ------------------------------------------------------------------ */

struct master_metrics {
    uint64_t tasks_by_state[16]; /* terminal transitions counted, by state */
    uint64_t messages_register_framework;
    uint64_t messages_reregister_framework;
    uint64_t messages_unregister_framework;
    uint64_t messages_launch_tasks;
    uint64_t messages_decline_offers;
    uint64_t messages_revive_offers;
    uint64_t messages_suppress_offers;
    uint64_t messages_kill_task;
    uint64_t messages_status_update;
    uint64_t messages_status_update_acknowledgement;
    uint64_t messages_reconcile_tasks;
    uint64_t messages_framework_to_executor;
    uint64_t messages_register_slave;
    uint64_t messages_reregister_slave;
    uint64_t valid_status_updates;
    uint64_t invalid_status_updates;
    uint64_t valid_framework_to_executor_messages;
    uint64_t invalid_framework_to_executor_messages;
    uint64_t slave_registrations;
    uint64_t slave_reregistrations;
    uint64_t slave_removals;
    uint64_t slave_unreachable_completed;
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
    double allocation_run_ms; /* last cycle */
};

/* ---- The master -------------------------------------------------------------
 */

struct master {
    struct event_base *base;
    struct http_server *http;
    const struct master_flags *flags;
    struct alloc *alloc;
    struct registry *registry;

    char id[ID_UUID_SIZE]; /* this master's id, the base of derived ids */
    char *ip;              /* advertised address */
    uint16_t port;
    double start_time;  /* wall seconds */
    int64_t start_mono; /* monotonic ns */

    struct hmap *frameworks; /* id -> struct framework */
    struct hmap *agents;     /* id -> struct agent */
    struct hmap *offers;     /* id -> struct offer */
    /* Frameworks removed (torn down or failed over for good): they may not
     * subscribe again. id -> struct framework (no tasks, no stream). */
    struct hmap *completed;
    char **completed_order; /* FIFO of completed ids, for the cap */
    uint32_t ncompleted;
    /* Agents the registry knows from before a restart that have not
     * re-registered yet: id -> Offerd__Registry__Agent (owned). */
    struct hmap *recovered_agents;
    /* Agents marked gone (DRAIN_AGENT with mark_gone): refused for good.
     * id -> (void *)1. */
    struct hmap *gone_agents;
    /* Agents marked unreachable (missed pings, or not back within
     * --agent_reregister_timeout after a restart): id -> (void *)1. */
    struct hmap *unreachable_agents;
    struct event *reregister_timer; /* --agent_reregister_timeout */

    /* Maintenance: the schedule as posted (hostnames in lower case; NULL:
     * none) and the machines in it, key -> struct machine. */
    Mesos__V1__Maintenance__Schedule *schedule;
    struct hmap *machines;
    struct hmap *inverse_offers; /* id -> struct inverse_offer */
    /* Operator changes run one at a time, in arrival order. */
    struct maint_op *maint_head, *maint_tail;
    bool maint_busy;
    bool maint_stopped;        /* shutting down: no more changes */
    struct event *drain_check; /* looks for drained agents, soon */

    uint64_t next_framework, next_agent, next_offer, next_inverse_offer;

    struct event *alloc_timer; /* every --allocation_interval */
    struct event *alloc_soon;  /* a cycle right after events */
    bool alloc_soon_pending;
    struct event *ping_timer;      /* every --agent_ping_timeout */
    struct event *heartbeat_timer; /* every MASTER_HEARTBEAT_SECS */

    bool in_cycle; /* inside alloc_run: offers batch per framework */
    struct framework **cycle_fws; /* frameworks with pending offers */
    uint32_t ncycle_fws, capcycle_fws;

    struct master_metrics metrics;
};

/* ---- master.c ------------------------------------------------------------ */

/* Wall-clock seconds now. */
double master_now(void);
/* Ask for an allocation cycle soon (after the current callback chain). */
void master_allocate_soon(struct master *m);
/* Encode ev in fw's encoding and send it on fw's stream (dropped if the
 * framework is disconnected). Returns 0 when sent. */
int master_send_to_framework(struct master *m, struct framework *fw,
                             const Mesos__V1__Scheduler__Event *ev);
/* Send ev on ag's stream (dropped if disconnected). */
int master_send_to_agent(struct master *m, struct agent *ag,
                         const Offerd__Agent__Event *ev);
/* Fill a MasterInfo for events (strings borrowed from m; the message lives
 * in *info and *addr, both caller storage). */
void master_fill_info(const struct master *m, Mesos__V1__MasterInfo *info,
                      Mesos__V1__Address *addr);
/* Deep copy of a protobuf-c message (pack and unpack); NULL stays NULL. */
void *master_pb_copy(const ProtobufCMessageDescriptor *desc,
                     const ProtobufCMessage *msg);
/* The role string of a list of resources' allocation role, or NULL when
 * they carry none or several. */
const char *master_single_role(const res_list *l);

/* ---- frameworks.c ------------------------------------------------------- */

struct framework *master_framework_find(struct master *m, const char *id);
/* Handle a SUBSCRIBE call (validated decode in call); replies on req. */
void master_framework_subscribe(struct master *m, struct http_request *req,
                                const Mesos__V1__Scheduler__Call *call,
                                enum http_encoding reply_enc);
/* Handle UPDATE_FRAMEWORK with a new FrameworkInfo (same id); replies on
 * req (200 when applied). */
void master_framework_update(struct master *m, struct http_request *req,
                             struct framework *fw,
                             const Mesos__V1__FrameworkInfo *fi);
/* The framework's stream closed: deactivate, rescind offers, start the
 * failover timeout. */
void master_framework_disconnected(struct master *m, struct framework *fw);
/* Remove a framework for good (teardown, failover timeout): kill its tasks,
 * rescind its offers, remove it from the allocator and the registry, keep
 * it among the completed ones. */
void master_framework_remove(struct master *m, struct framework *fw,
                             const char *why);
/* Create an inactive framework known only from an agent's report. */
struct framework *
master_framework_placeholder(struct master *m,
                             const Mesos__V1__FrameworkInfo *info);
void master_framework_free(struct framework *fw);

/* ---- agents.c ----------------------------------------------------------- */

struct agent *master_agent_find(struct master *m, const char *id);
/* POST /api/v1/agent. */
void master_agent_api(struct http_request *req, void *arg);
/* Why an agent is removed. */
enum agent_removal {
    AGENT_REMOVED_UNREACHABLE, /* missed pings: tasks UNREACHABLE or LOST,
                                  recorded unreachable in the registry */
    AGENT_REMOVED_SHUTDOWN,    /* it unregistered: tasks LOST */
    AGENT_REMOVED_BY_OPERATOR, /* machine down, marked gone: tasks
                                  GONE_BY_OPERATOR or LOST */
};
/* Remove an agent: its tasks are reported as `why` decides, its offers and
 * inverse offers are rescinded, the allocator forgets it. */
void master_agent_remove(struct master *m, struct agent *ag,
                         enum agent_removal how, const char *why);
/* After --agent_reregister_timeout: agents from the registry that did not
 * come back are marked unreachable. */
void master_agents_reregister_timeout(struct master *m);
/* A snapshot of ag's tasks (callers may remove tasks while they walk it):
 * a malloc'd array (caller frees) of *n tasks. */
struct task **master_agent_tasks(const struct agent *ag, size_t *n);
/* Send ag a SHUTDOWN event (it kills its tasks and exits). */
void master_agent_shutdown(struct master *m, struct agent *ag);
/* The periodic ping: count misses, remove agents past the limit, ping the
 * rest. */
void master_agents_ping(struct master *m);
void master_agent_free(struct agent *ag);

/* ---- tasks.c ------------------------------------------------------------- */

bool master_task_state_is_terminal(Mesos__V1__TaskState s);
/* Create a task in TASK_STAGING from info (copied) on ag for fw and send
 * RUN_TASK. resources: what it uses (with allocation role). */
struct task *master_task_launch(struct master *m, struct framework *fw,
                                struct agent *ag,
                                const Mesos__V1__TaskInfo *info,
                                const res_list *resources, const char *role);
/* Create the n tasks of a group as master_task_launch does (each with
 * resources[i]) and send them to ag in one RUN_TASK_GROUP with executor
 * (copied; its framework_id is set to fw's). */
void master_task_launch_group(struct master *m, struct framework *fw,
                              struct agent *ag,
                              const Mesos__V1__ExecutorInfo *executor,
                              Mesos__V1__TaskInfo *const *infos, size_t n,
                              const res_list *resources, const char *role);
/* A status update from an agent. */
void master_task_status_update(struct master *m, struct agent *ag,
                               const Offerd__Agent__Call__Update *u);
/* The framework acknowledged an update. */
void master_task_acknowledge(struct master *m, struct framework *fw,
                             const char *agent_id, const char *task_id,
                             const uint8_t *uuid, size_t uuid_len);
/* Ask the agent to kill a task (or answer for an unknown one). */
void master_task_kill(struct master *m, struct framework *fw,
                      const char *task_id, const char *agent_id,
                      const Mesos__V1__KillPolicy *policy);
/* Kill t to free its resources: the agent reports TASK_KILLED with
 * SOURCE_AGENT and reason (e.g. REASON_CONTAINER_PREEMPTED). */
void master_task_evict(struct master *m, struct task *t,
                       Mesos__V1__TaskStatus__Reason reason);
/* Explicit (n > 0) or implicit reconciliation. */
void master_task_reconcile(
    struct master *m, struct framework *fw,
    Mesos__V1__Scheduler__Call__Reconcile__Task *const *tasks, size_t n);
/* Send fw an UPDATE generated by the master (no uuid: no ack needed). */
void master_send_master_update(struct master *m, struct framework *fw,
                               const char *task_id, const char *agent_id,
                               Mesos__V1__TaskState state,
                               Mesos__V1__TaskStatus__Reason reason,
                               const char *message);
/* The state a lost task is reported in to fw (UNREACHABLE or LOST). */
Mesos__V1__TaskState master_lost_state(const struct framework *fw);
/* Give a task's resources back to the allocator (once). */
void master_task_recover(struct master *m, struct task *t);
/* Forget a task (both maps); its resources must have been recovered. */
void master_task_remove(struct master *m, struct task *t);
/* Move t to state (a master decision, e.g. agent lost): record a status,
 * recover resources if terminal, tell the framework. */
void master_task_transition(struct master *m, struct task *t,
                            Mesos__V1__TaskState state,
                            Mesos__V1__TaskStatus__Source source,
                            Mesos__V1__TaskStatus__Reason reason,
                            const char *message);
void master_task_free(struct task *t);
/* Count a task reaching state (metrics). */
void master_task_count(struct master *m, Mesos__V1__TaskState state);

/* ---- offers.c ------------------------------------------------------------ */

/* The allocator's offer callback (alloc_offer_fn). */
void master_offer_from_alloc(void *arg, void *framework_udata,
                             void *agent_udata, const char *role,
                             const res_list *resources,
                             const struct alloc_unavailability *unav);
/* Send every framework its offers made in this cycle. */
void master_offers_flush(struct master *m);
/* Forget an offer and give its resources back (refuse_ns >= 0: with a
 * filter). With rescind, tell the framework (RESCIND). */
void master_offer_remove(struct master *m, struct offer *o, bool rescind,
                         int64_t refuse_ns);
/* Remove every offer of fw / on ag. */
void master_offers_of_framework(struct master *m, struct framework *fw,
                                bool rescind);
void master_offers_on_agent(struct master *m, struct agent *ag, bool rescind);

/* ---- scheduler_api.c ---------------------------------------------------- */

/* The refusal a Filters asks for, in ns (Mesos's 5 s default, clamped). */
int64_t master_refuse_ns(const Mesos__V1__Filters *f);

/* POST /api/v1/scheduler. */
void master_scheduler_api(struct http_request *req, void *arg);

/* ---- state_endpoints.c -------------------------------------------------- */

/* Register /state, /state-summary, /frameworks, /slaves, /tasks, /roles,
 * /metrics/snapshot (and their /master/ aliases). */
int master_state_endpoints_register(struct master *m);

/* ---- persist.c ------------------------------------------------------------
 */

/* Open the registry (flags->registry, in flags->work_dir) and recover what it
 * holds into m: frameworks (inactive, awaiting re-subscription) and
 * admitted agents (awaiting re-registration). Returns 0, or -1 with a
 * reason in err. */
int master_persist_open(struct master *m, char *err, size_t errlen);
/* Close the registry, waiting for writes in flight. */
void master_persist_close(struct master *m);
/* Free a value of m->recovered_agents. */
void master_persist_free_recovered(void *p);

/* Done callback of a durable change: ok, or a one-line reason. */
typedef void (*master_persist_fn)(struct master *m, bool ok, const char *err,
                                  void *arg);
struct registry_batch;
/* Apply batch (taken) durably, then call done on the loop. */
void master_persist_batch(struct master *m, struct registry_batch *batch,
                          master_persist_fn done, void *arg);
/* Record (put) or forget (del) an admitted agent / a framework durably, then
 * call done on the loop. The agent's operator state (deactivated, drain;
 * drain may be NULL) is recorded with it. */
void master_persist_agent_info(struct master *m,
                               const Mesos__V1__AgentInfo *info,
                               bool deactivated,
                               const Mesos__V1__DrainInfo *drain,
                               const res_list *ckpt, uint64_t ckpt_version,
                               master_persist_fn done, void *arg);
/* A batch putting ag's registry record with the given operator state (and
 * its checkpointed resources). NULL with a reason when it cannot be
 * encoded. */
struct registry_batch *
master_agent_record_batch(const struct agent *ag, bool deactivated,
                          const Mesos__V1__DrainInfo *drain, char *err,
                          size_t errlen);
/* Record ag as it is now. */
void master_persist_agent(struct master *m, const struct agent *ag,
                          master_persist_fn done, void *arg);
void master_persist_framework(struct master *m,
                              const Mesos__V1__FrameworkInfo *info,
                              double registered_time, master_persist_fn done,
                              void *arg);
void master_persist_framework_removed(struct master *m, const char *id,
                                      master_persist_fn done, void *arg);
void master_persist_agent_unreachable(struct master *m, const char *id,
                                      master_persist_fn done, void *arg);

/* ---- maintenance.c --------------------------------------------------------
 */

/* Register /maintenance/schedule, /maintenance/status, /machine/down,
 * /machine/up (and their /master/ aliases). */
int master_maintenance_endpoints_register(struct master *m);
/* Answer queued operator calls 503 and take no more (before the registry
 * closes; the change in flight completes). */
void master_maintenance_stop(struct master *m);
/* Free the maintenance state. */
void master_maintenance_free(struct master *m);
/* Recover the schedule and machines from the registry's state. */
void master_maintenance_recover(struct master *m,
                                const Mesos__V1__Maintenance__Schedule *sched,
                                Mesos__V1__MachineInfo *const *machines,
                                size_t n);
/* The machine an agent (hostname, ip) belongs to, or NULL (UP). */
struct machine *master_machine_of(struct master *m, const char *hostname,
                                  const char *ip);
/* The allocator's inverse offer callback (alloc_inverse_offer_fn). */
void master_inverse_offer_from_alloc(void *arg, void *framework_udata,
                                     void *agent_udata,
                                     const struct alloc_unavailability *unav);
/* A framework's ACCEPT_INVERSE_OFFERS / DECLINE_INVERSE_OFFERS. */
void master_inverse_offers_answer(struct master *m, struct framework *fw,
                                  Mesos__V1__OfferID *const *ids, size_t n,
                                  enum alloc_io_status status,
                                  const Mesos__V1__Filters *filters);
/* Forget the inverse offers of fw / on ag (rescind: tell the framework). */
void master_inverse_offers_of_framework(struct master *m, struct framework *fw,
                                        bool rescind);
void master_inverse_offers_on_agent(struct master *m, struct agent *ag,
                                    bool rescind);
/* After a cycle: rescind inverse offers whose framework holds nothing on
 * the agent any more. */
void master_inverse_offers_sweep(struct master *m);
/* A task of ag was forgotten: a draining agent may now be drained. */
void master_agent_drain_check_soon(struct master *m, struct agent *ag);
/* The JSON of ag's operator state for /state: adds "deactivated" and, when
 * set, "drain_info" to obj. */
void master_agent_state_json(const struct agent *ag, json_t *obj);
/* Operator calls, shared by the legacy endpoints and /api/v1. Each replies
 * on req (200 with an empty body on success). */
void master_maint_update_schedule(struct master *m, struct http_request *req,
                                  const Mesos__V1__Maintenance__Schedule *s);
void master_maint_machines(struct master *m, struct http_request *req,
                           bool down, Mesos__V1__MachineID *const *ids,
                           size_t n);
void master_maint_drain_agent(struct master *m, struct http_request *req,
                              const char *agent_id,
                              const Mesos__V1__DurationInfo *max_grace,
                              bool mark_gone);
void master_maint_set_agent_active(struct master *m, struct http_request *req,
                                   const char *agent_id, bool active);
/* The schedule (never NULL; borrowed) and the cluster status (new message,
 * free with protobuf_c_message_free_unpacked). */
const Mesos__V1__Maintenance__Schedule *
master_maint_schedule(const struct master *m);
Mesos__V1__Maintenance__ClusterStatus *
master_maint_status(const struct master *m);

/* ---- reservations.c -------------------------------------------------------
 */

enum master_resv_op {
    MASTER_RESV_RESERVE = 0,
    MASTER_RESV_UNRESERVE = 1,
    MASTER_RESV_CREATE = 2,
    MASTER_RESV_DESTROY = 3,
};
/* The conversion an operation makes of res on ag (from -> to, without
 * allocation roles; both replaced), validated as Mesos does; fw is NULL
 * for an operator, alloc_role the role fw's resources are allocated to.
 * Returns 0, -1 (invalid, reason in err) or -2 (conflicts with the agent's
 * state: a volume in use). */
int master_resv_convert(struct agent *ag, const struct framework *fw,
                        const char *alloc_role, enum master_resv_op op,
                        const res_list *res, res_list *from, res_list *to,
                        char *err, size_t errlen);
/* A RESERVE/UNRESERVE/CREATE/DESTROY (or unsupported) operation of an
 * ACCEPT, applied to remaining (the offers' resources left, with allocation
 * role `role`). A refused operation changes nothing and is reported to the
 * framework (UPDATE_OPERATION_STATUS, OPERATION_ERROR). */
void master_resv_accept_op(struct master *m, struct framework *fw,
                           struct agent *ag, const char *role,
                           const Mesos__V1__Offer__Operation *op,
                           res_list *remaining);
/* An operator's operation on agent_id; answers req (202 once durable, 400,
 * 409, 503). */
void master_resv_operator(struct master *m, struct http_request *req,
                          enum master_resv_op kind, const char *agent_id,
                          const res_list *res);
/* Register /reserve, /unreserve, /create-volumes, /destroy-volumes. */
int master_resv_endpoints_register(struct master *m);
/* The checkpointed part of a total (dynamic reservations and volumes). */
void master_agent_ckpt_of(const res_list *total, res_list *out);
/* static_res with ckpt applied into *total (OUT, replaced). Returns 0, or
 * -1 when ckpt does not fit static_res. */
int master_agent_total_of(const res_list *static_res, const res_list *ckpt,
                          res_list *total, char *err, size_t errlen);
/* Send ag its checkpointed resources (CHECKPOINT_RESOURCES). */
void master_agent_send_ckpt(struct master *m, struct agent *ag);

/* ---- slack.c ---------------------------------------------------------------
 */

/* Set ag's oversubscription estimate (revocable resources; copied) and
 * update the allocator's revocable total. Returns -1 when an entry is not
 * revocable (nothing changed). */
int master_agent_set_estimate(struct master *m, struct agent *ag,
                              const res_list *estimate);
/* With --offer_allocation_slack: recompute every agent's slack (reserved
 * cpus and mem no task uses, offered to others as revocable) and, where it
 * shrank below what revocable tasks hold, evict them, newest first. */
void master_slack_update(struct master *m);

/* ---- operator_api.c ------------------------------------------------------ */

/* POST /api/v1 (and /master/api/v1). */
void master_operator_api(struct http_request *req, void *arg);

#endif
