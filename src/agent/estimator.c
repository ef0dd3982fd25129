/*
 * Resource estimator arithmetic (see estimator.h).
 */
#include "agent/estimator.h"

#include "common/resources_pb.h"

#include <math.h>
#include <stdio.h>

double agent_est_ewma(double prev, double sample, double alpha)
{
    if (!(sample < prev))
        return sample;
    return prev + alpha * (sample - prev);
}

/* allocated * (1 - margin) - used, in milli-units, floored to step. */
static int64_t slack_of(int64_t allocated, double used_units, double margin,
                        int64_t step)
{
    double v = (double)allocated * (1.0 - margin) - used_units * RES_SCALE;
    if (!(v > 0)) /* also NaN */
        return 0;
    if (v > (double)INT64_MAX / 2)
        v = (double)INT64_MAX / 2;
    /* To the nearest milli-unit first (the resources' precision), so that
     * 2000 * 0.9 computed as 1799.9999... stays 1800. */
    int64_t m = llround(v);
    return m - m % step;
}

void agent_est_slack(const struct agent_est_task *v, size_t n, double margin,
                     int64_t *cpus, int64_t *mem)
{
    int64_t cpus_alloc = 0, mem_alloc = 0;
    double cpus_used = 0, mem_used = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].cpus > 0) {
            cpus_alloc += v[i].cpus;
            cpus_used += v[i].cpus_used > 0 ? v[i].cpus_used : 0;
        }
        if (v[i].mem > 0) {
            mem_alloc += v[i].mem;
            mem_used += v[i].mem_used > 0 ? v[i].mem_used : 0;
        }
    }
    *cpus = slack_of(cpus_alloc, cpus_used, margin, AGENT_EST_CPUS_STEP);
    *mem = slack_of(mem_alloc, mem_used, margin, AGENT_EST_MEM_STEP);
}

void agent_est_list(int64_t cpus, int64_t mem, res_list *out)
{
    struct resource r;
    if (cpus > 0) {
        res_init_scalar(&r, "cpus", cpus);
        r.revocable = true;
        res_list_add(out, &r);
        res_clear(&r);
    }
    if (mem > 0) {
        res_init_scalar(&r, "mem", mem);
        r.revocable = true;
        res_list_add(out, &r);
        res_clear(&r);
    }
}

int agent_est_parse_fixed(const char *text, res_list *out, char *err,
                          size_t errlen)
{
    res_list l = RES_LIST_INIT;
    if (res_list_parse(text, NULL, &l, err, errlen) != 0)
        return -1;
    for (uint32_t i = 0; i < l.n; i++) {
        if (!res_is_unreserved(&l.v[i])) {
            snprintf(err, errlen,
                     "%s is reserved to role '%s': revocable resources cannot "
                     "be reserved",
                     l.v[i].name, res_reservation_role(&l.v[i]));
            res_list_clear(&l);
            return -1;
        }
        if (l.v[i].disk != NULL) {
            snprintf(err, errlen,
                     "%s has disk information: revocable resources cannot "
                     "have any",
                     l.v[i].name);
            res_list_clear(&l);
            return -1;
        }
    }
    for (uint32_t i = 0; i < l.n; i++) {
        struct resource r;
        res_copy(&r, &l.v[i]);
        r.revocable = true;
        res_list_add(out, &r);
        res_clear(&r);
    }
    res_list_clear(&l);
    return 0;
}
