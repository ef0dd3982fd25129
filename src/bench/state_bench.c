/*
 * offerd-state-bench: the cost of GET /state at scale, and what it does to
 * everyone else. A master runs in this process on 127.0.0.1 (a port of its
 * own); it is filled through its own calls (agents SUBSCRIBE on the agent
 * API, one framework SUBSCRIBEs and ACCEPTs every offer with tasks), driven
 * as the unit tests drive it (common/http_fake.h, no sockets), so the state
 * is the one real calls make. Then, over real loopback connections from two
 * client threads: one reads /state back to back (each body read and
 * dropped), the other makes a cheap request (GET /health) every few
 * milliseconds, and the master's loop serves both. Prints one JSON object:
 * /state's time (p50, max) and size, the master loop's CPU time per read
 * (the cheap requests served meanwhile included), the process's resident
 * memory before the reads and its peak during them, and the cheap request's
 * latency while /state is read (p50, p99, max) and alone.
 *
 *   offerd-state-bench --agents=10000 --tasks=100000 --reads=5
 *   offerd-state-bench --quick            (ctest: small, checks it runs)
 *
 * --path=/state-summary reads another endpoint instead of /state;
 * --operator-call=GET_STATE POSTs that call to /api/v1 instead (the
 * operator API's read calls), answered in JSON, or in protobuf with
 * --protobuf;
 * --cheap=0 makes no cheap requests, so that the loop's CPU time per read
 * is the read's alone.
 *
 * --memory: where the master's bytes are. Each task is also reported
 * TASK_RUNNING by its agent and acknowledged by the framework (the shape of
 * a cluster whose tasks all run), the fake peers drop the events they get
 * (http_fake_forget) so that the heap holds the master's bytes and the
 * bench's few, and "memory" in the output gives malloc's bytes in use
 * (mallinfo2: arenas and mmapped blocks) and RSS at the start, after the
 * agents and after the tasks, with the bytes per agent and per task.
 * --memory-only stops there and exits without freeing anything, so that
 * under `heaptrack` the "leaks" are what the heap held at that point.
 *
 * The figures are the whole process's (the fill's fake peers hold their
 * events too), so the memory ones are read as "before the reads" and
 * "peak during them" (VmHWM reset through /proc/self/clear_refs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <jansson.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/agents.h"
#include "master/flags_master.h"
#include "master/master.h"
#include "master/registry_mem.h"
#include "master/scheduler_api.h"
#include "master/state_stream.h"

struct cfg {
    int agents, tasks, reads;
    bool quick;
    bool memory;      /* --memory: tasks run, the heap is measured */
    bool memory_only; /* --memory-only: and exit then, heap untouched */
    bool cheap;       /* make cheap requests while /state is read (default) */
    const char *path; /* what is read: /state, or /state-summary ... */
    const char *call; /* --operator-call: POST it to /api/v1 instead */
    bool protobuf;    /* --protobuf: the call answered in protobuf */
};

static struct event_base *base;
static struct master *M;

/* ---- Memory (--memory) --------------------------------------------------
 */

struct mem_at {
    double rss_mib;
    size_t heap; /* malloc's bytes in use: arenas and mmapped blocks */
};

static double proc_mib(const char *key);

static struct mem_at mem_now(void)
{
    /* Give back what the fill's peers freed, so that RSS is comparable. */
    malloc_trim(0);
    struct mallinfo2 mi = mallinfo2();
    return (struct mem_at){proc_mib("VmRSS"), mi.uordblks + mi.hblkhd};
}

static json_t *mem_json(struct mem_at a)
{
    return json_pack("{s:f, s:I}", "rss_mib", a.rss_mib, "heap_bytes",
                     (json_int_t)a.heap);
}

/* Per-entity figures of the step from a to b over n entities. */
static json_t *mem_step_json(struct mem_at a, struct mem_at b, int n)
{
    double dn = n > 0 ? n : 1;
    return json_pack("{s:f, s:f}", "heap_bytes_each",
                     ((double)b.heap - (double)a.heap) / dn, "rss_bytes_each",
                     (b.rss_mib - a.rss_mib) * 1048576.0 / dn);
}

/* ---- Driving the master in process -------------------------------------
 */

static bool is_replied(void *arg)
{
    return http_fake_replied(arg);
}

/* Run the loop until cond(arg) or seconds pass; false on the latter. */
static bool run_until(bool (*cond)(void *), void *arg, int seconds)
{
    int64_t deadline = clock_monotonic_ns() + (int64_t)seconds * 1000000000;
    while (!cond(arg)) {
        if (clock_monotonic_ns() > deadline)
            return false;
        event_base_loop(base, EVLOOP_ONCE);
    }
    return true;
}

static struct http_fake *post(http_handler_fn fn, const char *stream_id,
                              const char *json)
{
    struct http_fake *f = http_fake_new(base, HTTP_POST, "/api/v1");
    http_fake_add_header(f, "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(f, "Accept", HTTP_CONTENT_JSON);
    if (stream_id != NULL)
        http_fake_add_header(f, "Mesos-Stream-Id", stream_id);
    http_fake_set_body(f, json, strlen(json));
    http_fake_dispatch(f, fn, M);
    if (!run_until(is_replied, f, 30)) {
        fprintf(stderr, "no reply to %.200s\n", json);
        exit(1);
    }
    return f;
}

static bool has_records(void *arg)
{
    return http_fake_record_count(arg) > 0;
}

/* The JSON of record i of stream f (waits for it). */
static json_t *record(struct http_fake *f, size_t i)
{
    int64_t deadline = clock_monotonic_ns() + (int64_t)60 * 1000000000;
    while (http_fake_record_count(f) <= i) {
        if (clock_monotonic_ns() > deadline) {
            fprintf(stderr, "no event %zu\n", i);
            exit(1);
        }
        event_base_loop(base, EVLOOP_ONCE);
    }
    size_t len;
    const uint8_t *r = http_fake_record(f, i, &len);
    return json_loadb((const char *)r, len, 0, NULL);
}

/* The value of the id object key.sub.value in ev (borrowed), or "". */
static const char *id_in(json_t *ev, const char *key, const char *sub)
{
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(ev, key), sub), "value"));
    return v != NULL ? v : "";
}

/* A fake agent's identity, for its calls (--memory). */
struct bench_agent {
    char id[128];
    char stream_id[128];
};

/* Every task reported TASK_RUNNING by its agent and acknowledged by the
 * framework; the peers forget their events as they go. */
static void run_tasks(const struct cfg *c, struct http_fake **ag,
                      const struct bench_agent *ba, const int *task_agent,
                      struct http_fake *fw, const char *fw_stream,
                      const char *fwid)
{
    /* Any 16 bytes will do: the uuid of every task's one update. */
    const char *uuid = "AAAAAAAAAAAAAAAAAAAAAQ==";
    char json[1024];
    for (int k = 0; k < c->tasks; k++) {
        const struct bench_agent *a = &ba[task_agent[k]];
        snprintf(json, sizeof(json),
                 "{\"agent_id\":{\"value\":\"%s\"},\"type\":\"UPDATE\","
                 "\"update\":{\"framework_id\":{\"value\":\"%s\"},"
                 "\"status\":{\"task_id\":{\"value\":\"t-%d\"},\"state\":"
                 "\"TASK_RUNNING\",\"source\":\"SOURCE_EXECUTOR\",\"uuid\":"
                 "\"%s\",\"agent_id\":{\"value\":\"%s\"}}}}",
                 a->id, fwid, k, uuid, a->id);
        http_fake_free(post(master_agent_api, a->stream_id, json));
        snprintf(json, sizeof(json),
                 "{\"framework_id\":{\"value\":\"%s\"},\"type\":"
                 "\"ACKNOWLEDGE\",\"acknowledge\":{\"agent_id\":{\"value\":"
                 "\"%s\"},\"task_id\":{\"value\":\"t-%d\"},\"uuid\":\"%s\"}}",
                 fwid, a->id, k, uuid);
        http_fake_free(post(master_scheduler_api, fw_stream, json));
        http_fake_forget(ag[task_agent[k]]);
        http_fake_forget(fw);
    }
}

static void fill(const struct cfg *c, struct http_fake ***agents_out,
                 struct http_fake **fw_out, json_t *out)
{
    struct http_fake **ag = xcalloc((size_t)c->agents, sizeof(*ag));
    /* --memory's own arrays, made before the first figure. */
    struct bench_agent *ba = NULL;
    int *task_agent = NULL;
    struct hmap *agent_index = NULL;
    struct mem_at m0 = {0}, m1 = {0}, m2 = {0};
    if (c->memory) {
        ba = xcalloc((size_t)c->agents, sizeof(*ba));
        task_agent = xcalloc((size_t)c->tasks + 1, sizeof(*task_agent));
        agent_index = hmap_new();
        m0 = mem_now();
    }
    for (int i = 0; i < c->agents; i++) {
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
                 "\"hostname\":\"agent%d.example.org\",\"port\":5051,"
                 "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
                 "\"scalar\":{\"value\":64}},{\"name\":\"mem\",\"type\":"
                 "\"SCALAR\",\"scalar\":{\"value\":262144}}],\"attributes\":"
                 "[{\"name\":\"rack\",\"type\":\"TEXT\",\"text\":{\"value\":"
                 "\"r%d\"}}]},\"version\":\"bench\",\"address\":{\"ip\":"
                 "\"127.0.0.2\",\"port\":5051}}}",
                 i, i % 40);
        ag[i] = post(master_agent_api, NULL, json);
        if (c->memory) {
            json_t *reg = record(ag[i], 0);
            snprintf(ba[i].id, sizeof(ba[i].id), "%s",
                     id_in(reg, "registered", "agent_id"));
            json_decref(reg);
            const char *sid = http_fake_reply_header(ag[i], "Mesos-Stream-Id");
            snprintf(ba[i].stream_id, sizeof(ba[i].stream_id), "%s",
                     sid != NULL ? sid : "");
            http_fake_forget(ag[i]);
        }
    }
    if (c->memory) {
        /* The index is the bench's: measured before, not after, m1. */
        for (int i = 0; i < c->agents; i++)
            hmap_put(agent_index, ba[i].id, &ba[i]);
        m1 = mem_now();
    }
    struct http_fake *fw =
        post(master_scheduler_api, NULL,
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
             "\"user\":\"bench\",\"name\":\"bench\",\"roles\":[\"web\"],"
             "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}}}");
    char stream_id[128];
    snprintf(stream_id, sizeof(stream_id), "%s",
             http_fake_reply_header(fw, "Mesos-Stream-Id"));
    json_t *sub = record(fw, 0);
    char fwid[256];
    snprintf(fwid, sizeof(fwid), "%s",
             id_in(sub, "subscribed", "framework_id"));
    json_decref(sub);

    int per = (c->tasks + c->agents - 1) / c->agents, launched = 0;
    size_t next = 1;
    size_t cap = 4096 + (size_t)per * 700;
    char *json = xmalloc(cap);
    while (launched < c->tasks) {
        json_t *ev = record(fw, next++);
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type == NULL || strcmp(type, "OFFERS") != 0) {
            json_decref(ev);
            continue;
        }
        size_t i;
        json_t *of;
        json_array_foreach(
            json_object_get(json_object_get(ev, "offers"), "offers"), i, of)
        {
            const char *oid = json_string_value(
                json_object_get(json_object_get(of, "id"), "value"));
            const char *aid = json_string_value(
                json_object_get(json_object_get(of, "agent_id"), "value"));
            int n = per < c->tasks - launched ? per : c->tasks - launched;
            size_t len = (size_t)snprintf(
                json, cap,
                "{\"framework_id\":{\"value\":\"%s\"},\"type\":\"ACCEPT\","
                "\"accept\":{\"offer_ids\":[{\"value\":\"%s\"}],"
                "\"operations\":[{\"type\":\"LAUNCH\",\"launch\":{"
                "\"task_infos\":[",
                fwid, oid);
            for (int k = 0; k < n; k++)
                len += (size_t)snprintf(
                    json + len, cap - len,
                    "%s{\"name\":\"web-%d\",\"task_id\":{\"value\":\"t-%d\"},"
                    "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{"
                    "\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                    "\"value\":0.1}},{\"name\":\"mem\",\"type\":\"SCALAR\","
                    "\"scalar\":{\"value\":64}}],\"command\":{\"value\":"
                    "\"sleep 1000\"}}",
                    k ? "," : "", launched + k, launched + k, aid);
            /* The rest of each agent stays unoffered: no offers in /state. */
            snprintf(json + len, cap - len,
                     "]}}],\"filters\":{\"refuse_seconds\":86400}}}");
            if (c->memory) {
                const struct bench_agent *a = hmap_get(agent_index, aid);
                for (int k = 0; k < n && a != NULL; k++)
                    task_agent[launched + k] = (int)(a - ba);
            }
            launched += n;
            http_fake_free(post(master_scheduler_api, stream_id, json));
            if (launched >= c->tasks)
                break;
        }
        json_decref(ev);
    }
    free(json);
    if (c->memory) {
        http_fake_forget(fw);
        for (int i = 0; i < c->agents; i++)
            http_fake_forget(ag[i]);
        run_tasks(c, ag, ba, task_agent, fw, stream_id, fwid);
        m2 = mem_now();
        json_t *mem = json_object();
        json_object_set_new(mem, "start", mem_json(m0));
        json_object_set_new(mem, "agents_added", mem_json(m1));
        json_object_set_new(mem, "tasks_running", mem_json(m2));
        json_object_set_new(mem, "per_agent", mem_step_json(m0, m1, c->agents));
        json_object_set_new(mem, "per_task", mem_step_json(m1, m2, c->tasks));
        json_object_set_new(out, "memory", mem);
        hmap_free(agent_index, NULL);
        free(task_agent);
        free(ba);
    }
    *agents_out = ag;
    *fw_out = fw;
    (void)has_records;
}

/* ---- Clients over loopback ----------------------------------------------
 */

static uint16_t port;
static atomic_bool stop_cheap, readers_done;

static int connect_master(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

/* Send request req (its whole text) on a new connection, read to the end
 * of the response (chunked body's last chunk, or the connection's close);
 * returns the body's bytes (framing included) and the time taken in
 * *ns. */
static size_t roundtrip(const char *req, int64_t *ns)
{
    int64_t t0 = clock_monotonic_ns();
    int fd = connect_master();
    ssize_t n = (ssize_t)strlen(req);
    if (write(fd, req, (size_t)n) != n) {
        perror("write");
        exit(1);
    }
    static __thread char buf[1 << 16];
    size_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        total += (size_t)r;
    }
    close(fd);
    *ns = clock_monotonic_ns() - t0;
    return total;
}

/* The request that reads what c names (a GET of its path, or a POST of its
 * operator call), into buf. */
static void read_request(const struct cfg *c, char *buf, size_t size)
{
    if (c->call == NULL) {
        snprintf(buf, size,
                 "GET %s HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n"
                 "\r\n",
                 c->path);
        return;
    }
    char body[128];
    int n = snprintf(body, sizeof(body), "{\"type\":\"%s\"}", c->call);
    snprintf(buf, size,
             "POST /api/v1 HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n"
             "Content-Type: application/json\r\nAccept: %s\r\n"
             "Content-Length: %d\r\n\r\n%s",
             c->protobuf ? HTTP_CONTENT_PROTOBUF : HTTP_CONTENT_JSON, n, body);
}

static size_t get(const char *path, int64_t *ns)
{
    char req[256];
    snprintf(req, sizeof(req),
             "GET %s HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n",
             path);
    return roundtrip(req, ns);
}

struct reader_args {
    const char *req; /* the request's text */
    int reads;
    int64_t *ns;
    size_t bytes;
};

static void *state_reader(void *arg)
{
    struct reader_args *a = arg;
    for (int i = 0; i < a->reads; i++)
        a->bytes = roundtrip(a->req, &a->ns[i]);
    atomic_store(&readers_done, true);
    return NULL;
}

struct cheap_args {
    int64_t *ns;
    size_t n, cap;
};

static void *cheap_caller(void *arg)
{
    struct cheap_args *a = arg;
    while (!atomic_load(&stop_cheap) && a->n < a->cap) {
        (void)get("/health", &a->ns[a->n++]);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void on_check(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    if (atomic_load((atomic_bool *)arg))
        event_base_loopbreak(base);
}

/* Serve on the loop until flag turns true. */
static void serve_until(atomic_bool *flag)
{
    struct event *ev = event_new(base, -1, EV_PERSIST, on_check, flag);
    struct timeval tv = {0, 2000};
    event_add(ev, &tv);
    event_base_dispatch(base);
    event_free(ev);
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static double pct_ms(int64_t *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_i64);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return (double)v[i] / 1e6;
}

/* VmRSS or VmHWM of this process, in MiB. */
static double proc_mib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = 0;
    size_t klen = strlen(key);
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, key, klen) == 0 && line[klen] == ':')
            v = strtod(line + klen + 1, NULL) / 1024.0;
    if (f != NULL)
        fclose(f);
    return v;
}

/* This thread's time on a CPU and waiting for one (run queue), in ns:
 * the first two fields of /proc/thread-self/schedstat (zero when the
 * kernel has no schedstats). */
static void sched_ns(int64_t *run, int64_t *wait)
{
    long long r = 0, w = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f != NULL) {
        if (fscanf(f, "%lld %lld", &r, &w) != 2)
            r = w = 0;
        fclose(f);
    }
    *run = r;
    *wait = w;
}

static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f != NULL) {
        fputs("5", f);
        fclose(f);
    }
}

/* The cheap request's latencies alone, then while /state is read. */
static void measure(const struct cfg *c, json_t *out)
{
    struct cheap_args alone = {.cap = 200};
    alone.ns = xcalloc(alone.cap, sizeof(int64_t));
    alone.cap = c->quick ? 20 : 100;
    atomic_store(&stop_cheap, false);
    pthread_t th;
    pthread_create(&th, NULL, cheap_caller, &alone);
    /* The caller stops itself after cap requests; serve it until then. */
    while (pthread_tryjoin_np(th, NULL) != 0) {
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }

    double rss_before = proc_mib("VmRSS");
    reset_peak();
    /* This thread runs the master's loop: its CPU time is the master's. */
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    int64_t run0, wait0, run1, wait1;
    int64_t wall0 = clock_monotonic_ns();
    sched_ns(&run0, &wait0);
    char req[512];
    read_request(c, req, sizeof(req));
    struct reader_args ra = {.req = req, .reads = c->reads};
    ra.ns = xcalloc((size_t)c->reads, sizeof(int64_t));
    struct cheap_args during = {.cap = 100000};
    during.ns = xcalloc(during.cap, sizeof(int64_t));
    atomic_store(&readers_done, false);
    atomic_store(&stop_cheap, false);
    pthread_t tr, tc;
    pthread_create(&tr, NULL, state_reader, &ra);
    if (c->cheap)
        pthread_create(&tc, NULL, cheap_caller, &during);
    serve_until(&readers_done);
    atomic_store(&stop_cheap, true);
    /* Serve the cheap caller's last request. */
    while (c->cheap && pthread_tryjoin_np(tc, NULL) != 0)
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    pthread_join(tr, NULL);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    sched_ns(&run1, &wait1);
    int64_t wall1 = clock_monotonic_ns();
    double cpu_ms = (double)(cpu1.tv_sec - cpu0.tv_sec) * 1e3 +
                    (double)(cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
    double peak = proc_mib("VmHWM");

    json_object_set_new(out, "path", json_string(c->path));
    if (c->call != NULL) {
        json_object_set_new(out, "operator_call", json_string(c->call));
        json_object_set_new(out, "accept",
                            json_string(c->protobuf ? HTTP_CONTENT_PROTOBUF
                                                    : HTTP_CONTENT_JSON));
    }
    /* /state's slices, and how often one was put off for a reader behind. */
    struct master_state_stream_stats ss;
    master_state_stream_stats(M, &ss);
    json_object_set_new(out, "state_slices",
                        json_integer((json_int_t)ss.slices));
    json_object_set_new(out, "state_pauses",
                        json_integer((json_int_t)ss.pauses));
    json_object_set_new(out, "state_bytes", json_integer((json_int_t)ra.bytes));
    json_object_set_new(out, "state_reads", json_integer(c->reads));
    json_object_set_new(out, "state_ms_p50",
                        json_real(pct_ms(ra.ns, (size_t)c->reads, 0.5)));
    json_object_set_new(out, "state_ms_max",
                        json_real(pct_ms(ra.ns, (size_t)c->reads, 1.0)));
    json_object_set_new(out, "master_cpu_ms_per_read",
                        json_real(cpu_ms / c->reads));
    /* Where the master's loop thread spent the reads' wall time: on a
     * CPU, runnable but waiting for one (the machine's load), and the
     * rest idle (waiting for the readers or a timer). */
    double per = 1e6 * c->reads;
    double run_ms = (double)(run1 - run0) / per;
    double wait_ms = (double)(wait1 - wait0) / per;
    double wall_ms = (double)(wall1 - wall0) / per;
    json_object_set_new(out, "master_wall_ms_per_read", json_real(wall_ms));
    json_object_set_new(out, "master_runqueue_wait_ms_per_read",
                        json_real(wait_ms));
    json_object_set_new(out, "master_idle_ms_per_read",
                        json_real(wall_ms - run_ms - wait_ms));
    json_object_set_new(out, "rss_mib_before_reads", json_real(rss_before));
    json_object_set_new(out, "peak_rss_mib_during_reads", json_real(peak));
    json_object_set_new(out, "cheap_ms_alone_p50",
                        json_real(pct_ms(alone.ns, alone.n, 0.5)));
    json_object_set_new(out, "cheap_ms_alone_p99",
                        json_real(pct_ms(alone.ns, alone.n, 0.99)));
    json_object_set_new(out, "cheap_calls_during_state",
                        json_integer((json_int_t)during.n));
    json_object_set_new(out, "cheap_ms_during_state_p50",
                        json_real(pct_ms(during.ns, during.n, 0.5)));
    json_object_set_new(out, "cheap_ms_during_state_p99",
                        json_real(pct_ms(during.ns, during.n, 0.99)));
    json_object_set_new(out, "cheap_ms_during_state_max",
                        json_real(pct_ms(during.ns, during.n, 1.0)));
    free(alone.ns);
    free(during.ns);
    free(ra.ns);
}

int main(int argc, char **argv)
{
    struct cfg c = {.agents = 10000,
                    .tasks = 100000,
                    .reads = 5,
                    .cheap = true,
                    .path = "/state"};
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--agents=", 9) == 0)
            c.agents = atoi(argv[i] + 9);
        else if (strncmp(argv[i], "--tasks=", 8) == 0)
            c.tasks = atoi(argv[i] + 8);
        else if (strncmp(argv[i], "--reads=", 8) == 0)
            c.reads = atoi(argv[i] + 8);
        else if (strncmp(argv[i], "--path=", 7) == 0 && argv[i][7] == '/')
            c.path = argv[i] + 7;
        else if (strncmp(argv[i], "--operator-call=", 16) == 0 &&
                 strspn(argv[i] + 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                     strlen(argv[i] + 16) &&
                 strlen(argv[i] + 16) < 64)
            c.call = argv[i] + 16;
        else if (strcmp(argv[i], "--protobuf") == 0)
            c.protobuf = true;
        else if (strcmp(argv[i], "--cheap=0") == 0)
            c.cheap = false;
        else if (strcmp(argv[i], "--quick") == 0)
            c.quick = true;
        else if (strcmp(argv[i], "--memory") == 0)
            c.memory = true;
        else if (strcmp(argv[i], "--memory-only") == 0)
            c.memory = c.memory_only = true;
        else {
            fprintf(stderr,
                    "usage: %s [--agents=N] [--tasks=N] [--reads=N] "
                    "[--path=/state] [--operator-call=GET_STATE [--protobuf]] "
                    "[--cheap=0] [--memory] [--memory-only] "
                    "[--quick]\n",
                    argv[0]);
            return 2;
        }
    }
    if (c.quick) {
        c.agents = 50;
        c.tasks = 500;
        c.reads = 3;
    }
    if (c.agents < 1 || c.tasks < 0 || c.reads < 1)
        return 2;

    base = event_base_new();
    struct master_flags flags;
    master_flags_init(&flags);
    char *fargv[] = {"offerd", "--ip=127.0.0.1", "--port=0", "--hostname=bench",
                     "--logging_level=ERROR", "--allocation_interval=50ms",
                     /* The fake agents do not answer pings: none, so that
                        none is removed while the bench runs. */
                     "--agent_ping_timeout=3600secs", NULL};
    char *env[] = {NULL};
    char err[512];
    if (master_flags_parse(&flags, 7, fargv, env, err, sizeof(err)) !=
        FLAGS_OK) {
        fprintf(stderr, "flags: %s\n", err);
        return 1;
    }
    log_set_level(flags.log_level);
    char store[64];
    snprintf(store, sizeof(store), "state-bench-%d", (int)getpid());
    struct master_options o = {
        .registry_backend = &registry_mem_backend,
        .registry_where = store,
    };
    M = master_new_with(base, &flags, &o, err, sizeof(err));
    if (M == NULL) {
        fprintf(stderr, "master: %s\n", err);
        return 1;
    }
    port = master_port(M);

    int64_t t0 = clock_monotonic_ns();
    struct http_fake **agents, *fw;
    json_t *out = json_object();
    fill(&c, &agents, &fw, out);
    json_object_set_new(out, "agents", json_integer(c.agents));
    json_object_set_new(out, "tasks", json_integer(c.tasks));
    double fill_s = (double)(clock_monotonic_ns() - t0) / 1e9;
    json_object_set_new(out, "fill_s", json_real(fill_s));
    if (c.memory_only) {
        /* The heap left as it is: heaptrack reports what is live now as
         * leaks. */
        char *text = json_dumps(out, JSON_INDENT(2));
        printf("%s\n", text);
        fflush(stdout);
        _exit(0);
    }
    /* A mark for whoever profiles the reads alone (perf record -p once
     * this line appears). */
    fprintf(stderr, "filled in %.1f s; reading %s\n", fill_s,
            c.call != NULL ? c.call : c.path);
    fflush(stderr);
    measure(&c, out);
    char *text = json_dumps(out, JSON_INDENT(2));
    printf("%s\n", text);
    free(text);
    json_decref(out);

    master_free(M);
    for (int i = 0; i < c.agents; i++)
        http_fake_free(agents[i]);
    free(agents);
    http_fake_free(fw);
    master_flags_fini(&flags);
    event_base_free(base);
    registry_mem_drop(store);
    return 0;
}
