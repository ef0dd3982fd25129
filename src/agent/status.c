/*
 * Building TaskStatus messages and mapping exit statuses.
 */
#include "agent/status.h"

#include "common/ids.h"
#include "common/mem.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

Mesos__V1__TaskStatus *agent_status_new(const struct agent_status_spec *spec)
{
    Mesos__V1__TaskStatus *st = xmalloc(sizeof(*st));
    mesos__v1__task_status__init(st);
    st->task_id = xmalloc(sizeof(*st->task_id));
    mesos__v1__task_id__init(st->task_id);
    st->task_id->value = xstrdup(spec->task_id);
    st->state = spec->state;
    st->has_source = 1;
    st->source = spec->source;
    if (spec->has_reason) {
        st->has_reason = 1;
        st->reason = spec->reason;
    }
    if (spec->message != NULL)
        st->message = xstrdup(spec->message);
    if (spec->agent_id != NULL) {
        st->agent_id = xmalloc(sizeof(*st->agent_id));
        mesos__v1__agent_id__init(st->agent_id);
        st->agent_id->value = xstrdup(spec->agent_id);
    }
    if (spec->executor_id != NULL) {
        st->executor_id = xmalloc(sizeof(*st->executor_id));
        mesos__v1__executor_id__init(st->executor_id);
        st->executor_id->value = xstrdup(spec->executor_id);
    }
    st->has_timestamp = 1;
    st->timestamp = spec->timestamp;
    st->has_uuid = 1;
    st->uuid.len = 16;
    st->uuid.data = xmalloc(16);
    if (spec->uuid != NULL)
        memcpy(st->uuid.data, spec->uuid, 16);
    else
        id_uuid_v4_bytes(st->uuid.data);
    return st;
}

void agent_exit_outcome(int wait_status, bool kill_requested,
                        struct agent_exit_outcome *out)
{
    memset(out, 0, sizeof(*out));
    if (WIFEXITED(wait_status)) {
        snprintf(out->message, sizeof(out->message),
                 "Command exited with status %d", WEXITSTATUS(wait_status));
    } else if (WIFSIGNALED(wait_status)) {
        int sig = WTERMSIG(wait_status);
        const char *name = strsignal(sig);
        snprintf(out->message, sizeof(out->message),
                 "Command terminated by signal %d (%s)", sig,
                 name != NULL ? name : "unknown");
    } else {
        snprintf(out->message, sizeof(out->message),
                 "Command ended with wait status %d", wait_status);
    }
    if (kill_requested) {
        out->state = MESOS__V1__TASK_STATE__TASK_KILLED;
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
        out->state = MESOS__V1__TASK_STATE__TASK_FINISHED;
    } else {
        out->state = MESOS__V1__TASK_STATE__TASK_FAILED;
        out->has_reason = true;
        out->reason =
            MESOS__V1__TASK_STATUS__REASON__REASON_COMMAND_EXECUTOR_FAILED;
    }
}
