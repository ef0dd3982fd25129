/*
 * QoS eviction decision (see qos.h).
 */
#include "agent/qos.h"

#include "common/fs.h"
#include "common/mem.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cand {
    size_t index;
    int64_t start_ns;
    uint64_t seq;
};

/* Newest first. */
static int by_newest(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    if (a->start_ns != b->start_ns)
        return a->start_ns > b->start_ns ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq > b->seq ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

size_t agent_qos_decide(const struct agent_qos_input *in, size_t *out,
                        bool *by_load)
{
    *by_load = false;
    size_t nc = 0, nout = 0;
    bool revocable_dying = false;
    struct cand *c = xcalloc(in->ntasks ? in->ntasks : 1, sizeof(*c));
    for (size_t i = 0; i < in->ntasks; i++) {
        const struct agent_qos_task *t = &in->tasks[i];
        if (t->revocable == NULL || res_list_is_empty(t->revocable))
            continue;
        if (t->dying) {
            revocable_dying = true;
            continue;
        }
        c[nc].index = i;
        c[nc].start_ns = t->start_ns;
        c[nc].seq = t->seq;
        nc++;
    }
    qsort(c, nc, sizeof(*c), by_newest);

    if (in->estimate != NULL && nc > 0) {
        res_list est = RES_LIST_INIT, held = RES_LIST_INIT;
        res_list_flatten(in->estimate, NULL, &est);
        for (size_t k = 0; k < nc; k++)
            res_list_flatten(in->tasks[c[k].index].revocable, NULL, &held);
        /* Newest first until the rest fits. */
        size_t k = 0;
        while (k < nc && !res_list_contains(&est, &held)) {
            const struct agent_qos_task *t = &in->tasks[c[k].index];
            res_list flat = RES_LIST_INIT;
            res_list_flatten(t->revocable, NULL, &flat);
            res_list_sub_all(&held, &flat);
            res_list_clear(&flat);
            out[nout++] = c[k].index;
            k++;
        }
        res_list_clear(&est);
        res_list_clear(&held);
    }

    if (nout == 0 && in->load_rule && nc > 0 && !revocable_dying &&
        in->load > in->threshold) {
        out[nout++] = c[0].index;
        *by_load = true;
    }
    free(c);
    return nout;
}

int agent_qos_parse_loadavg(const char *text, size_t len, double *load1)
{
    char buf[64];
    size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    if (buf[0] < '0' || buf[0] > '9')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno != 0 || end == buf || *end != ' ' || !isfinite(v) || v < 0)
        return -1;
    *load1 = v;
    return 0;
}

int agent_qos_read_loadavg(const char *proc_root, double *load1)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/loadavg", proc_root);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -1;
    uint8_t *data = NULL;
    size_t len = 0;
    if (fs_read(path, 4096, &data, &len) != 1)
        return -1;
    int rc = agent_qos_parse_loadavg((const char *)data, len, load1);
    free(data);
    return rc;
}
