/*
 * GET_STATE and its parts written in slices; see operator_stream.h.
 *
 * A body is a small program (struct op) run one step at a time by
 * state_stream.c's productions: open a sub-message, write a list of
 * entities, close it. Each entity is built as operator_state.c builds it,
 * put alone in a one-element Response and filtered there by
 * master_authz_filter_response (so the ACLs decide exactly as for the
 * whole Response), then encoded and freed.
 *
 * JSON goes out as it is written: the text of each entity is
 * jpb_to_json_text's, and the keys and brackets around are written as
 * common/json_pb writes them (fields in number order, empty lists left
 * out, an empty sub-message "{}").
 *
 * Protobuf needs each sub-message's length before its bytes, and the
 * outermost one (get_state) spans the whole body: the packed entities are
 * kept in segments (struct seg) per open sub-message, a closed one is
 * linked after its header into its parent without copying, and the whole
 * packed body is sent once the last list is done, a segment per step. So
 * a protobuf body costs its own packed size in memory at the end (no
 * tree, no second copy); a JSON body costs a slice.
 *
 * The view: as /state's, the entities of a list are taken (as ids) when
 * the list starts and each is written as it is when its step comes; one
 * gone by then is left out. A task that ends between the "tasks" and
 * "completed_tasks" lists may appear in both.
 */
#include "master/operator_stream.h"

#include <stdlib.h>
#include <string.h>

#include "common/hmap.h"
#include "common/json_out.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/task_state.h"
#include "master/authz.h"
#include "master/operator_state.h"
#include "master/state_stream.h"
#include "master/tasks.h"
#include "offerd/registry.pb-c.h"

/* Packed bytes are kept in segments of this size (an entity larger than
 * that gets a segment of its own). */
#define SEG_BYTES ((size_t)64 * 1024)

enum list_kind {
    L_TASKS,                /* live frameworks', then completed ones' */
    L_COMPLETED_TASKS,      /* their terminal and completed tasks */
    L_EXECUTORS,            /* live frameworks' */
    L_FRAMEWORKS,           /* live */
    L_COMPLETED_FRAMEWORKS, /* completed, oldest first */
    L_AGENTS,               /* registered */
    L_RECOVERED_AGENTS,     /* known from the registry, not yet back */
};

enum op_kind { OP_OPEN, OP_LIST, OP_CLOSE, OP_END };

/* One step of a body's program. field is the protobuf field number of the
 * sub-message or list in its parent (master.proto). */
struct op {
    enum op_kind kind;
    const char *name;
    uint32_t field;
    enum list_kind list;
};

#define OPEN(n, f)                                                             \
    {                                                                          \
        OP_OPEN, n, f, 0                                                       \
    }
#define LIST(n, f, l)                                                          \
    {                                                                          \
        OP_LIST, n, f, l                                                       \
    }
#define CLOSE                                                                  \
    {                                                                          \
        OP_CLOSE, NULL, 0, 0                                                   \
    }
#define END                                                                    \
    {                                                                          \
        OP_END, NULL, 0, 0                                                     \
    }

/* Response.GetTasks, GetExecutors, GetFrameworks, GetAgents as field f;
 * the lists offerd always leaves empty (pending, unreachable and orphan
 * tasks, orphan executors, recovered frameworks) are not written. */
#define GET_TASKS(f)                                                           \
    OPEN("get_tasks", f), LIST("tasks", 2, L_TASKS),                           \
        LIST("completed_tasks", 3, L_COMPLETED_TASKS), CLOSE
#define GET_EXECUTORS(f)                                                       \
    OPEN("get_executors", f), LIST("executors", 1, L_EXECUTORS), CLOSE
#define GET_FRAMEWORKS(f)                                                      \
    OPEN("get_frameworks", f), LIST("frameworks", 1, L_FRAMEWORKS),            \
        LIST("completed_frameworks", 2, L_COMPLETED_FRAMEWORKS), CLOSE
#define GET_AGENTS(f)                                                          \
    OPEN("get_agents", f), LIST("agents", 1, L_AGENTS),                        \
        LIST("recovered_agents", 2, L_RECOVERED_AGENTS), CLOSE

static const struct op prog_state[] = {OPEN("get_state", 9),
                                       GET_TASKS(1),
                                       GET_EXECUTORS(2),
                                       GET_FRAMEWORKS(3),
                                       GET_AGENTS(4),
                                       CLOSE,
                                       END};
static const struct op prog_agents[] = {GET_AGENTS(10), END};
static const struct op prog_frameworks[] = {GET_FRAMEWORKS(11), END};
static const struct op prog_executors[] = {GET_EXECUTORS(12), END};
static const struct op prog_tasks[] = {GET_TASKS(13), END};

static const struct {
    Mesos__V1__Master__Call__Type call;
    Mesos__V1__Master__Response__Type response;
    const struct op *prog;
} calls[] = {
    {MESOS__V1__MASTER__CALL__TYPE__GET_STATE,
     MESOS__V1__MASTER__RESPONSE__TYPE__GET_STATE, prog_state},
    {MESOS__V1__MASTER__CALL__TYPE__GET_AGENTS,
     MESOS__V1__MASTER__RESPONSE__TYPE__GET_AGENTS, prog_agents},
    {MESOS__V1__MASTER__CALL__TYPE__GET_FRAMEWORKS,
     MESOS__V1__MASTER__RESPONSE__TYPE__GET_FRAMEWORKS, prog_frameworks},
    {MESOS__V1__MASTER__CALL__TYPE__GET_EXECUTORS,
     MESOS__V1__MASTER__RESPONSE__TYPE__GET_EXECUTORS, prog_executors},
    {MESOS__V1__MASTER__CALL__TYPE__GET_TASKS,
     MESOS__V1__MASTER__RESPONSE__TYPE__GET_TASKS, prog_tasks},
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

/* Packed bytes, in order. */
struct seg {
    struct seg *next;
    size_t len, cap;
    uint8_t data[];
};

/* An open protobuf message: its bytes so far and its field in its
 * parent. */
struct level {
    struct seg *head, *tail;
    size_t len; /* bytes in all of its segments */
    uint32_t field;
};

/* Copies of ids taken at one moment. */
struct idl {
    char **v;
    size_t n;
};

struct cursor {
    struct master *m;
    const char *who; /* borrowed from the production */
    enum http_encoding enc;
    Mesos__V1__Master__Response__Type type;
    bool head_done;      /* JSON: '{' and the Response's type written */
    const struct op *pc; /* the step under way; NULL: sending (protobuf) */
    bool started;        /* the current list's ids are taken */
    bool listed;         /* JSON: the current list's '[' is written */
    struct idl ids;      /* the current list's entities (frameworks for
                            the lists of tasks and executors) */
    size_t nlive;        /* of ids, the live frameworks come first */
    size_t i;            /* next of ids */
    struct idl tasks;    /* the tasks of framework ids.v[i] */
    bool fw_begun;       /* tasks holds them */
    size_t ti;           /* next of tasks */
    struct level lv[4];  /* protobuf: the open messages, lv[0] the Response */
    int depth;
    struct seg *out; /* protobuf: the finished body, left to send */
};

/* ---- Ids --------------------------------------------------------------- */

static void idl_clear(struct idl *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Append copies of map's keys to l. */
static void idl_add_keys(struct idl *l, const struct hmap *map)
{
    size_t n = hmap_count(map);
    l->v = xreallocarray(l->v, l->n + n + 1, sizeof(*l->v));
    size_t pos = 0;
    const char *key;
    while (hmap_next(map, &pos, &key, NULL))
        l->v[l->n++] = xstrdup(key);
}

/* ---- Protobuf output ----------------------------------------------------- */

static size_t varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Room for n more bytes at the end of l (commit them with level_grew). */
static uint8_t *level_room(struct level *l, size_t n)
{
    struct seg *t = l->tail;
    if (t == NULL || t->cap - t->len < n) {
        size_t cap = n > SEG_BYTES ? n : SEG_BYTES;
        struct seg *s = xmalloc(sizeof(*s) + cap);
        s->next = NULL;
        s->len = 0;
        s->cap = cap;
        if (t != NULL)
            t->next = s;
        else
            l->head = s;
        l->tail = t = s;
    }
    return t->data + t->len;
}

static void level_grew(struct level *l, size_t n)
{
    l->tail->len += n;
    l->len += n;
}

/* A length-delimited field's key and length. */
static void put_header(struct level *l, uint32_t field, size_t len)
{
    uint8_t *p = level_room(l, 20);
    size_t n = varint(p, (uint64_t)field << 3 | 2);
    n += varint(p + n, len);
    level_grew(l, n);
}

static void segs_free(struct seg *s)
{
    while (s != NULL) {
        struct seg *next = s->next;
        free(s);
        s = next;
    }
}

/* Close the innermost open message: its header, then its segments, go to
 * its parent. */
static void level_close(struct cursor *c)
{
    struct level *child = &c->lv[c->depth--];
    struct level *parent = &c->lv[c->depth];
    put_header(parent, child->field, child->len);
    if (child->head != NULL) {
        parent->tail->next = child->head;
        parent->tail = child->tail;
        parent->len += child->len;
    }
    memset(child, 0, sizeof(*child));
}

/* ---- Entities ------------------------------------------------------------ */

/* Whether the reader may see msg (an element of a list of kind): the
 * ACL filter of the whole Response run on a Response that holds msg
 * alone. msg is freed when refused. */
static bool keeps(struct cursor *c, enum list_kind kind, void *msg)
{
    if (!master_authz_has_acls(c->m))
        return true;
    Mesos__V1__Master__Response r = MESOS__V1__MASTER__RESPONSE__INIT;
    Mesos__V1__Master__Response__GetTasks gt =
        MESOS__V1__MASTER__RESPONSE__GET_TASKS__INIT;
    Mesos__V1__Master__Response__GetExecutors ge =
        MESOS__V1__MASTER__RESPONSE__GET_EXECUTORS__INIT;
    Mesos__V1__Master__Response__GetFrameworks gf =
        MESOS__V1__MASTER__RESPONSE__GET_FRAMEWORKS__INIT;
    Mesos__V1__Master__Response__GetAgents ga =
        MESOS__V1__MASTER__RESPONSE__GET_AGENTS__INIT;
    void *one[1] = {msg};
    size_t *n = NULL;
    switch (kind) {
    case L_TASKS:
    case L_COMPLETED_TASKS:
        gt.tasks = (Mesos__V1__Task **)one;
        n = &gt.n_tasks;
        r.get_tasks = &gt;
        break;
    case L_EXECUTORS:
        ge.executors =
            (Mesos__V1__Master__Response__GetExecutors__Executor **)one;
        n = &ge.n_executors;
        r.get_executors = &ge;
        break;
    case L_FRAMEWORKS:
    case L_COMPLETED_FRAMEWORKS:
        gf.frameworks =
            (Mesos__V1__Master__Response__GetFrameworks__Framework **)one;
        n = &gf.n_frameworks;
        r.get_frameworks = &gf;
        break;
    case L_AGENTS:
        ga.agents = (Mesos__V1__Master__Response__GetAgents__Agent **)one;
        n = &ga.n_agents;
        r.get_agents = &ga;
        break;
    case L_RECOVERED_AGENTS:
        ga.recovered_agents = (Mesos__V1__AgentInfo **)one;
        n = &ga.n_recovered_agents;
        r.get_agents = &ga;
        break;
    }
    *n = 1;
    master_authz_filter_response(c->m, c->who, &r.base);
    return *n == 1;
}

/* Write msg (built for this step; taken) as the next element of the
 * current list, unless the reader may not see it. */
static void emit(struct cursor *c, struct jout *w, ProtobufCMessage *msg)
{
    const struct op *op = c->pc;
    if (!keeps(c, op->list, msg))
        return;
    if (c->enc == HTTP_ENC_JSON) {
        if (!c->listed) {
            jout_key(w, op->name);
            jout_arr_begin(w);
            c->listed = true;
        } else {
            jout_raw(w, ",", 1);
        }
        size_t len;
        char *text = jpb_to_json_text(msg, &len);
        jout_raw(w, text, len);
        free(text);
    } else {
        struct level *l = &c->lv[c->depth];
        size_t len = protobuf_c_message_get_packed_size(msg);
        uint8_t *p = level_room(l, 20 + len);
        size_t n = varint(p, (uint64_t)op->field << 3 | 2);
        n += varint(p + n, len);
        n += protobuf_c_message_pack(msg, p + n);
        level_grew(l, n);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

/* Framework ids.v[c->i] (live or completed, as ids lists it), or NULL. */
static const struct framework *current_fw(const struct cursor *c)
{
    const struct hmap *map =
        c->i < c->nlive ? c->m->frameworks : c->m->completed;
    return hmap_get(map, c->ids.v[c->i]);
}

static void next_fw(struct cursor *c)
{
    idl_clear(&c->tasks);
    c->fw_begun = false;
    c->ti = 0;
    c->i++;
}

/* One task of the current framework (or, past its tasks, its completed
 * ones at once); as operator_state.c's get_tasks sorts them. */
static void step_task(struct cursor *c, struct jout *w,
                      const struct framework *fw, bool completed)
{
    if (!c->fw_begun) {
        idl_add_keys(&c->tasks, fw->tasks);
        c->fw_begun = true;
    }
    if (c->ti < c->tasks.n) {
        const struct task *t = hmap_get(fw->tasks, c->tasks.v[c->ti++]);
        if (t != NULL && task_state_is_terminal(t->state) == completed)
            emit(c, w, &master_opst_task(t)->base);
        return;
    }
    /* A framework's completed tasks are bounded by
     * --max_completed_tasks_per_framework: one step. */
    if (completed)
        for (uint32_t k = 0; k < fw->ncompleted_tasks; k++)
            emit(
                c, w,
                &master_opst_completed_task(fw, master_task_completed_at(fw, k))
                     ->base);
    next_fw(c);
}

/* Take the current list's ids. */
static void list_start(struct cursor *c)
{
    struct master *m = c->m;
    enum list_kind k = c->pc->list;
    switch (k) {
    case L_TASKS:
    case L_COMPLETED_TASKS:
    case L_EXECUTORS:
    case L_FRAMEWORKS:
    case L_COMPLETED_FRAMEWORKS:
        if (k != L_COMPLETED_FRAMEWORKS)
            idl_add_keys(&c->ids, m->frameworks);
        c->nlive = c->ids.n;
        if (k == L_EXECUTORS || k == L_FRAMEWORKS)
            break;
        /* The completed frameworks (their tasks, or themselves). */
        c->ids.v = xreallocarray(c->ids.v, c->ids.n + m->ncompleted + 1,
                                 sizeof(*c->ids.v));
        for (uint32_t i = 0; i < m->ncompleted; i++)
            c->ids.v[c->ids.n++] = xstrdup(m->completed_order[i]);
        break;
    case L_AGENTS:
        idl_add_keys(&c->ids, m->agents);
        break;
    case L_RECOVERED_AGENTS:
        idl_add_keys(&c->ids, m->recovered_agents);
        break;
    }
    c->i = 0;
    c->started = true;
}

/* The current list's next entity; false when the list is done. */
static bool step_list(struct cursor *c, struct jout *w)
{
    if (!c->started)
        list_start(c);
    if (c->i >= c->ids.n)
        return false;
    struct master *m = c->m;
    const char *id = c->ids.v[c->i];
    switch (c->pc->list) {
    case L_TASKS:
    case L_COMPLETED_TASKS: {
        const struct framework *fw = current_fw(c);
        if (fw == NULL)
            next_fw(c);
        else
            step_task(c, w, fw, c->pc->list == L_COMPLETED_TASKS);
        return true;
    }
    case L_EXECUTORS: {
        const struct framework *fw = current_fw(c);
        size_t pos = 0;
        void *val;
        while (fw != NULL && hmap_next(fw->executors, &pos, NULL, &val))
            emit(c, w, &master_opst_executor(val)->base);
        break;
    }
    case L_FRAMEWORKS:
    case L_COMPLETED_FRAMEWORKS: {
        const struct framework *fw = hmap_get(
            c->pc->list == L_FRAMEWORKS ? m->frameworks : m->completed, id);
        if (fw != NULL)
            emit(c, w, &master_opst_framework(fw)->base);
        break;
    }
    case L_AGENTS: {
        const struct agent *ag = hmap_get(m->agents, id);
        if (ag != NULL && ag->info != NULL) /* NULL: being admitted */
            emit(c, w, &master_opst_agent(ag)->base);
        break;
    }
    case L_RECOVERED_AGENTS: {
        const Offerd__Registry__Agent *r = hmap_get(m->recovered_agents, id);
        if (r != NULL)
            emit(c, w,
                 jpb_copy(&mesos__v1__agent_info__descriptor, &r->info->base));
        break;
    }
    }
    c->i++;
    return true;
}

static void list_end(struct cursor *c, struct jout *w)
{
    if (c->listed)
        jout_arr_end(w);
    c->listed = false;
    c->started = false;
    idl_clear(&c->ids);
    idl_clear(&c->tasks);
    c->fw_begun = false;
    c->ti = 0;
    c->nlive = 0;
}

/* Send a segment of the finished protobuf body; true when all went. */
static bool send_packed(struct cursor *c, struct jout *w)
{
    struct seg *s = c->out;
    if (s == NULL)
        return true;
    jout_raw(w, (const char *)s->data, s->len);
    c->out = s->next;
    free(s);
    return c->out == NULL;
}

/* ---- The body ------------------------------------------------------------ */

static const struct op *prog_of(Mesos__V1__Master__Call__Type type,
                                Mesos__V1__Master__Response__Type *response)
{
    for (size_t i = 0; i < NCALLS; i++)
        if (calls[i].call == type) {
            if (response != NULL)
                *response = calls[i].response;
            return calls[i].prog;
        }
    return NULL;
}

/* variant: the call type * 2 + the encoding. */
static void *body_start(struct master *m, const char *who, int variant)
{
    struct cursor *c = xcalloc(1, sizeof(*c));
    c->m = m;
    c->who = who;
    c->enc = (enum http_encoding)(variant % 2);
    Mesos__V1__Master__Response__Type rt = 0;
    c->pc = prog_of((Mesos__V1__Master__Call__Type)(variant / 2), &rt);
    c->type = rt;
    /* The Response's type comes first; its sub-message follows. */
    if (c->enc == HTTP_ENC_PROTOBUF) {
        uint8_t *p = level_room(&c->lv[0], 20);
        size_t n = varint(p, 1 << 3 | 0);
        n += varint(p + n, (uint64_t)rt);
        level_grew(&c->lv[0], n);
    }
    return c;
}

static bool body_step(void *arg, struct jout *w)
{
    struct cursor *c = arg;
    if (c->pc == NULL) /* the protobuf body is being sent */
        return send_packed(c, w);
    bool json = c->enc == HTTP_ENC_JSON;
    if (json && !c->head_done) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &mesos__v1__master__response__type__descriptor, (int)c->type);
        jout_obj_begin(w);
        jout_kstr(w, "type", v->name);
        c->head_done = true;
        return false;
    }
    const struct op *op = c->pc;
    switch (op->kind) {
    case OP_OPEN:
        if (json) {
            jout_key(w, op->name);
            jout_obj_begin(w);
        }
        c->depth++;
        c->lv[c->depth].field = op->field;
        break;
    case OP_LIST:
        if (step_list(c, w))
            return false;
        list_end(c, w);
        break;
    case OP_CLOSE:
        if (json) {
            jout_obj_end(w);
            c->depth--;
        } else {
            level_close(c);
        }
        break;
    case OP_END:
        if (json) {
            jout_obj_end(w);
            return true;
        }
        c->out = c->lv[0].head;
        memset(&c->lv[0], 0, sizeof(c->lv[0]));
        c->pc = NULL;
        return false;
    }
    c->pc++;
    return false;
}

static void body_free(void *arg)
{
    struct cursor *c = arg;
    if (c == NULL)
        return;
    idl_clear(&c->ids);
    idl_clear(&c->tasks);
    for (size_t i = 0; i < sizeof(c->lv) / sizeof(c->lv[0]); i++)
        segs_free(c->lv[i].head);
    segs_free(c->out);
    free(c);
}

static const struct master_body_ops body_ops = {
    .name = "GET_STATE",
    .start = body_start,
    .step = body_step,
    .free = body_free,
};

bool master_opstream_serves(Mesos__V1__Master__Call__Type type)
{
    return prog_of(type, NULL) != NULL;
}

void master_opstream_reply(struct master *m, struct http_request *req,
                           const char *who, Mesos__V1__Master__Call__Type type,
                           enum http_encoding enc)
{
    master_state_stream_serve(m, req, who,
                              enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON
                                                   : HTTP_CONTENT_PROTOBUF,
                              &body_ops, (int)type * 2 + (int)enc);
}

uint8_t *master_opstream_body(struct master *m, const char *who,
                              Mesos__V1__Master__Call__Type type,
                              enum http_encoding enc, size_t *len)
{
    struct jout w;
    jout_init(&w);
    void *c = body_start(m, who, (int)type * 2 + (int)enc);
    while (!body_step(c, &w))
        ;
    body_free(c);
    *len = w.len;
    uint8_t *out = xmalloc(w.len + 1);
    if (w.len > 0)
        memcpy(out, w.buf, w.len);
    out[w.len] = 0;
    jout_free(&w);
    return out;
}
