/*
 * Fault domains in the master: the rules an agent's domain must follow to
 * register (Mesos's, docs/fault-domains.md) and the domain's place in the
 * read endpoints. The master's own domain is m->domain (--domain, loaded by
 * master_new); the allocator holds its region.
 */
#ifndef OFFERD_MASTER_DOMAINS_H
#define OFFERD_MASTER_DOMAINS_H

#include <jansson.h>

#include "mesos/v1/mesos.pb-c.h"

struct master;
struct http_request;

/* Check the domain of a subscribing agent (ai, decoded from req): a
 * fault domain needs non-empty region and zone names (400), and a master
 * without a domain refuses an agent with one, as Mesos does: it could not
 * tell whether the agent is remote (403). Returns 0, or -1 after replying;
 * changes nothing either way. */
int master_agent_domain_check(const struct master *m, struct http_request *req,
                              const Mesos__V1__AgentInfo *ai);

/* Set "domain" on the JSON object o to d in Mesos's JSON form; nothing
 * when d is NULL (Mesos leaves the field out). */
void master_domain_json(json_t *o, const Mesos__V1__DomainInfo *d);

#endif
