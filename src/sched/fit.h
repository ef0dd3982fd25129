/*
 * fit: which resources of an offer a task takes. The offer pool's placement
 * (offerd_pool_find, offerd_fit_take, which offerd-execute uses) is built on
 * it.
 *
 * A task asks for plain quantities ("cpus:0.1;mem:32;ports:[31000-31000]");
 * an offer holds resources that may be reserved to the framework's role (or
 * an ancestor of it), or unreserved. As Mesos's mesos-execute does
 * (Resources::find), a task takes from the role's reservations first, then
 * from unreserved resources, and the resources it takes are copies of the
 * offer's (same reservation and allocation role, which the master checks
 * against the offer), each with the amount taken. Revocable, shared and
 * disk-info resources (volumes, mounts) are never taken.
 *
 * Pure code over common/resources.h: no I/O, no state.
 */
#ifndef OFFERD_SCHED_FIT_H
#define OFFERD_SCHED_FIT_H

#include "common/resources.h"

/*
 * Take want out of *avail for a framework of role (NULL or "*": unreserved
 * only). Scalars may be gathered from several entries (reserved ones
 * first); a ranges or set resource must lie inside one entry. The
 * reservations of want are ignored: only names, types and values count.
 * On success returns 0, appends what was taken to *taken and subtracts it
 * from *avail. When want does not fit returns -1 with both lists
 * unchanged.
 */
int sched_fit_take(res_list *avail, const res_list *want, const char *role,
                   res_list *taken);

#endif
