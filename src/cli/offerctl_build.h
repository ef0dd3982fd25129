/*
 * offerctl_build: the pieces of mesos.v1.master.Call that offerctl builds
 * from its command line, as JSON (jansson) in Mesos's protobuf-JSON
 * mapping. Pure: no I/O. Every function that can fail returns NULL (or
 * -1) with a one-line reason in err, which offerctl reports as a usage
 * error.
 */
#ifndef OFFERD_CLI_OFFERCTL_BUILD_H
#define OFFERD_CLI_OFFERCTL_BUILD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* {"type": type} plus, when payload is non-NULL, {field: payload}; payload
 * is stolen. New reference. */
json_t *octl_call_new(const char *type, const char *field, json_t *payload);

/* {"value": id}, the JSON of an AgentID or FrameworkID. */
json_t *octl_id_json(const char *id);

/*
 * Resources to reserve, unreserve or create volumes on, as a JSON array of
 * mesos.v1.Resource with DYNAMIC reservations (post-refinement format).
 *  - text such as "cpus:2;mem:512" (Mesos's text form): each entry is
 *    reserved dynamically to the role it names ("cpus(db):2"), else to
 *    role; neither is an error. principal (may be NULL) goes on each
 *    reservation.
 *  - a JSON array (text starting with '['): checked as /reserve checks it,
 *    and sent as given; role and principal must then be NULL.
 */
json_t *octl_reserved_resources(const char *text, const char *role,
                                const char *principal, char *err,
                                size_t errlen);

/*
 * A persistent volume: the reserved disk of text ("disk:1024", one disk
 * resource, reserved as octl_reserved_resources does) with
 * disk.persistence {id, principal} and disk.volume {container_path, mode}
 * (mode "RW" or "RO"; NULL: "RW"). A JSON array is sent as given (id,
 * container_path, mode, role and principal must then be NULL).
 */
json_t *octl_volume_resources(const char *text, const char *role,
                              const char *principal, const char *id,
                              const char *container_path, const char *mode,
                              char *err, size_t errlen);

/* Quantities for a QuotaConfig's guarantees or limits: text or a JSON array
 * of resources, scalars only, summed per name (reservations ignored), as a
 * map {"cpus": {"value": 2.0}, ...}. */
json_t *octl_quantities(const char *text, char *err, size_t errlen);

/* A WeightInfo from "ROLE=WEIGHT" (weight a positive finite number). */
json_t *octl_weight_info(const char *text, char *err, size_t errlen);

/* A MachineID from "HOST/IP", "HOST" or an IPv4 address "IP". */
json_t *octl_machine_id(const char *text, char *err, size_t errlen);

/* A duration in Mesos's flag syntax ("10secs", "2hrs") in nanoseconds.
 * Returns 0 with *ns (OUT), or -1. */
int octl_duration(const char *text, int64_t *ns, char *err, size_t errlen);

/* The resources of a JSON Resource array in the text form, for people:
 * "cpus:2;mem:512". Returns a malloc'd string (caller frees); "" when
 * empty or not an array. */
char *octl_resources_text(const json_t *arr);

/* The map of a QuotaConfig's guarantees or limits as "cpus:2;mem:512",
 * malloc'd; "" when empty. */
char *octl_quantities_text(const json_t *map);

#endif
