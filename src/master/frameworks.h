/*
 * Frameworks: subscription, disconnection, failover, removal. The owner
 * of struct framework: frameworks.c creates and frees it.
 */
#ifndef OFFERD_MASTER_FRAMEWORKS_H
#define OFFERD_MASTER_FRAMEWORKS_H

#include "master/master_types.h"

struct framework *master_framework_find(struct master *m, const char *id);
/* Handle a SUBSCRIBE call (validated decode in call); replies on req. */
void master_framework_subscribe(struct master *m, struct http_request *req,
                                const Mesos__V1__Scheduler__Call *call,
                                enum http_encoding reply_enc);
/* Handle UPDATE_FRAMEWORK: a new FrameworkInfo (same id), suppressed_roles
 * and offer_constraints; replies on req (200 when applied). */
void master_framework_update(
    struct master *m, struct http_request *req, struct framework *fw,
    const Mesos__V1__Scheduler__Call__UpdateFramework *call);
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
/* An agent reports tasks of fw, whose first subscription to this master
 * is still being recorded (no allocator entry yet): fill it in as a
 * placeholder from the agent's info, so that the tasks are accounted
 * for; the subscription then updates it. */
void master_framework_adopt_pending(struct master *m, struct framework *fw,
                                    const Mesos__V1__FrameworkInfo *info);
void master_framework_free(struct framework *fw);

#endif
