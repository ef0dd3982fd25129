/*
 * Operator API subscribers and the events they are sent; see
 * operator_events.h. Subscribers are a list on struct master; each event is
 * encoded at most once per encoding and written to every open stream. A
 * stream cut off as too slow (or closed by its peer) is unlinked and freed
 * from its close callback, which the HTTP layer runs at a safe point, never
 * inside a send: so the broadcast loop never sees its list change.
 *
 * Under --acls each subscriber sees what its principal may view, event by
 * event, as Mesos's Master::Subscribers::Subscriber::send decides: its
 * approvers for view_frameworks and view_tasks are picked once at
 * SUBSCRIBE (common/acl.h), and a subscriber whose approvers allow every
 * object (no --acls, or rules that allow it ANY) is marked sees_all, so
 * the per-event check is one branch. An event is still encoded at most
 * once per encoding, whoever receives it, but for a subscriber whose
 * view_roles hide some of the resources an event shows (AGENT_ADDED,
 * FRAMEWORK_ADDED, FRAMEWORK_UPDATED: master/role_view.h): it gets a
 * filtered copy encoded for it alone.
 */
#include "master/operator_events.h"

#include <stdlib.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/task_state.h"
#include "master/authz.h"
#include "master/operator_state.h"
#include "master/role_view.h"
#include "mesos/v1/master.pb-c.h"

/* One SUBSCRIBE stream. */
struct opev_sub {
    struct master *m;
    struct http_stream *stream;           /* owned; released when unlinked */
    enum http_encoding enc;               /* the encoding SUBSCRIBE accepted */
    struct acl_approver *view_frameworks; /* of its principal, owned */
    struct acl_approver *view_tasks;      /* likewise */
    struct acl_approver *view_roles;      /* likewise; NULL: sees every role */
    bool sees_all; /* both approvers allow every object: no check */
    struct opev_sub *next;
};

/* Who an event is about, for the subscribers' view_* rules; NULL for an
 * event every subscriber receives (HEARTBEAT, AGENT_*). */
struct opev_about {
    const char *fw_user;   /* view_frameworks' object: the framework's user */
    bool task;             /* a task event: view_tasks applies too */
    const char *task_user; /* view_tasks' object: the task's user */
};

static bool sub_sees(const struct opev_sub *sub, const struct opev_about *a)
{
    if (a == NULL || sub->sees_all)
        return true;
    if (!acl_approver_allows(sub->view_frameworks, a->fw_user))
        return false;
    return !a->task || acl_approver_allows(sub->view_tasks, a->task_user);
}

static const char *fw_user(const struct framework *fw)
{
    return fw != NULL && fw->info != NULL ? fw->info->user : NULL;
}

static struct opev_about task_about(const struct task *t)
{
    const char *fu = fw_user(t->fw);
    struct opev_about a = {fu, true, master_authz_task_user(t->info, fu)};
    return a;
}

static void sub_unlink(struct opev_sub *sub)
{
    struct master *m = sub->m;
    for (struct opev_sub **p = &m->opev_subs; *p != NULL; p = &(*p)->next) {
        if (*p == sub) {
            *p = sub->next;
            m->nopev_subs--;
            break;
        }
    }
    http_stream_close(sub->stream);
    acl_approver_free(sub->view_frameworks);
    acl_approver_free(sub->view_tasks);
    acl_approver_free(sub->view_roles);
    free(sub);
}

static void on_close(struct http_stream *s, enum http_close_reason why,
                     void *arg)
{
    struct opev_sub *sub = arg;
    if (why == HTTP_CLOSE_SLOW) {
        sub->m->metrics.opev_dropped++;
        log_warn("operator subscriber %s dropped: too slow to read its "
                 "events",
                 http_stream_peer(s));
    } else {
        log_info("operator subscriber %s gone", http_stream_peer(s));
    }
    sub_unlink(sub);
}

/* Send ev to one subscriber (only) or to all (only NULL) that may see
 * what it is about (NULL: everyone). */
static void send_event(struct master *m, struct opev_sub *only,
                       const Mesos__V1__Master__Event *ev,
                       const struct opev_about *about)
{
    uint8_t *buf[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    for (struct opev_sub *sub = only != NULL ? only : m->opev_subs; sub != NULL;
         sub = only != NULL ? NULL : sub->next) {
        if (http_stream_is_closed(sub->stream))
            continue; /* its close callback follows */
        if (!sub_sees(sub, about))
            continue;
        Mesos__V1__Master__Event *own =
            master_role_view_event(sub->view_roles, ev);
        if (own != NULL) {
            size_t olen;
            uint8_t *obuf =
                jpb_encode(&own->base, (enum jpb_format)sub->enc, &olen);
            http_stream_send_record(sub->stream, obuf, olen);
            free(obuf);
            jpb_free(&own->base);
            continue;
        }
        int e = sub->enc == HTTP_ENC_JSON ? 0 : 1;
        if (buf[e] == NULL)
            buf[e] = jpb_encode(&ev->base, (enum jpb_format)sub->enc, &len[e]);
        http_stream_send_record(sub->stream, buf[e], len[e]);
    }
    free(buf[0]);
    free(buf[1]);
}

static Mesos__V1__Master__Event event_of(Mesos__V1__Master__Event__Type type)
{
    Mesos__V1__Master__Event ev = MESOS__V1__MASTER__EVENT__INIT;
    ev.has_type = true;
    ev.type = type;
    return ev;
}

void master_opev_subscribe(struct master *m, struct http_request *req,
                           enum http_encoding enc)
{
    if (m->nopev_subs >= MASTER_MAX_OPERATOR_SUBSCRIBERS) {
        /* Mesos keeps its subscribers in a circular buffer: the oldest
         * (the list's tail) makes room. */
        struct opev_sub *oldest = m->opev_subs;
        while (oldest->next != NULL)
            oldest = oldest->next;
        log_warn("operator subscriber %s dropped: %u subscribers already",
                 http_stream_peer(oldest->stream), (unsigned)m->nopev_subs);
        sub_unlink(oldest);
    }
    struct opev_sub *sub = xcalloc(1, sizeof(*sub));
    sub->m = m;
    sub->enc = enc;
    char buf[AUTH_MAX_PRINCIPAL + 1];
    const char *who = master_authz_principal(m, req, buf);
    const struct acls *acls = master_authz_acls(m);
    sub->view_frameworks = acl_approver_new(acls, who, ACL_VIEW_FRAMEWORKS);
    sub->view_tasks = acl_approver_new(acls, who, ACL_VIEW_TASKS);
    sub->view_roles = master_role_viewer(m, who, ACL_VIEW_ROLES);
    bool all_fw = false, all_tasks = false;
    sub->sees_all =
        acl_approver_constant(sub->view_frameworks, &all_fw) && all_fw &&
        acl_approver_constant(sub->view_tasks, &all_tasks) && all_tasks;
    sub->stream = http_stream_start(
        req, enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF,
        m->opts.operator_stream_cap, on_close, sub);
    sub->next = m->opev_subs;
    m->opev_subs = sub;
    m->nopev_subs++;
    log_info("operator subscriber %s subscribed",
             http_stream_peer(sub->stream));

    Mesos__V1__Master__Event__Subscribed sd =
        MESOS__V1__MASTER__EVENT__SUBSCRIBED__INIT;
    sd.get_state = master_opst_get_state(m);
    /* What GET_STATE would show this principal. */
    Mesos__V1__Master__Response state = MESOS__V1__MASTER__RESPONSE__INIT;
    state.get_state = sd.get_state;
    master_authz_filter_response(m, who, &state.base);
    sd.has_heartbeat_interval_seconds = true;
    sd.heartbeat_interval_seconds = MASTER_HEARTBEAT_SECS;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__SUBSCRIBED);
    ev.subscribed = &sd;
    send_event(m, sub, &ev, NULL);
    protobuf_c_message_free_unpacked(&sd.get_state->base, NULL);
    /* As Mesos's heartbeater: the first one at once, then periodically. */
    Mesos__V1__Master__Event hb =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__HEARTBEAT);
    send_event(m, sub, &hb, NULL);
}

void master_opev_heartbeat(struct master *m)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__HEARTBEAT);
    send_event(m, NULL, &ev, NULL);
}

void master_opev_task_added(struct master *m, const struct task *t)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Event__TaskAdded ta =
        MESOS__V1__MASTER__EVENT__TASK_ADDED__INIT;
    ta.task = master_opst_task(t);
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__TASK_ADDED);
    ev.task_added = &ta;
    struct opev_about about = task_about(t);
    send_event(m, NULL, &ev, &about);
    protobuf_c_message_free_unpacked(&ta.task->base, NULL);
}

void master_opev_task_updated(struct master *m, const struct task *t,
                              const Mesos__V1__TaskStatus *status)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = t->fw->id;
    Mesos__V1__Master__Event__TaskUpdated tu =
        MESOS__V1__MASTER__EVENT__TASK_UPDATED__INIT;
    tu.framework_id = &fid;
    tu.status = (Mesos__V1__TaskStatus *)status;
    tu.state = t->state;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__TASK_UPDATED);
    ev.task_updated = &tu;
    struct opev_about about = task_about(t);
    send_event(m, NULL, &ev, &about);
}

void master_opev_agent_added(struct master *m, const struct agent *ag)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Event__AgentAdded aa =
        MESOS__V1__MASTER__EVENT__AGENT_ADDED__INIT;
    aa.agent = master_opst_agent(ag);
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__AGENT_ADDED);
    ev.agent_added = &aa;
    send_event(m, NULL, &ev, NULL);
    protobuf_c_message_free_unpacked(&aa.agent->base, NULL);
}

void master_opev_agent_removed(struct master *m, const char *agent_id)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)agent_id;
    Mesos__V1__Master__Event__AgentRemoved ar =
        MESOS__V1__MASTER__EVENT__AGENT_REMOVED__INIT;
    ar.agent_id = &aid;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__AGENT_REMOVED);
    ev.agent_removed = &ar;
    send_event(m, NULL, &ev, NULL);
}

void master_opev_framework(struct master *m, const struct framework *fw,
                           bool added)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Response__GetFrameworks__Framework *f =
        master_opst_framework(fw);
    Mesos__V1__Master__Event__FrameworkAdded fa =
        MESOS__V1__MASTER__EVENT__FRAMEWORK_ADDED__INIT;
    Mesos__V1__Master__Event__FrameworkUpdated fu =
        MESOS__V1__MASTER__EVENT__FRAMEWORK_UPDATED__INIT;
    Mesos__V1__Master__Event ev;
    if (added) {
        fa.framework = f;
        ev = event_of(MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_ADDED);
        ev.framework_added = &fa;
    } else {
        fu.framework = f;
        ev = event_of(MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_UPDATED);
        ev.framework_updated = &fu;
    }
    struct opev_about about = {fw_user(fw), false, NULL};
    send_event(m, NULL, &ev, &about);
    protobuf_c_message_free_unpacked(&f->base, NULL);
}

void master_opev_framework_removing(struct master *m,
                                    const struct framework *fw)
{
    if (m->opev_subs == NULL)
        return;
    /* Mesos kills the tasks of a removed framework with TASK_KILLED from
     * the master (REASON_FRAMEWORK_REMOVED) and tells subscribers so. */
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (task_state_is_terminal(t->state))
            continue;
        Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
        Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
        st.task_id = t->info->task_id;
        st.state = MESOS__V1__TASK_STATE__TASK_KILLED;
        st.has_source = true;
        st.source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER;
        st.has_reason = true;
        st.reason = MESOS__V1__TASK_STATUS__REASON__REASON_FRAMEWORK_REMOVED;
        st.message = "Framework removed";
        st.has_timestamp = true;
        st.timestamp = clock_wall_secs();
        if (t->agent != NULL) {
            aid.value = t->agent->id;
            st.agent_id = &aid;
        }
        Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
        fid.value = fw->id;
        Mesos__V1__Master__Event__TaskUpdated tu =
            MESOS__V1__MASTER__EVENT__TASK_UPDATED__INIT;
        tu.framework_id = &fid;
        tu.status = &st;
        tu.state = MESOS__V1__TASK_STATE__TASK_KILLED;
        Mesos__V1__Master__Event ev =
            event_of(MESOS__V1__MASTER__EVENT__TYPE__TASK_UPDATED);
        ev.task_updated = &tu;
        struct opev_about about = task_about(t);
        send_event(m, NULL, &ev, &about);
    }
    Mesos__V1__Master__Event__FrameworkRemoved fr =
        MESOS__V1__MASTER__EVENT__FRAMEWORK_REMOVED__INIT;
    fr.framework_info = fw->info;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_REMOVED);
    ev.framework_removed = &fr;
    struct opev_about about = {fw_user(fw), false, NULL};
    send_event(m, NULL, &ev, &about);
}

void master_opev_free_all(struct master *m)
{
    while (m->opev_subs != NULL)
        sub_unlink(m->opev_subs);
}
