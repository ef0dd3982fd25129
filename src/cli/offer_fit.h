/*
 * FIXME: this header only remains because tests/e2e (e2e_cluster.c,
 * e2e_maintenance.c, harness_fw.c, harness_wl.c), which another branch
 * owns, still call cli_offer_fit. Switch them to sched_fit_take
 * (sched/fit.h), same arguments, then delete this file.
 */
#ifndef OFFERD_CLI_OFFER_FIT_H
#define OFFERD_CLI_OFFER_FIT_H

#include "sched/fit.h"

static inline int cli_offer_fit(res_list *avail, const res_list *want,
                                const char *role, res_list *taken)
{
    return sched_fit_take(avail, want, role, taken);
}

#endif
