/*
 * Fitting a task's resources into an offer; see offer_fit.h. The work is
 * done by the scheduler library's sched/fit.c, which the offer pool's
 * placement shares.
 */
#include "cli/offer_fit.h"

#include "sched/fit.h"

int cli_offer_fit(res_list *avail, const res_list *want, const char *role,
                  res_list *taken)
{
    return sched_fit_take(avail, want, role, taken);
}
