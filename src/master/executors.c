/*
 * Executors as the master keeps them (Mesos's Framework::executors and
 * Slave::executors): a LAUNCH whose TaskInfo carries an ExecutorInfo, or a
 * LAUNCH_GROUP, names an executor of the framework on the offer's agent.
 * The first launch that names it creates it here and takes its resources
 * from the offer; later tasks with the same executor id share it and must
 * carry the same ExecutorInfo. It lives until the agent reports it exited
 * (EXECUTOR_EXITED: its resources go back to the allocator and the
 * framework hears FAILURE), or until its agent or framework is removed.
 * After a master failover, agents report their executors on
 * re-registration and the master takes them in again.
 */
#include "master/executors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/errbuf.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/master.h"
#include "master/send.h"

static char *key_of(const char *a, const char *b)
{
    return xasprintf("%s/%s", a, b);
}

struct executor *master_executor_find(const struct agent *ag,
                                      const char *framework_id,
                                      const char *executor_id)
{
    if (ag->executors == NULL)
        return NULL;
    char *k = key_of(framework_id, executor_id);
    struct executor *e = hmap_get(ag->executors, k);
    free(k);
    return e;
}

/* ---- Validation ----------------------------------------------------------
 */

/* An executor id as Mesos's validateID accepts it (it names a directory
 * of the agent's sandboxes). */
static const char *check_executor_id(const char *id, char *err, size_t errlen)
{
    size_t len = strlen(id);
    if (len == 0)
        return "'ExecutorInfo.executor_id' must not be empty";
    if (len > 255)
        return "'ExecutorInfo.executor_id' must not be longer than 255 "
               "bytes";
    if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0) {
        errbuf_set(err, errlen, "'ExecutorInfo.executor_id' '%s' is disallowed",
                   id);
        return err;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
            return "'ExecutorInfo.executor_id' contains invalid characters";
    }
    return NULL;
}

/* Mesos's validateType plus what a LAUNCH (group false) or a LAUNCH_GROUP
 * asks of the executor's type. */
static const char *check_type(const Mesos__V1__ExecutorInfo *ei, bool group)
{
    if (group) {
        if (!ei->has_type)
            return "'ExecutorInfo.type' must be set";
        if (ei->type == MESOS__V1__EXECUTOR_INFO__TYPE__UNKNOWN)
            return "Unknown executor type";
        if (ei->container != NULL &&
            ei->container->type == MESOS__V1__CONTAINER_INFO__TYPE__DOCKER)
            return "Docker ContainerInfo is not supported on the executor";
    }
    if (ei->has_type && ei->type == MESOS__V1__EXECUTOR_INFO__TYPE__DEFAULT) {
        if (ei->command != NULL)
            return "'ExecutorInfo.command' must not be set for 'DEFAULT' "
                   "executor";
        if (ei->container != NULL) {
            if (ei->container->type != MESOS__V1__CONTAINER_INFO__TYPE__MESOS)
                return "'ExecutorInfo.container.type' must be 'MESOS' for "
                       "'DEFAULT' executor";
            if (ei->container->mesos != NULL &&
                ei->container->mesos->image != NULL)
                return "'ExecutorInfo.container.mesos.image' must not be set "
                       "for 'DEFAULT' executor";
        }
    }
    if (ei->has_type && ei->type == MESOS__V1__EXECUTOR_INFO__TYPE__CUSTOM &&
        ei->command == NULL)
        return "'ExecutorInfo.command' must be set for 'CUSTOM' executor";
    if (!group) {
        /* A LAUNCH names a custom executor (Mesos: the default executor
         * only runs task groups). */
        if (ei->has_type && ei->type != MESOS__V1__EXECUTOR_INFO__TYPE__CUSTOM)
            return "'ExecutorInfo.type' must be 'CUSTOM'";
        if (ei->command == NULL)
            return "'ExecutorInfo.command' must be set";
    }
    return NULL;
}

bool master_executor_info_equal(const Mesos__V1__ExecutorInfo *a,
                                const Mesos__V1__ExecutorInfo *b)
{
    size_t na = protobuf_c_message_get_packed_size(&a->base);
    size_t nb = protobuf_c_message_get_packed_size(&b->base);
    if (na != nb)
        return false;
    uint8_t *pa = xmalloc(na ? na : 1), *pb = xmalloc(nb ? nb : 1);
    protobuf_c_message_pack(&a->base, pa);
    protobuf_c_message_pack(&b->base, pb);
    bool same = memcmp(pa, pb, na) == 0;
    free(pa);
    free(pb);
    return same;
}

static void set_framework_id(Mesos__V1__ExecutorInfo *ei, const char *id)
{
    ei->framework_id = xcalloc(1, sizeof(*ei->framework_id));
    mesos__v1__framework_id__init(ei->framework_id);
    ei->framework_id->value = xstrdup(id);
}

Mesos__V1__ExecutorInfo *
master_executor_prepare(const struct framework *fw, const struct agent *ag,
                        const Mesos__V1__ExecutorInfo *ei, bool group,
                        const char *role, res_list *res, char *err,
                        size_t errlen)
{
    const char *e = check_type(ei, group);
    if (e == NULL)
        e = check_executor_id(ei->executor_id->value, err, errlen);
    if (e == NULL && ei->shutdown_grace_period != NULL &&
        ei->shutdown_grace_period->nanoseconds < 0)
        e = "ExecutorInfo's 'shutdown_grace_period' must be non-negative";
    if (e == NULL && ei->framework_id != NULL &&
        strcmp(ei->framework_id->value, fw->id) != 0) {
        errbuf_set(err, errlen,
                   "ExecutorInfo has an invalid FrameworkID (Actual: %s vs "
                   "Expected: %s)",
                   ei->framework_id->value, fw->id);
        e = err;
    }
    res_list r = RES_LIST_INIT;
    if (e == NULL) {
        char rerr[256];
        if (res_list_from_pb(ei->resources, ei->n_resources, &r, rerr,
                             sizeof(rerr)) != 0) {
            errbuf_set(err, errlen, "Executor uses invalid resources: %s",
                       rerr);
            e = err;
        }
    }
    if (e != NULL) {
        if (e != err)
            errbuf_set(err, errlen, "%s", e);
        res_list_clear(&r);
        return NULL;
    }
    /* As for tasks, Mesos injects the offers' role into resources that
     * carry none. */
    for (uint32_t i = 0; i < r.n; i++) {
        if (r.v[i].alloc_role == NULL) {
            res_list_allocate(&r, role);
            break;
        }
    }
    Mesos__V1__ExecutorInfo *copy =
        jpb_copy(&mesos__v1__executor_info__descriptor, &ei->base);
    if (copy->framework_id == NULL)
        set_framework_id(copy, fw->id);
    res_pb_array_free(copy->resources, copy->n_resources);
    copy->resources = res_list_to_pb(&r, true, &copy->n_resources);

    const struct executor *known =
        master_executor_find(ag, fw->id, copy->executor_id->value);
    if (known != NULL && !master_executor_info_equal(known->info, copy)) {
        errbuf_set(err, errlen,
                   "ExecutorInfo is not compatible with existing ExecutorInfo "
                   "with same ExecutorID (executor '%s' of framework %s on "
                   "agent %s)",
                   copy->executor_id->value, fw->id, ag->id);
        protobuf_c_message_free_unpacked(&copy->base, NULL);
        res_list_clear(&r);
        return NULL;
    }
    *res = r;
    return copy;
}

/* ---- State ---------------------------------------------------------------
 */

struct executor *master_executor_add(struct master *m, struct framework *fw,
                                     struct agent *ag,
                                     Mesos__V1__ExecutorInfo *info,
                                     const res_list *res)
{
    (void)m;
    struct executor *e = xcalloc(1, sizeof(*e));
    e->fw = fw;
    e->agent = ag;
    e->info = info;
    e->fw_key = key_of(ag->id, info->executor_id->value);
    e->ag_key = key_of(fw->id, info->executor_id->value);
    res_list_copy(&e->resources, res);
    hmap_put(fw->executors, e->fw_key, e);
    hmap_put(ag->executors, e->ag_key, e);
    log_info("executor '%s' of framework %s added on agent %s",
             info->executor_id->value, fw->id, ag->id);
    return e;
}

void master_executor_free(void *p)
{
    struct executor *e = p;
    if (e == NULL)
        return;
    if (e->info != NULL)
        protobuf_c_message_free_unpacked(&e->info->base, NULL);
    res_list_clear(&e->resources);
    free(e->fw_key);
    free(e->ag_key);
    free(e);
}

void master_executor_remove(struct master *m, struct executor *e, bool recover)
{
    if (recover && e->resources.n > 0 && e->agent->alloc != NULL &&
        e->fw->alloc != NULL) {
        if (alloc_recover(m->alloc, e->agent->alloc, e->fw->alloc,
                          &e->resources, 0, clock_monotonic_ns()) != 0)
            log_error("allocator did not hold executor %s's resources",
                      e->info->executor_id->value);
        master_allocate_soon(m);
    }
    hmap_del(e->fw->executors, e->fw_key);
    hmap_del(e->agent->executors, e->ag_key);
    master_executor_free(e);
}

/* Remove every executor of map (a framework's or an agent's), without
 * recovery. */
static void forget_all(struct master *m, struct hmap *map)
{
    size_t n = hmap_count(map), k = 0, pos = 0;
    if (n == 0)
        return;
    struct executor **v = xcalloc(n, sizeof(*v));
    void *val;
    while (hmap_next(map, &pos, NULL, &val))
        v[k++] = val;
    for (size_t i = 0; i < k; i++)
        master_executor_remove(m, v[i], false);
    free(v);
}

void master_executors_forget_agent(struct master *m, struct agent *ag)
{
    forget_all(m, ag->executors);
}

void master_executors_forget_framework(struct master *m, struct framework *fw)
{
    forget_all(m, fw->executors);
}

void master_executors_usage(const struct hmap *executors, res_list *used)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(executors, &pos, NULL, &val))
        res_list_add_all(used, &((const struct executor *)val)->resources);
}

/* ---- From agents ---------------------------------------------------------
 */

void master_executor_exited(struct master *m, struct agent *ag,
                            const Offerd__Agent__Call__ExecutorExited *ee)
{
    m->metrics.messages_exited_executor++;
    const char *fid = ee->framework_id->value;
    const char *eid = ee->executor_id->value;
    struct executor *e = master_executor_find(ag, fid, eid);
    if (e == NULL) {
        log_info("agent %s: ignoring exited executor '%s' of framework %s: "
                 "unknown",
                 ag->id, eid, fid);
        return;
    }
    log_info("executor '%s' of framework %s on agent %s exited (status %d)",
             eid, fid, ag->id, ee->has_status ? ee->status : -1);
    struct framework *fw = e->fw;
    master_executor_remove(m, e, true);
    if (fw->stream == NULL) {
        log_info("not forwarding the exit of executor '%s': framework %s is "
                 "disconnected",
                 eid, fid);
        return;
    }
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = ag->id;
    Mesos__V1__Scheduler__Event__Failure f =
        MESOS__V1__SCHEDULER__EVENT__FAILURE__INIT;
    f.agent_id = &aid;
    f.executor_id = ee->executor_id;
    if (ee->has_status) {
        f.has_status = true;
        f.status = ee->status;
    }
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__FAILURE;
    ev.failure = &f;
    master_send_to_framework(fw, &ev);
}

/* The role of every resource of l when it is one, else NULL. */
static const char *one_role(const res_list *l)
{
    const char *role = NULL;
    for (uint32_t i = 0; i < l->n; i++) {
        const char *r = l->v[i].alloc_role;
        if (r == NULL || (role != NULL && strcmp(role, r) != 0))
            return NULL;
        role = r;
    }
    return role;
}

struct executor *master_executor_adopt(struct master *m, struct framework *fw,
                                       struct agent *ag,
                                       const Mesos__V1__ExecutorInfo *ei)
{
    if (master_executor_find(ag, fw->id, ei->executor_id->value) != NULL)
        return NULL;
    char err[256];
    res_list res = RES_LIST_INIT;
    if (res_list_from_pb(ei->resources, ei->n_resources, &res, err,
                         sizeof(err)) != 0) {
        log_warn("agent %s reports executor '%s' with bad resources: %s",
                 ag->id, ei->executor_id->value, err);
        return NULL;
    }
    if (res.n > 0 && one_role(&res) == NULL) {
        /* Unallocated (or mixed) resources: the framework's role. */
        res_list_allocate(&res, fw->nroles > 0 ? fw->roles[0] : "*");
    }
    Mesos__V1__ExecutorInfo *copy =
        jpb_copy(&mesos__v1__executor_info__descriptor, &ei->base);
    if (copy->framework_id == NULL)
        set_framework_id(copy, fw->id);
    res_pb_array_free(copy->resources, copy->n_resources);
    copy->resources = res_list_to_pb(&res, true, &copy->n_resources);
    struct executor *e = master_executor_add(m, fw, ag, copy, &res);
    res_list_clear(&res);
    return e;
}

void master_executors_reconcile(struct master *m, struct agent *ag,
                                Mesos__V1__ExecutorInfo *const *reported,
                                size_t n)
{
    size_t cnt = hmap_count(ag->executors), k = 0, pos = 0;
    if (cnt == 0)
        return;
    struct executor **gone = xcalloc(cnt, sizeof(*gone));
    void *val;
    while (hmap_next(ag->executors, &pos, NULL, &val)) {
        struct executor *e = val;
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++) {
            const Mesos__V1__ExecutorInfo *ei = reported[i];
            seen = ei->framework_id != NULL &&
                   strcmp(ei->framework_id->value, e->fw->id) == 0 &&
                   strcmp(ei->executor_id->value,
                          e->info->executor_id->value) == 0;
        }
        if (!seen)
            gone[k++] = e;
    }
    for (size_t i = 0; i < k; i++) {
        log_info("agent %s no longer reports executor '%s' of framework %s: "
                 "removing it",
                 ag->id, gone[i]->info->executor_id->value, gone[i]->fw->id);
        master_executor_remove(m, gone[i], true);
    }
    free(gone);
}
