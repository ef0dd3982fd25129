/*
 * Validation of a task's health check (TaskInfo.health_check) and check
 * (TaskInfo.check) at LAUNCH and LAUNCH_GROUP, as Mesos's master validates
 * them (src/common/validation.cpp validateHealthCheck, validateCheckInfo):
 * the type is set, known, and its field (command, http, tcp) is set; a
 * command has its value and a valid environment; an HTTP path starts with
 * '/'; a health check's scheme is http or https; durations are not
 * negative. offerd also refuses a port outside 1-65535 (Mesos would run the
 * probe and fail it). Pure: no state.
 */
#ifndef OFFERD_MASTER_TASK_CHECKS_H
#define OFFERD_MASTER_TASK_CHECKS_H

#include "mesos/v1/mesos.pb-c.h"

#include <stddef.h>

/* Check ti's health_check and check. Returns NULL when both are valid (or
 * absent), else the reason the task is refused with TASK_ERROR, written in
 * err (Mesos's words: "Task uses invalid health check: ..." or "Task uses
 * invalid check: ..."). */
const char *master_task_checks_validate(const Mesos__V1__TaskInfo *ti,
                                        char *err, size_t errlen);

#endif
