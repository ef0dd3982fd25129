/*
 * A small custom executor for the tests, written only against Mesos's
 * documented v1 Executor HTTP API (docs/executor-http-api.md in
 * apache/mesos): JSON over plain HTTP/1.1, nothing of offerd linked in
 * but jansson for JSON.
 *
 * It reads MESOS_AGENT_ENDPOINT, MESOS_FRAMEWORK_ID, MESOS_EXECUTOR_ID and
 * MESOS_CHECKPOINT (and MESOS_EXECUTOR_AUTHENTICATION_TOKEN, sent as
 * "Authorization: Bearer" on every call when set), SUBSCRIBEs, and then:
 *   LAUNCH / LAUNCH_GROUP  TASK_RUNNING for each task; a task whose name
 *                          starts with "finish" then gets TASK_FINISHED
 *   KILL                   TASK_KILLED
 *   MESSAGE                a MESSAGE back: "echo:" and the data
 *   ACKNOWLEDGED           forgets the update
 *   SHUTDOWN               TASK_KILLED for every running task, exit 0
 * When the stream ends and MESOS_CHECKPOINT is 1 (the agent restarts), it
 * subscribes again every 200 ms for up to 60 s with its unacknowledged
 * tasks and updates; otherwise it exits 1.
 *
 * TEST_EXECUTOR_MODE=silent: never subscribe (sleep until killed);
 * TEST_EXECUTOR_MODE=noresub: once the stream ends, never subscribe again.
 * Every step is logged on stdout (the sandbox's stdout file).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 64

static const char *endpoint, *framework_id, *executor_id;
static char host[256], port[16];

struct task {
    char id[256];
    json_t *info;  /* TaskInfo as launched */
    bool terminal; /* a terminal update was sent */
};

struct pending {
    char uuid[32]; /* base64 */
    json_t *status;
};

static struct task tasks[MAX_TASKS];
static size_t ntasks;
static struct pending pend[MAX_TASKS * 4];
static size_t npend;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("test_executor: ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

/* ---- base64 ---- */

static const char b64c[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_encode(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = b64c[(v >> 18) & 63];
        out[o++] = b64c[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64c[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64c[v & 63] : '=';
    }
    out[o] = '\0';
}

static size_t b64_decode(const char *in, uint8_t *out, size_t cap)
{
    uint32_t v = 0;
    int bits = 0;
    size_t o = 0;
    for (; *in && *in != '='; in++) {
        const char *p = strchr(b64c, *in);
        if (p == NULL)
            continue;
        v = (v << 6) | (uint32_t)(p - b64c);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o < cap)
                out[o++] = (uint8_t)(v >> bits);
        }
    }
    return o;
}

/* ---- HTTP ---- */

static int connect_agent(void)
{
    struct addrinfo hints, *res;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* POST a Call; returns the connected socket after the request, or -1. */
static int post_call(json_t *call)
{
    char *body = json_dumps(call, JSON_COMPACT);
    int fd = connect_agent();
    if (fd < 0) {
        free(body);
        return -1;
    }
    /* The token the agent gave us, as Mesos's executors send it. */
    const char *token = getenv("MESOS_EXECUTOR_AUTHENTICATION_TOKEN");
    char head[4096 + 512];
    int hl = snprintf(head, sizeof(head),
                      "POST /api/v1/executor HTTP/1.1\r\nHost: %s\r\n"
                      "Content-Type: application/json\r\n%s%s%s"
                      "Accept: application/json\r\nContent-Length: %zu\r\n\r\n",
                      endpoint, token != NULL ? "Authorization: Bearer " : "",
                      token != NULL ? token : "", token != NULL ? "\r\n" : "",
                      strlen(body));
    if (hl < 0 || (size_t)hl >= sizeof(head)) {
        free(body);
        close(fd);
        return -1;
    }
    int rc =
        write_all(fd, head, (size_t)hl) | write_all(fd, body, strlen(body));
    free(body);
    if (rc != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A buffered reader over a socket. */
struct rd {
    int fd;
    char buf[65536];
    size_t start, end;
};

static int rd_fill(struct rd *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->end == sizeof(r->buf))
        return -1;
    ssize_t n;
    do
        n = read(r->fd, r->buf + r->end, sizeof(r->buf) - r->end);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return -1;
    r->end += (size_t)n;
    return 0;
}

/* One line without CRLF into out; -1 at EOF. */
static int rd_line(struct rd *r, char *out, size_t cap)
{
    for (;;) {
        char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
        if (nl != NULL) {
            size_t len = (size_t)(nl - (r->buf + r->start));
            size_t n = len < cap - 1 ? len : cap - 1;
            memcpy(out, r->buf + r->start, n);
            out[n] = '\0';
            if (n > 0 && out[n - 1] == '\r')
                out[n - 1] = '\0';
            r->start += len + 1;
            return 0;
        }
        if (rd_fill(r) != 0)
            return -1;
    }
}

static int rd_bytes(struct rd *r, char *out, size_t len)
{
    while (r->end - r->start < len)
        if (rd_fill(r) != 0)
            return -1;
    memcpy(out, r->buf + r->start, len);
    r->start += len;
    return 0;
}

/* Read the status line and headers; returns the status code. */
static int read_head(struct rd *r)
{
    char line[1024];
    if (rd_line(r, line, sizeof(line)) != 0)
        return -1;
    int status = 0;
    if (sscanf(line, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    while (rd_line(r, line, sizeof(line)) == 0 && line[0] != '\0')
        ;
    return status;
}

/* A call answered with a status and nothing to keep. */
static int call_agent(json_t *call)
{
    int fd = post_call(call);
    json_decref(call);
    if (fd < 0)
        return -1;
    struct rd *r = calloc(1, sizeof(*r));
    r->fd = fd;
    int status = read_head(r);
    free(r);
    close(fd);
    return status;
}

static json_t *call_new(const char *type)
{
    return json_pack("{s:{s:s}, s:{s:s}, s:s}", "executor_id", "value",
                     executor_id, "framework_id", "value", framework_id, "type",
                     type);
}

/* ---- Tasks and updates ---- */

static struct task *task_find(const char *id)
{
    for (size_t i = 0; i < ntasks; i++)
        if (strcmp(tasks[i].id, id) == 0)
            return &tasks[i];
    return NULL;
}

static void send_update(const char *task_id, const char *state)
{
    uint8_t raw[16];
    for (size_t i = 0; i < 16; i++)
        raw[i] = (uint8_t)(rand() & 0xff);
    raw[6] = (uint8_t)((raw[6] & 0x0f) | 0x40);
    raw[8] = (uint8_t)((raw[8] & 0x3f) | 0x80);
    char uuid[32];
    b64_encode(raw, 16, uuid);
    json_t *st = json_pack(
        "{s:{s:s}, s:s, s:s, s:s, s:{s:s}, s:f}", "task_id", "value", task_id,
        "state", state, "source", "SOURCE_EXECUTOR", "uuid", uuid,
        "executor_id", "value", executor_id, "timestamp", (double)time(NULL));
    if (npend < sizeof(pend) / sizeof(pend[0])) {
        snprintf(pend[npend].uuid, sizeof(pend[npend].uuid), "%s", uuid);
        pend[npend].status = json_incref(st);
        npend++;
    }
    json_t *call = call_new("UPDATE");
    json_object_set_new(call, "update", json_pack("{s:o}", "status", st));
    int status = call_agent(call);
    say("UPDATE %s %s: %d", task_id, state, status);
}

static void launch(json_t *info)
{
    const char *id = json_string_value(
        json_object_get(json_object_get(info, "task_id"), "value"));
    const char *name = json_string_value(json_object_get(info, "name"));
    if (id == NULL || ntasks == MAX_TASKS)
        return;
    say("LAUNCH %s (%s)", id, name ? name : "");
    struct task *t = task_find(id);
    if (t == NULL) {
        t = &tasks[ntasks++];
        snprintf(t->id, sizeof(t->id), "%s", id);
        t->info = json_incref(info);
    }
    send_update(id, "TASK_RUNNING");
    if (name != NULL && strncmp(name, "finish", 6) == 0) {
        t->terminal = true;
        send_update(id, "TASK_FINISHED");
    }
}

static void acknowledged(json_t *ack)
{
    const char *uuid = json_string_value(json_object_get(ack, "uuid"));
    for (size_t i = 0; uuid != NULL && i < npend; i++)
        if (strcmp(pend[i].uuid, uuid) == 0) {
            say("ACKNOWLEDGED %s", uuid);
            json_decref(pend[i].status);
            pend[i] = pend[--npend];
            return;
        }
}

static void message(json_t *m)
{
    const char *data = json_string_value(json_object_get(m, "data"));
    uint8_t raw[4096];
    size_t n = data != NULL ? b64_decode(data, raw, sizeof(raw) - 1) : 0;
    raw[n] = '\0';
    say("MESSAGE %s", (char *)raw);
    char reply[4200];
    int rl = snprintf(reply, sizeof(reply), "echo:%s", (char *)raw);
    char enc[6000];
    b64_encode((const uint8_t *)reply, (size_t)rl, enc);
    json_t *call = call_new("MESSAGE");
    json_object_set_new(call, "message", json_pack("{s:s}", "data", enc));
    say("MESSAGE sent: %d", call_agent(call));
}

static void kill_task(const char *id)
{
    struct task *t = task_find(id);
    say("KILL %s", id);
    if (t != NULL && !t->terminal) {
        t->terminal = true;
        send_update(id, "TASK_KILLED");
    }
}

/* Handle one event; returns 1 to exit. */
static int handle(json_t *ev)
{
    const char *type = json_string_value(json_object_get(ev, "type"));
    if (type == NULL)
        return 0;
    if (strcmp(type, "SUBSCRIBED") == 0) {
        say("SUBSCRIBED");
    } else if (strcmp(type, "LAUNCH") == 0) {
        launch(json_object_get(json_object_get(ev, "launch"), "task"));
    } else if (strcmp(type, "LAUNCH_GROUP") == 0) {
        json_t *v = json_object_get(
            json_object_get(json_object_get(ev, "launch_group"), "task_group"),
            "tasks");
        size_t i;
        json_t *ti;
        json_array_foreach(v, i, ti) launch(ti);
    } else if (strcmp(type, "KILL") == 0) {
        const char *id = json_string_value(json_object_get(
            json_object_get(json_object_get(ev, "kill"), "task_id"), "value"));
        if (id != NULL)
            kill_task(id);
    } else if (strcmp(type, "ACKNOWLEDGED") == 0) {
        acknowledged(json_object_get(ev, "acknowledged"));
    } else if (strcmp(type, "MESSAGE") == 0) {
        message(json_object_get(ev, "message"));
    } else if (strcmp(type, "SHUTDOWN") == 0) {
        say("SHUTDOWN");
        for (size_t i = 0; i < ntasks; i++)
            if (!tasks[i].terminal) {
                tasks[i].terminal = true;
                send_update(tasks[i].id, "TASK_KILLED");
            }
        return 1;
    } else if (strcmp(type, "ERROR") == 0) {
        say("ERROR %s", json_dumps(ev, JSON_COMPACT));
    } else {
        say("%s", type);
    }
    return 0;
}

/* Subscribe and handle the stream until it ends. Returns 1 to exit
 * (SHUTDOWN), 0 when the stream ended, -1 when it could not open. */
static int subscribe(bool again)
{
    json_t *call = call_new("SUBSCRIBE");
    json_t *sub = json_object();
    if (again) {
        json_t *ut = json_array(), *uu = json_array();
        for (size_t i = 0; i < ntasks; i++) {
            bool acked = true;
            for (size_t k = 0; k < npend; k++) {
                const char *tid = json_string_value(json_object_get(
                    json_object_get(pend[k].status, "task_id"), "value"));
                if (tid != NULL && strcmp(tid, tasks[i].id) == 0)
                    acked = false;
            }
            if (!acked)
                json_array_append(ut, tasks[i].info);
        }
        for (size_t k = 0; k < npend; k++)
            json_array_append_new(uu,
                                  json_pack("{s:O}", "status", pend[k].status));
        json_object_set_new(sub, "unacknowledged_tasks", ut);
        json_object_set_new(sub, "unacknowledged_updates", uu);
    }
    json_object_set_new(call, "subscribe", sub);
    int fd = post_call(call);
    json_decref(call);
    if (fd < 0)
        return -1;
    struct rd *r = calloc(1, sizeof(*r));
    r->fd = fd;
    int status = read_head(r);
    if (status != 200) {
        say("SUBSCRIBE answered %d", status);
        free(r);
        close(fd);
        return -1;
    }
    say("SUBSCRIBE answered 200%s", again ? " (again)" : "");
    /* Chunked body: the chunks' bytes, cut into RecordIO records. */
    char *rec = NULL;
    size_t have = 0, cap = 0;
    int rc = 0;
    char line[64];
    while (rc == 0 && rd_line(r, line, sizeof(line)) == 0) {
        size_t clen = strtoul(line, NULL, 16);
        if (clen == 0)
            break;
        if (have + clen + 1 > cap) {
            cap = (have + clen + 1) * 2;
            rec = realloc(rec, cap);
        }
        if (rd_bytes(r, rec + have, clen) != 0 ||
            rd_line(r, line, sizeof(line)) != 0)
            break;
        have += clen;
        for (;;) {
            char *nl = memchr(rec, '\n', have);
            if (nl == NULL)
                break;
            size_t rlen = strtoul(rec, NULL, 10);
            size_t hl = (size_t)(nl - rec) + 1;
            if (have < hl + rlen)
                break;
            json_error_t jerr;
            json_t *ev = json_loadb(rec + hl, rlen, 0, &jerr);
            memmove(rec, rec + hl + rlen, have - hl - rlen);
            have -= hl + rlen;
            if (ev != NULL) {
                rc = handle(ev);
                json_decref(ev);
            }
            if (rc != 0)
                break;
        }
    }
    free(rec);
    free(r);
    close(fd);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int main(void)
{
    endpoint = getenv("MESOS_AGENT_ENDPOINT");
    framework_id = getenv("MESOS_FRAMEWORK_ID");
    executor_id = getenv("MESOS_EXECUTOR_ID");
    const char *ckpt = getenv("MESOS_CHECKPOINT");
    const char *mode = getenv("TEST_EXECUTOR_MODE");
    if (endpoint == NULL || framework_id == NULL || executor_id == NULL) {
        say("MESOS_AGENT_ENDPOINT, MESOS_FRAMEWORK_ID or MESOS_EXECUTOR_ID "
            "missing");
        return 2;
    }
    const char *colon = strrchr(endpoint, ':');
    if (colon == NULL)
        return 2;
    snprintf(host, sizeof(host), "%.*s", (int)(colon - endpoint), endpoint);
    snprintf(port, sizeof(port), "%s", colon + 1);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    say("executor %s of framework %s, agent %s, sandbox %s, checkpoint %s",
        executor_id, framework_id, endpoint, getenv("MESOS_SANDBOX"),
        ckpt ? ckpt : "(unset)");
    if (mode != NULL && strcmp(mode, "silent") == 0) {
        say("silent: not subscribing");
        for (;;)
            sleep_ms(1000);
    }
    bool again = false;
    for (;;) {
        int rc = subscribe(again);
        if (rc == 1)
            return 0;
        if (mode != NULL && strcmp(mode, "noresub") == 0) {
            say("stream ended: not subscribing again");
            for (;;)
                sleep_ms(1000);
        }
        if (ckpt == NULL || strcmp(ckpt, "1") != 0) {
            say("stream ended and not checkpointing: exiting");
            return 1;
        }
        /* The agent restarts: subscribe again until it is back. */
        again = again || rc == 0;
        time_t give_up = time(NULL) + 60;
        while ((rc = subscribe(again)) == -1 && time(NULL) < give_up)
            sleep_ms(200);
        if (rc == 1)
            return 0;
        if (rc == -1) {
            say("agent did not come back: exiting");
            return 1;
        }
    }
}
