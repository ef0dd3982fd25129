/*
 * Fitting a task's resources into an offer; see fit.h.
 */
#include "sched/fit.h"

#include "common/mem.h"

#include <stdlib.h>
#include <string.h>

/* May e supply w in this pass (0: reserved to role, 1: unreserved)? */
static bool usable(const struct resource *e, const struct resource *w,
                   const char *role, int pass)
{
    if (strcmp(e->name, w->name) != 0 || e->type != w->type)
        return false;
    if (e->revocable || e->shared || e->disk != NULL)
        return false;
    if (pass == 0)
        return res_is_reserved(e, NULL) && role != NULL &&
               strcmp(role, "*") != 0 && res_is_allocatable_to(e, role);
    return res_is_unreserved(e);
}

static bool set_contains(const struct resource *e, const struct resource *w)
{
    for (uint32_t i = 0; i < w->nitems; i++) {
        bool found = false;
        for (uint32_t j = 0; j < e->nitems && !found; j++)
            found = strcmp(e->items[j], w->items[i]) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool value_inside(const struct resource *e, const struct resource *w)
{
    switch (w->type) {
    case RES_SCALAR:
        return e->scalar > 0;
    case RES_RANGES:
        return res_ranges_contains(e->ranges, e->nranges, w->ranges,
                                   w->nranges);
    case RES_SET:
        return set_contains(e, w);
    }
    return false;
}

/* *r = e with the value of w (or scalar amount). */
static void copy_with_value(struct resource *r, const struct resource *e,
                            const struct resource *w, int64_t amount)
{
    res_copy(r, e);
    switch (w->type) {
    case RES_SCALAR:
        r->scalar = amount;
        break;
    case RES_RANGES:
        free(r->ranges);
        r->ranges = xmemdup(w->ranges, w->nranges * sizeof(*w->ranges));
        r->nranges = w->nranges;
        break;
    case RES_SET:
        for (uint32_t i = 0; i < r->nitems; i++)
            free(r->items[i]);
        free(r->items);
        r->items = xcalloc(w->nitems, sizeof(*r->items));
        for (uint32_t i = 0; i < w->nitems; i++)
            r->items[i] = xstrdup(w->items[i]);
        r->nitems = w->nitems;
        break;
    }
}

/* Take one wanted resource out of *avail into *got; false if impossible. */
static bool take_one(res_list *avail, const struct resource *w,
                     const char *role, res_list *got)
{
    int64_t need = w->type == RES_SCALAR ? w->scalar : 1;
    for (int pass = 0; pass < 2 && need > 0; pass++) {
        uint32_t j = 0;
        while (need > 0 && j < avail->n) {
            const struct resource *e = &avail->v[j];
            if (!usable(e, w, role, pass) || !value_inside(e, w)) {
                j++;
                continue;
            }
            struct resource r;
            int64_t amount = 0;
            if (w->type == RES_SCALAR)
                amount = e->scalar < need ? e->scalar : need;
            copy_with_value(&r, e, w, amount);
            res_list_add(got, &r);
            /* Subtracting may remove entry j: look at j again. */
            res_list_sub(avail, &r);
            res_clear(&r);
            need = w->type == RES_SCALAR ? need - amount : 0;
        }
    }
    return need == 0;
}

int sched_fit_take(res_list *avail, const res_list *want, const char *role,
                   res_list *taken)
{
    res_list work = RES_LIST_INIT, got = RES_LIST_INIT;
    res_list_copy(&work, avail);
    for (uint32_t i = 0; i < want->n; i++) {
        if (res_is_empty(&want->v[i]))
            continue;
        if (!take_one(&work, &want->v[i], role, &got)) {
            res_list_clear(&work);
            res_list_clear(&got);
            return -1;
        }
    }
    res_list_clear(avail);
    *avail = work;
    res_list_add_all(taken, &got);
    res_list_clear(&got);
    return 0;
}
