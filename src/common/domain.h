/*
 * Fault domains (Mesos's DomainInfo): the --domain flag of the master and
 * the agent, and the region that decides whether an agent is remote.
 */
#ifndef OFFERD_COMMON_DOMAIN_H
#define OFFERD_COMMON_DOMAIN_H

#include <stddef.h>

#include "mesos/v1/mesos.pb-c.h"

/* Largest --domain file read, in bytes. */
#define DOMAIN_MAX_FILE (64 * 1024)

/* Parse a --domain value as Mesos does: the JSON of a mesos.v1.DomainInfo
 * ({"fault_domain": {"region": {"name": "eu"}, "zone": {"name": "a"}}}),
 * or the path of a file holding it ("file://" prefix allowed). The region
 * and zone names must not be empty. Returns a new message (the caller's,
 * released with jpb_free), or NULL with a one-line reason in err. */
Mesos__V1__DomainInfo *domain_load(const char *spec, char *err, size_t errlen);

/* The region name of d, or NULL when d is NULL or has no fault domain
 * (borrowed from d). */
const char *domain_region(const Mesos__V1__DomainInfo *d);

/* The zone name of d, or NULL as domain_region. */
const char *domain_zone(const Mesos__V1__DomainInfo *d);

#endif
