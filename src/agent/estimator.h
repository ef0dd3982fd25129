/*
 * The arithmetic of the agent's resource estimators (--resource_estimator,
 * docs/agent.md "Oversubscription"): what the agent reports to the master
 * as revocable (oversubscribed) resources. Pure code: values in, values
 * out; oversub.h does the sampling, the timer and the sending.
 *
 * - fixed: the resources of --oversubscribed_resources, every one of them
 *   made revocable (agent_est_parse_fixed).
 * - usage: the cpus and mem that the agent's regular (non-revocable) tasks
 *   hold but do not use (agent_est_slack), from smoothed usage samples
 *   (agent_est_ewma).
 *
 * Usage estimate, per resource r in {cpus, mem}:
 *
 *   allocated = sum over live tasks of their non-revocable r
 *   used      = sum over live tasks holding non-revocable r of their
 *               smoothed use of r (all of it, revocable part included: the
 *               estimate errs on the safe side)
 *   estimate  = allocated * (1 - margin) - used, at least 0, rounded down
 *               to 0.01 cpus / 1 MB
 *
 * Tasks that hold only revocable r do not count: their use runs on the
 * estimate itself, and counting it would shrink the estimate under them.
 * Smoothing (per task, per resource): a task's running value starts at its
 * first sample; a sample above the running value replaces it at once (a
 * task that needs more gets it back at the next estimate); a sample below
 * it moves it by AGENT_EST_ALPHA of the difference (an exponentially
 * weighted moving average). Which tasks are measured, and when the
 * estimate is reported, is oversub.h's business.
 */
#ifndef OFFERD_AGENT_ESTIMATOR_H
#define OFFERD_AGENT_ESTIMATOR_H

#include "common/resources.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Weight of a new sample below the running value (0 < alpha <= 1): with
 * the default 15 s interval, a drop in use is half reflected after one
 * interval and 90% after four. */
#define AGENT_EST_ALPHA 0.5

/* Rounding steps of the usage estimate, in milli-units. */
#define AGENT_EST_CPUS_STEP 10   /* 0.01 cpus */
#define AGENT_EST_MEM_STEP  1000 /* 1 MB */

/* One live task as the usage estimate sees it. */
struct agent_est_task {
    int64_t cpus;     /* non-revocable cpus it holds, milli-units */
    int64_t mem;      /* non-revocable mem it holds, milli-MB */
    double cpus_used; /* its smoothed use: cores */
    double mem_used;  /* its smoothed use: MB */
};

/* The running value after sample: sample when it is not below prev, else
 * prev + alpha * (sample - prev). */
double agent_est_ewma(double prev, double sample, double alpha);

/* The usage estimate of n tasks with the given margin (0 <= margin < 1),
 * as described above: *cpus and *mem (OUT, milli-units, >= 0, multiples of
 * the rounding steps). */
void agent_est_slack(const struct agent_est_task *v, size_t n, double margin,
                     int64_t *cpus, int64_t *mem);

/* A list of revocable, unreserved scalars cpus and mem (milli-units; a 0
 * is left out) appended to *out. */
void agent_est_list(int64_t cpus, int64_t mem, res_list *out);

/* Parse --oversubscribed_resources (Mesos text or a JSON array, as
 * --resources) into *out, every resource made revocable. Reserved
 * resources are refused (revocable resources cannot be reserved), as are
 * the ones res_list_parse refuses. Returns 0 (out appended to), or -1 with
 * a one-line reason in err and *out unchanged. */
int agent_est_parse_fixed(const char *text, res_list *out, char *err,
                          size_t errlen);

#endif
