/*
 * Fault domains in the master: admission of agents by their domain, and
 * the domain in /state. Which agents are remote is the allocator's
 * business (alloc_options.region, alloc_agent_set_info).
 */
#include "master/domains.h"

#include <stdio.h>

#include "common/domain.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "master/flags_master.h"
#include "master/master_types.h"

int master_domain_flags_check(const struct master_flags *mf, char *err,
                              size_t errlen)
{
    if (mf->require_agent_domain &&
        (mf->domain == NULL || mf->domain[0] == '\0')) {
        snprintf(err, errlen,
                 "--require_agent_domain needs --domain: a master without a "
                 "domain would refuse every agent");
        return -1;
    }
    return 0;
}

int master_agent_domain_check(const struct master *m, struct http_request *req,
                              const Mesos__V1__AgentInfo *ai)
{
    if (ai->domain == NULL) {
        if (!m->flags->require_agent_domain)
            return 0; /* local, whatever the master's domain */
        /* Mesos's words (Master::registerSlave): it ignores the agent
         * rather than shut it down, so that it can be restarted with a
         * domain without losing its tasks. */
        log_warn("agent %s at %s has no domain, but this master is "
                 "configured to require agent domains: refused",
                 ai->hostname, http_request_peer(req));
        http_reply_error(req, 403,
                         "agent %s attempted to register without a domain, "
                         "but this master is configured to require agent "
                         "domains (--require_agent_domain)",
                         ai->hostname);
        return -1;
    }
    const Mesos__V1__DomainInfo__FaultDomain *fd = ai->domain->fault_domain;
    if (fd != NULL && (fd->region == NULL || fd->region->name == NULL ||
                       fd->region->name[0] == '\0' || fd->zone == NULL ||
                       fd->zone->name == NULL || fd->zone->name[0] == '\0')) {
        http_reply_error(
            req, 400,
            "subscribe.agent_info.domain.fault_domain: region.name "
            "and zone.name must be non-empty");
        return -1;
    }
    if (m->domain == NULL) {
        const char *region = domain_region(ai->domain);
        http_reply_error(req, 403,
                         "agent %s has a domain (region '%s') but this master "
                         "has none (--domain): it cannot tell whether the "
                         "agent is remote",
                         ai->hostname, region != NULL ? region : "");
        return -1;
    }
    return 0;
}

void master_domain_json(json_t *o, const Mesos__V1__DomainInfo *d)
{
    if (d != NULL)
        json_object_set_new(o, "domain", jpb_to_json(&d->base));
}
