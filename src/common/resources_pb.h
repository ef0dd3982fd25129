/*
 * resources_pb: conversion between offerd's native resources
 * (common/resources.h) and the generated protobuf-c type mesos.v1.Resource,
 * plus the JSON resource arrays that --resources and the /reserve endpoint
 * take. The allocator never sees this header; the master and agent use it at
 * their edges, so nothing past the decoder handles protobuf resources.
 *
 * Reservation formats (the "Resource Format" comment in mesos.proto):
 *  - post-refinement: the `reservations` stack alone;
 *  - pre-refinement (legacy): `role` ("*" or unset: unreserved; R: STATIC R)
 *    plus, for a DYNAMIC reservation, `reservation` carrying only principal
 *    and labels;
 *  - both at once (Mesos's "endpoint" format, which /state shows) is accepted
 *    only as Mesos accepts it: a single reservation whose role, principal and
 *    labels the legacy fields repeat exactly. Anything else that sets both is
 *    an error.
 *
 * Not carried over (offerd's native model has no room for them, and they
 * are dropped on input): DiskInfo.Source vendor and metadata, Volume image
 * and source. A shared resource becomes one message whatever its
 * shared_count, as Mesos's Resources -> RepeatedPtrField does.
 */
#ifndef OFFERD_COMMON_RESOURCES_PB_H
#define OFFERD_COMMON_RESOURCES_PB_H

#include "common/resources.h"
#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Most resources accepted in one list (list arithmetic is linear per
 * resource, so a list's cost grows with the square of its length). */
#define RES_PB_MAX_RESOURCES 4096
/* Most entries in one reservation stack, and labels on one reservation. */
#define RES_PB_MAX_RESERVATIONS 64
#define RES_PB_MAX_LABELS       1024

/*
 * Convert one mesos.v1.Resource into *out, in either reservation format (see
 * above). The value field must match `type` (exactly one of scalar, ranges,
 * set; TEXT is refused); scalars are rounded to milli-units, and NaN,
 * infinite, negative, too large or non-zero values that round to zero are
 * refused; ranges must not overlap (touching ranges are coalesced), set items
 * must be unique. The result must pass res_validate. A shared resource gets
 * shared_count 1.
 * Returns 0 with *out filled (overwritten, not freed; release with
 * res_clear), or -1 with a one-line reason in err and *out untouched.
 */
int res_from_pb(const Mesos__V1__Resource *pb, struct resource *out, char *err,
                size_t errlen);

/* Convert n messages and add them to *out (merging as res_list_add does;
 * empty resources are dropped). All or nothing: on failure returns -1, *out
 * is unchanged and the reason names the index ("resource 3: ..."). At most
 * RES_PB_MAX_RESOURCES messages. */
int res_list_from_pb(Mesos__V1__Resource *const *v, size_t n, res_list *out,
                     char *err, size_t errlen);

/*
 * Build a new mesos.v1.Resource for r. With `refinement` the reservation
 * goes into `reservations` (post-refinement format); without it into `role`
 * and `reservation` (pre-refinement format, what Mesos sends frameworks
 * lacking RESERVATION_REFINEMENT; unreserved gets role "*"). A resource with
 * refined reservations cannot be expressed in the legacy format and is
 * written in the post-refinement format either way.
 * Every sub-message, string and array is malloc'd separately: release with
 * protobuf_c_message_free_unpacked(&msg->base, NULL).
 */
Mesos__V1__Resource *res_to_pb(const struct resource *r, bool refinement);

/* Build one message per entry of l as res_to_pb does. Returns a malloc'd
 * array (never NULL, even for an empty list) with its length in *n (OUT);
 * release with res_pb_array_free. */
Mesos__V1__Resource **res_list_to_pb(const res_list *l, bool refinement,
                                     size_t *n);

/* Free an array from res_list_to_pb and every message in it; NULL is
 * ignored. */
void res_pb_array_free(Mesos__V1__Resource **v, size_t n);

/* l as a JSON array of mesos.v1.Resource (post-refinement format, as
 * res_list_to_pb(l, true) writes them), in the protobuf-JSON mapping.
 * Returns a new reference (an empty array for an empty list). */
json_t *res_list_to_json(const res_list *l);

/*
 * Parse text, a JSON array of Resource objects (field names as in
 * mesos.proto, either reservation format), as /reserve, /unreserve and
 * --resources take it, and add the resources to *out. All or nothing: on
 * failure returns -1, *out is unchanged and err holds a one-line reason
 * naming the array index and, for a decoding error, the field path.
 */
int res_list_from_json(const char *text, res_list *out, char *err,
                       size_t errlen);

/*
 * Parse a --resources value as Mesos's Resources::parse does: a JSON array
 * when the first non-space character is '[' (resources with neither role nor
 * reservations get default_role, as Mesos's fromJSON does), else the text
 * form (res_parse_text). As in Mesos, resources given this way may not be
 * persistent volumes, revocable or dynamically reserved, and resources of one
 * name must have one type. default_role NULL means "*".
 * Returns 0 and adds to *out, or -1 with *out unchanged and a reason in err.
 */
int res_list_parse(const char *text, const char *default_role, res_list *out,
                   char *err, size_t errlen);

#endif
