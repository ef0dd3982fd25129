/*
 * A framework for end-to-end tests, written on libofferd and run on the
 * test's own event loop while the test waits (e2e_loop_until of
 * harness.h): it
 * subscribes, launches the shell tasks a test queues on the offers it
 * gets, records every status update in arrival order with its uuid, and
 * acknowledges updates as its policy says. libofferd's auto-acknowledgement
 * is off, so a test can hold acknowledgements back (e.g. keep a terminal
 * update unacknowledged across an agent restart) and release them later.
 *
 * Every function asserts with Check on failure (test code). Everything
 * lives in struct hfw, which the test owns (static storage: it is large).
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_FW_H
#define OFFERD_TESTS_E2E_HARNESS_FW_H

#include "mesos/v1/mesos.pb-c.h"
#include "offerd/scheduler.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

#define HFW_MAX_TASKS   64
#define HFW_MAX_UPDATES 512

/* Which updates are acknowledged as they arrive. */
enum hfw_ack_policy {
    HFW_ACK_ALL,         /* every update */
    HFW_ACK_NONTERMINAL, /* all but terminal ones, which are held */
    HFW_ACK_NONE,        /* none: all are held */
};

/* One UPDATE event as it arrived. */
struct hfw_update {
    char task_id[64];
    char agent_id[128];
    int state;  /* Mesos__V1__TaskState */
    int reason; /* Mesos__V1__TaskStatus__Reason, -1 when unset */
    int source; /* Mesos__V1__TaskStatus__Source, -1 when unset */
    bool has_uuid;
    uint8_t uuid[16];
    char message[256];
    int healthy; /* TaskStatus.healthy: 0, 1, or -1 when unset */
    bool has_check_status;
    int check_value; /* check_status's exit_code, status_code or succeeded
                        (0/1); -1 when that field is unset */
};

/* A task waiting for an offer. */
struct hfw_pending {
    char task_id[64];
    char command[256];
};

struct hfw {
    /* Set before hfw_start (zero: defaults). */
    const char *name;        /* FrameworkInfo.name; "e2e-fw" */
    enum hfw_ack_policy ack; /* HFW_ACK_ALL */
    const char *task_res;    /* each task's resources; "cpus:0.1;mem:16" */
    double kill_grace_secs;  /* tasks' kill policy; 0: none */
    const char *user;        /* FrameworkInfo.user; "e2e" */
    /* The master in any --master form (libofferd's options.master: zk://
     * follows the leader); NULL: 127.0.0.1 and hfw_start's port. */
    const char *master;
    /* Called with each TaskInfo just before its ACCEPT is sent, to add
     * what a test needs (URIs, a container, a user...); what it stores
     * must outlive the call. NULL: none. */
    void (*edit_task)(Mesos__V1__TaskInfo *ti, void *arg);
    void *edit_arg;
    /* Every task's TaskInfo.health_check and check (NULL: none; borrowed
     * while tasks are launched). */
    const Mesos__V1__HealthCheck *health_check;
    const Mesos__V1__CheckInfo *check;

    /* State, read by tests. */
    struct offerd_sched *s;
    struct event_base *base;
    char id[128]; /* framework id once subscribed */
    bool subscribed;
    int subscriptions;                          /* SUBSCRIBED events */
    int errors;                                 /* ERROR events */
    struct hfw_update updates[HFW_MAX_UPDATES]; /* arrival order */
    int nupdates;
    int acked_again; /* arrivals of a uuid this framework had acknowledged */

    /* Private. */
    struct hfw_pending pending[HFW_MAX_TASKS];
    int npending;
    uint8_t acked[HFW_MAX_UPDATES][16]; /* uuids acknowledged */
    int nacked;
};

/* Create f's client on base against the master at 127.0.0.1:master_port
 * (or f->master) and wait (up to 10 s) until it is subscribed. */
void hfw_start(struct hfw *f, struct event_base *base, uint16_t master_port,
               enum offerd_encoding enc);

/* Close the client (no TEARDOWN: the master keeps the framework for its
 * failover timeout). */
void hfw_free(struct hfw *f);

/* Queue a shell task; it is launched on the next offer it fits (a REVIVE
 * is sent). */
void hfw_launch(struct hfw *f, const char *task_id, const char *command);

/* Tasks still waiting for an offer. */
int hfw_pending(const struct hfw *f);

/* The latest state received for task_id, or -1 when none. */
int hfw_state(const struct hfw *f, const char *task_id);

/* The updates received for task_id in arrival order (at most max, borrowed
 * from f); returns how many there are in all. */
size_t hfw_updates_of(const struct hfw *f, const char *task_id,
                      const struct hfw_update **out, size_t max);

/* Like hfw_updates_of, but an update whose uuid arrived before counts once
 * (its first arrival). */
size_t hfw_distinct_updates_of(const struct hfw *f, const char *task_id,
                               const struct hfw_update **out, size_t max);

/* Acknowledge every received update whose uuid is not acknowledged yet
 * (each uuid once). Returns how many were acknowledged. */
int hfw_ack_held(struct hfw *f);

/* Kill task_id. */
void hfw_kill(struct hfw *f, const char *task_id);

/* ---- Packing shell tasks into an offer ---- */

#define HFW_MAX_PER_ACCEPT 64

/* LAUNCH operations of shell tasks packed into one offer, one operation
 * per task, each with its share of the offer as sched_fit_take takes it for
 * the offer's role; ops is ready for offerd_sched_accept. The operations
 * point into the struct: keep it until the ACCEPT is handed over, then
 * hfw_launches_clear. Large (about 60 KB). */
struct hfw_launches {
    int n; /* tasks packed */
    Mesos__V1__Offer__Operation *ops[HFW_MAX_PER_ACCEPT];

    /* Private: what ops point into. */
    Mesos__V1__Offer__Operation opv[HFW_MAX_PER_ACCEPT];
    Mesos__V1__Offer__Operation__Launch launches[HFW_MAX_PER_ACCEPT];
    Mesos__V1__TaskInfo infos[HFW_MAX_PER_ACCEPT];
    Mesos__V1__TaskInfo *pinfos[HFW_MAX_PER_ACCEPT];
    Mesos__V1__TaskID tids[HFW_MAX_PER_ACCEPT];
    Mesos__V1__CommandInfo cmds[HFW_MAX_PER_ACCEPT];
    Mesos__V1__Resource **pres[HFW_MAX_PER_ACCEPT];
    size_t nres[HFW_MAX_PER_ACCEPT];
    Mesos__V1__DurationInfo grace;
    Mesos__V1__KillPolicy kp;
};

/* Pack into l, in order, as many of the ntasks tasks (ids[i] running
 * commands[i] with the shell, each taking task_res, e.g. "cpus:0.1;mem:16")
 * as fit in offer (at most HFW_MAX_PER_ACCEPT), stopping at the first that
 * does not; grace_secs > 0 gives each a kill policy with that grace period.
 * ids and commands are borrowed until the ACCEPT is handed over. Returns
 * l->n. Fails the test on resources it cannot parse. */
int hfw_pack_launches(struct hfw_launches *l, const Mesos__V1__Offer *offer,
                      const char *task_res, const char *const *ids,
                      const char *const *commands, int ntasks,
                      double grace_secs);

/* Free what hfw_pack_launches allocated (l itself is the caller's). */
void hfw_launches_clear(struct hfw_launches *l);

#endif
