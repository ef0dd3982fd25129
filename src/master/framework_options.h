/*
 * A framework's per-role allocator options, from what it sends: its
 * FrameworkInfo's offer_filters (min_allocatable_resources, Mesos 1.10) and
 * a SUBSCRIBE's or UPDATE_FRAMEWORK's offer_constraints (Mesos 1.11), and
 * the check of its suppressed_roles. frameworks.c validates with these
 * before the registry write and applies after it.
 */
#ifndef OFFERD_MASTER_FRAMEWORK_OPTIONS_H
#define OFFERD_MASTER_FRAMEWORK_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "allocator/alloc.h"
#include "master/master_types.h"

/* The options in the allocator's terms. Strings are borrowed from the
 * messages they were built from, which must outlive this; the arrays are
 * owned (master_fw_options_free). */
struct fw_options {
    struct alloc_role_options *v;
    uint32_t n;
    void **owned; /* arrays to free */
    uint32_t nowned, capowned;
};

/*
 * Build the options of a framework with roles (n) from fi->offer_filters
 * and oc (NULL: no constraints). When a map repeats a key (protobuf input
 * may), the last entry wins. Returns 0, or -1 with a one-line reason naming
 * the field (*out then holds nothing). The allocator checks the rest
 * (alloc_role_options_check: regexes, predicates, names).
 */
int master_fw_options_build(const Mesos__V1__FrameworkInfo *fi,
                            const Mesos__V1__Scheduler__OfferConstraints *oc,
                            const char *const *roles, uint32_t nroles,
                            struct fw_options *out, char *err, size_t errlen);
void master_fw_options_free(struct fw_options *o);

/* Every suppressed role must be one of roles: 0, or -1 with the reason
 * (Mesos: "Suppressed roles {...} are not contained in the set of
 * roles"). */
int master_suppressed_roles_check(char *const *suppressed, size_t n,
                                  const char *const *roles, uint32_t nroles,
                                  char *err, size_t errlen);

#endif
