/*
 * TaskState questions; see task_state.h.
 */
#include "common/task_state.h"

#include "mesos/v1/mesos.pb-c.h"

bool task_state_is_terminal(int state)
{
    switch (state) {
    case MESOS__V1__TASK_STATE__TASK_FINISHED:
    case MESOS__V1__TASK_STATE__TASK_FAILED:
    case MESOS__V1__TASK_STATE__TASK_KILLED:
    case MESOS__V1__TASK_STATE__TASK_ERROR:
    case MESOS__V1__TASK_STATE__TASK_LOST:
    case MESOS__V1__TASK_STATE__TASK_DROPPED:
    case MESOS__V1__TASK_STATE__TASK_GONE:
    case MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR:
        return true;
    default:
        return false;
    }
}

const char *task_state_name(int state)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__task_state__descriptor, state);
    return v != NULL ? v->name : "?";
}
