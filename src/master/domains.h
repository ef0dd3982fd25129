/*
 * Fault domains in the master: the rules an agent's domain must follow to
 * register (Mesos's, docs/fault-domains.md) and the domain's place in the
 * read endpoints. The master's own domain is m->domain (--domain, loaded by
 * master_new); the allocator holds its region.
 */
#ifndef OFFERD_MASTER_DOMAINS_H
#define OFFERD_MASTER_DOMAINS_H

#include <jansson.h>
#include <stddef.h>

#include "mesos/v1/mesos.pb-c.h"

struct master;
struct master_flags;
struct http_request;

/* Check the domain flags of mf at start: --require_agent_domain needs
 * --domain (without a domain of its own the master would refuse every
 * agent: those without a domain for the flag, those with one because it
 * cannot tell whether they are remote). Returns 0, or -1 with a one-line
 * reason in err. */
int master_domain_flags_check(const struct master_flags *mf, char *err,
                              size_t errlen);

/* Check the domain of a subscribing agent (ai, decoded from req), in
 * Mesos's order: a fault domain needs non-empty region and zone names
 * (400); a master without a domain refuses an agent with one, as it could
 * not tell whether the agent is remote (403); with --require_agent_domain
 * an agent without a domain is refused (403). The 403s are refusals Mesos
 * answers by ignoring the agent, not by shutting it down: the agent
 * retries, and registers once it is restarted with a domain. Returns 0, or
 * -1 after replying; changes nothing either way. */
int master_agent_domain_check(const struct master *m, struct http_request *req,
                              const Mesos__V1__AgentInfo *ai);

/* Set "domain" on the JSON object o to d in Mesos's JSON form; nothing
 * when d is NULL (Mesos leaves the field out). */
void master_domain_json(json_t *o, const Mesos__V1__DomainInfo *d);

#endif
