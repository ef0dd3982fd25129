/*
 * The operator API's large read calls (GET_STATE, GET_TASKS,
 * GET_FRAMEWORKS, GET_EXECUTORS, GET_AGENTS) written in slices by the
 * machinery that writes /state (state_stream.h): one entity per step, each
 * built, filtered for the reader and encoded alone, so that the loop serves
 * other clients between slices and no whole Response is ever built. The
 * bytes are those of the whole Response operator_state.c builds, filtered
 * by authz.c and encoded by common/json_pb. See docs/master-internals.md,
 * "Large reads".
 */
#ifndef OFFERD_MASTER_OPERATOR_STREAM_H
#define OFFERD_MASTER_OPERATOR_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/http.h"
#include "master/master_types.h"
#include "mesos/v1/master.pb-c.h"

/* Whether call type is one this module writes. */
bool master_opstream_serves(Mesos__V1__Master__Call__Type type);

/* Answer req (200, chunked) with the Response to call type (one that
 * master_opstream_serves) in encoding enc, filtered for principal who
 * (NULL: anonymous; copied). */
void master_opstream_reply(struct master *m, struct http_request *req,
                           const char *who, Mesos__V1__Master__Call__Type type,
                           enum http_encoding enc);

/* The same body written whole at once into a new buffer (caller frees),
 * its length in *len (OUT): for tests and benchmarks. */
uint8_t *master_opstream_body(struct master *m, const char *who,
                              Mesos__V1__Master__Call__Type type,
                              enum http_encoding enc, size_t *len);

#endif
