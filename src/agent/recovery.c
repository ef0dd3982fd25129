/*
 * Recovery decisions (see recovery.h).
 */
#include "agent/recovery.h"

#include "agent/supervisor.h"
#include "common/task_state.h"

#include <stdio.h>
#include <string.h>

/* A task whose state is live or unknown: decided by its processes. */
static void plan_by_processes(const struct agent_ckpt_task *t,
                              struct agent_rec_plan *out)
{
    if (t->sandbox == NULL) {
        out->action = AGENT_REC_ENDED;
        snprintf(out->message, sizeof(out->message),
                 "The agent restarted and its checkpoint does not say where "
                 "the task ran");
        return;
    }
    struct agent_sup_probe p;
    agent_supervisor_probe(t->sandbox, &p);
    if (p.sup_alive) {
        out->action = AGENT_REC_ATTACH;
        out->sup_pid = p.sup_pid;
        out->task_pid = p.task_pid;
        return;
    }
    out->action = AGENT_REC_ENDED;
    out->task_pid = p.task_alive ? p.task_pid : 0;
    int ws = 0;
    int rc = agent_supervisor_read_exit(t->sandbox, &ws);
    if (rc == 1) {
        out->has_status = true;
        out->wait_status = ws;
    } else {
        snprintf(out->message, sizeof(out->message),
                 "The task's supervisor ended while the agent was down "
                 "without recording the task's exit status%s",
                 rc < 0 ? " (its status file is unreadable)" : "");
    }
}

void agent_rec_plan(const struct agent_ckpt_task *t, struct agent_rec_plan *out)
{
    memset(out, 0, sizeof(*out));
    if (t->info == NULL && t->task == NULL && !t->has_task_file &&
        t->nupdates > 0) {
        out->action = AGENT_REC_UPDATES_ONLY;
        return;
    }
    if (!t->has_state && !t->has_task_file) {
        out->action = AGENT_REC_INTERRUPTED;
        snprintf(out->message, sizeof(out->message),
                 "The agent restarted while launching the task");
        if (t->sandbox != NULL) {
            struct agent_sup_probe p;
            agent_supervisor_probe(t->sandbox, &p);
            out->sup_pid = p.sup_alive ? p.sup_pid : 0;
            out->task_pid = p.task_alive ? p.task_pid : 0;
        }
        return;
    }
    if (t->has_state && task_state_is_terminal(t->state)) {
        out->action = t->nupdates > 0 ? AGENT_REC_TERMINAL : AGENT_REC_FORGET;
        return;
    }
    plan_by_processes(t, out);
}

const char *agent_rec_action_name(enum agent_rec_action a)
{
    switch (a) {
    case AGENT_REC_FORGET:
        return "FORGET";
    case AGENT_REC_UPDATES_ONLY:
        return "UPDATES_ONLY";
    case AGENT_REC_TERMINAL:
        return "TERMINAL";
    case AGENT_REC_ATTACH:
        return "ATTACH";
    case AGENT_REC_ENDED:
        return "ENDED";
    case AGENT_REC_INTERRUPTED:
        return "INTERRUPTED";
    }
    return "?";
}
