/*
 * Role weights and quota set by operators, as Mesos 1.11 serves them: the
 * v1 operator calls GET_WEIGHTS, UPDATE_WEIGHTS, GET_QUOTA, UPDATE_QUOTA,
 * SET_QUOTA and REMOVE_QUOTA (operator_api.c decodes them and calls the
 * functions below) and the endpoints GET/PUT /weights and GET/POST/DELETE
 * /quota. Changes run one at a time in arrival order: each is validated
 * against the master's state, made durable in the registry, and only then
 * applied to the master and its allocator and answered.
 */
#ifndef OFFERD_MASTER_QUOTA_H
#define OFFERD_MASTER_QUOTA_H

#include "master/master_types.h"
#include "mesos/v1/master.pb-c.h"
#include "offerd/registry.pb-c.h"

/* Most weights or quota configs in one request, and most roles with a
 * weight or a quota the master keeps: bounds on what operators can make it
 * hold. */
#define MASTER_MAX_QUOTA_ROLES 10000

/* Create m's (empty) weights and quota; call before the registry opens. */
void master_quota_init(struct master *m);
/* Take the weights and quota configs the registry holds into m and its
 * allocator (entries that do not validate are logged and skipped). */
void master_quota_recover(struct master *m,
                          const Offerd__Registry__Registry *state);
/* Check --weights ("role=weight,role=weight", Mesos's form): 0, or -1 with
 * Mesos's reason in err. */
int master_quota_weights_flag_check(const char *text, char *err, size_t errlen);
/* Apply --weights (checked) when the registry held no weights: into the
 * allocator now, and into the registry (as Mesos does) in the background. */
void master_quota_weights_flag(struct master *m);
/* Free what master_quota_init made (after the registry closed). */
void master_quota_free(struct master *m);
/* Route /weights and /quota (and /master/... aliases). Returns 0 or -1. */
int master_quota_endpoints_register(struct master *m);

/* A new GetWeights response, every weight set (free with jpb_free). */
Mesos__V1__Master__Response__GetWeights *
master_quota_get_weights(const struct master *m);
/* A new QuotaStatus, every quota set (free with jpb_free). */
Mesos__V1__Quota__QuotaStatus *master_quota_status(const struct master *m);

/* Report Mesos's quota gauges of every role with a quota, fn(arg, name,
 * value) each: allocator/mesos/quota/roles/<role>/resources/<name>/
 * guarantee, .../limit, .../consumed and .../offered_or_allocated. */
void master_quota_metrics(const struct master *m,
                          void (*fn)(void *arg, const char *name, double v),
                          void *arg);

/* The changes. Each answers req (200 with an empty body once durable, or a
 * 4xx/5xx with a one-line reason, state unchanged); the messages are
 * borrowed for the call only. */
void master_quota_update_weights(struct master *m, struct http_request *req,
                                 Mesos__V1__WeightInfo *const *infos, size_t n);
void master_quota_update(struct master *m, struct http_request *req, bool force,
                         Mesos__V1__Quota__QuotaConfig *const *configs,
                         size_t n);
/* SET_QUOTA (legacy; guarantee only, limits set equal to it). */
void master_quota_set(struct master *m, struct http_request *req,
                      const Mesos__V1__Quota__QuotaRequest *qr);
/* REMOVE_QUOTA (legacy). */
void master_quota_remove(struct master *m, struct http_request *req,
                         const char *role);

#endif
