/*
 * POST /api/v1: the v1 operator API's calls.
 */
#ifndef OFFERD_MASTER_OPERATOR_API_H
#define OFFERD_MASTER_OPERATOR_API_H

#include "master/master_types.h"

/* POST /api/v1 (and /master/api/v1). */
void master_operator_api(struct http_request *req, void *arg);

#endif
