/*
 * POST /api/v1/scheduler: the scheduler API's calls (the rows of its call
 * table and their handlers).
 */
#ifndef OFFERD_MASTER_SCHEDULER_API_H
#define OFFERD_MASTER_SCHEDULER_API_H

#include "master/master_types.h"

/* The refusal a Filters asks for, in ns (Mesos's 5 s default, clamped). */
int64_t master_refuse_ns(const Mesos__V1__Filters *f);

/* POST /api/v1/scheduler. */
void master_scheduler_api(struct http_request *req, void *arg);

#endif
