/*
 * Resources: offerd's native model of Mesos resources and their arithmetic.
 *
 * A `struct resource` is one Mesos `Resource` (name, type, value, reservation
 * stack, disk info, revocable, shared, allocation role, provider); a
 * `res_list` is a Mesos `Resources` collection. The arithmetic follows Mesos's
 * Resources class (src/common/resources.cpp in apache/mesos):
 *
 *  - Two resources are *addable* when everything but the value is the same
 *    (name, type, reservations, disk, revocable, shared, allocation role,
 *    provider) and they are not atomic. Atomic resources are never merged:
 *    persistent volumes, MOUNT and BLOCK disks, RAW disks with a source id,
 *    and shared resources (a shared resource is counted: adding an equal
 *    shared resource bumps shared_count).
 *    A res_list keeps addable resources merged, so each identity appears once.
 *  - Adding an empty resource (scalar 0, no ranges, no items) is a no-op.
 *  - Subtraction takes the value away from the one entry with the same
 *    identity; an entry that becomes empty, or would become negative, is
 *    removed (Mesos's saturating behaviour). A persistent volume or a MOUNT
 *    disk is only taken away whole.
 *  - contains(a, b): every resource of b is contained by an entry of a with
 *    the same identity (values: scalar <=, ranges subset, set subset; shared:
 *    count <=). equal(a, b) is contains both ways.
 *
 * This header includes no protobuf or libevent header, so the allocator can
 * use it; common/resources_pb.h converts to and from mesos.v1.Resource.
 *
 * Scalars are fixed-point: `int64_t` milli-units, so 0.1 + 0.2 - 0.2 == 0.1
 * exactly and repeated arithmetic never drifts. Mesos rounds doubles to three
 * decimals the same way (Value.Scalar's comment in mesos.proto).
 *
 * Ownership: a res_list owns its resources and every string inside them.
 * Functions that take `const` pointers copy what they keep. All allocation
 * goes through common/mem.h, so nothing here fails for lack of memory.
 */
#ifndef OFFERD_COMMON_RESOURCES_H
#define OFFERD_COMMON_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fixed-point scale: 1.0 of a scalar resource is RES_SCALE milli-units. */
#define RES_SCALE 1000

/* Largest scalar accepted, in whole units (fits int64 milli-units with room
 * for sums of many agents). Larger values are a validation error. */
#define RES_SCALAR_MAX_UNITS 1000000000000LL /* 1e12 */

/* Value type, numbered as mesos.v1.Value.Type. */
enum res_type {
    RES_SCALAR = 0,
    RES_RANGES = 1,
    RES_SET = 2,
};

/* Reservation type, numbered as Resource.ReservationInfo.Type. */
enum res_resv_type {
    RES_RESV_STATIC = 1,
    RES_RESV_DYNAMIC = 2,
};

/* Disk source type, numbered as Resource.DiskInfo.Source.Type
 * (0: no source given, which means the agent's default disk). */
enum res_disk_source {
    RES_DISK_SOURCE_NONE = 0,
    RES_DISK_SOURCE_PATH = 1,
    RES_DISK_SOURCE_MOUNT = 2,
    RES_DISK_SOURCE_BLOCK = 3,
    RES_DISK_SOURCE_RAW = 4,
};

/* Volume mode, numbered as mesos.v1.Volume.Mode. */
enum res_volume_mode {
    RES_VOLUME_RW = 1,
    RES_VOLUME_RO = 2,
};

/* An inclusive range [begin, end], begin <= end. */
struct res_range {
    uint64_t begin;
    uint64_t end;
};

/* One label; value is NULL when the label has no value. */
struct res_label {
    char *key;
    char *value;
};

/* One entry of a reservation stack. */
struct res_reservation {
    enum res_resv_type type;
    char *role;               /* never NULL, never "*" */
    char *principal;          /* NULL when unset */
    struct res_label *labels; /* nlabels entries, in the order given */
    uint32_t nlabels;
};

/* Resource.DiskInfo, flattened. Strings are NULL when unset. */
struct res_disk {
    char *persistence_id;        /* non-NULL: this is a persistent volume */
    char *persistence_principal; /* persistence.principal */
    bool has_volume;             /* the fields below describe a Volume */
    enum res_volume_mode volume_mode;
    char *container_path;        /* volume.container_path */
    char *host_path;             /* volume.host_path */
    enum res_disk_source source; /* NONE when DiskInfo.source is unset */
    char *source_root;           /* source.path.root or source.mount.root */
    char *source_id;             /* source.id */
    char *source_profile;        /* source.profile */
};

struct resource {
    char *name;               /* non-empty */
    enum res_type type;       /* selects which value field is meaningful */
    int64_t scalar;           /* RES_SCALAR: milli-units, >= 0 */
    struct res_range *ranges; /* RES_RANGES: sorted by begin, non-overlapping
                                 and non-adjacent (coalesced) */
    uint32_t nranges;
    char **items; /* RES_SET: sorted (strcmp), no duplicates */
    uint32_t nitems;
    struct res_reservation *resv; /* stack, bottom first; empty = unreserved */
    uint32_t nresv;
    struct res_disk *disk; /* NULL when the resource has no DiskInfo */
    bool revocable;
    bool shared;
    uint32_t shared_count; /* shared only: copies held, >= 1 */
    char *alloc_role;      /* allocation_info.role, NULL when unset */
    char *provider_id;     /* provider_id.value, NULL when unset */
};

/* A collection of resources (Mesos's `Resources`). Zero-initialised
 * (RES_LIST_INIT) is a valid empty list. */
typedef struct res_list {
    struct resource *v;
    uint32_t n;
    uint32_t cap;
} res_list;

#define RES_LIST_INIT                                                          \
    {                                                                          \
        NULL, 0, 0                                                             \
    }

/* ---- Lifetime ------------------------------------------------------- */

/* Make *l an empty list (no allocation). */
void res_list_init(res_list *l);
/*
 * Fill *dst (its old contents are not freed: pass an empty list) with a copy
 * of src as res_list_copy_allocated makes it, but with the entry array and
 * every string and array of every entry in one allocation (one allocation
 * per offer the master keeps, instead of one per string). Such a *packed*
 * list is read-only: read it, pass it as a const res_list *, copy from it,
 * and release it with res_list_free_packed only; never give it to
 * res_list_clear or to anything that changes a list.
 */
void res_list_copy_packed(res_list *dst, const res_list *src, const char *role);
/* Free a list made by res_list_copy_packed and leave it empty. */
void res_list_free_packed(res_list *l);
/* Free everything *l holds and leave it empty and reusable. */
void res_list_clear(res_list *l);
/* Replace *dst with a deep copy of *src (dst != src). */
void res_list_copy(res_list *dst, const res_list *src);
/* Replace *dst with a deep copy of *src whose every entry has allocation
 * role `role` (copied; NULL: none): res_list_copy then res_list_allocate,
 * in one pass when src's entries carry no allocation role (the allocator's
 * offers), as the master's offers are made. dst != src. */
void res_list_copy_allocated(res_list *dst, const res_list *src,
                             const char *role);
/* Free what *r owns (strings, arrays, disk) and zero it. */
void res_clear(struct resource *r);
/* Deep-copy *src into *dst; *dst is overwritten without being freed. */
void res_copy(struct resource *dst, const struct resource *src);

/* ---- Building ------------------------------------------------------- */

/* Fill *r (overwritten, not freed) with an unreserved scalar resource of
 * `milli` milli-units. */
void res_init_scalar(struct resource *r, const char *name, int64_t milli);
/* Fill *r with an unreserved ranges resource; the ranges are copied, sorted
 * and coalesced. */
void res_init_ranges(struct resource *r, const char *name,
                     const struct res_range *ranges, uint32_t n);
/* Fill *r with an unreserved set resource; items are copied, sorted and
 * deduplicated. */
void res_init_set(struct resource *r, const char *name,
                  const char *const *items, uint32_t n);
/* Push a reservation onto r's stack (copies role, principal and labels). */
void res_push_reservation(struct resource *r, enum res_resv_type type,
                          const char *role, const char *principal,
                          const struct res_label *labels, uint32_t nlabels);
/* Convert a double to milli-units, rounding to nearest as Mesos does.
 * Returns 0 and sets *out, or -1 when d is NaN, infinite, negative or above
 * RES_SCALAR_MAX_UNITS. */
int res_scalar_from_double(double d, int64_t *out);
/* Convert milli-units back to a double. */
double res_scalar_to_double(int64_t milli);

/* ---- Parsing and validation ------------------------------------------ */

/*
 * Parse Mesos's text form, as taken by --resources:
 *
 *     cpus:4;mem:1024;disk(role1):100;ports:[31000-32000,33000-33005];
 *     gpus:0;zones:{a,b}
 *
 * Entries are separated by ';' (empty entries ignored, whitespace around
 * tokens ignored); `name(role)` reserves statically to role ("*" means
 * unreserved); a value in [] is ranges, in {} a set, otherwise a scalar.
 * Resources with a zero value are dropped (as Mesos does for "gpus:0").
 * When default_role is non-NULL and not "*", entries without a role are
 * statically reserved to it. Text that starts with '[' is not handled here;
 * callers pass JSON arrays to res_list_from_json (resources_pb.h).
 *
 * On success returns 0 and appends to *out. On failure returns -1, leaves
 * *out unchanged and writes a one-line reason into err (errlen bytes).
 */
int res_parse_text(const char *text, const char *default_role, res_list *out,
                   char *err, size_t errlen);

/*
 * Check one resource against Mesos's rules: non-empty name; scalar finite,
 * non-negative and within RES_SCALAR_MAX_UNITS; ranges begin <= end and not
 * overlapping; set items unique; reservation roles valid role names, not "*",
 * first STATIC or DYNAMIC and the rest DYNAMIC, each refining (a strict
 * descendant of) the one below; revocable not reserved and without disk;
 * persistence only on reserved disk and with a volume; a volume needs a
 * container_path; shared only for persistent volumes.
 * Returns 0, or -1 with a one-line reason in err.
 */
int res_validate(const struct resource *r, char *err, size_t errlen);
/* res_validate on each entry; the reason names the entry's index. */
int res_list_validate(const res_list *l, char *err, size_t errlen);

/* Check a role name as Mesos's roles::validate does: non-empty; not ".",
 * ".."; no path component ".", ".." or "*"; no leading or trailing '/', no
 * "//"; no whitespace, control characters or backslash; no path component
 * starts with '-'.
 * "*" is valid here (callers decide where it is allowed). */
int res_role_validate(const char *role, char *err, size_t errlen);
/* True when `role` equals `ancestor` or lies under it ("a/b" under "a").
 * Everything is under "*" . */
bool res_role_is_subrole(const char *role, const char *ancestor);

/* ---- Arithmetic ------------------------------------------------------ */

/* l += r (r is copied). */
void res_list_add(res_list *l, const struct resource *r);
/* l += *r, taking over what r owns (merged into an addable entry, or
 * appended as it is: no copy); *r is left zeroed. */
void res_list_add_move(res_list *l, struct resource *r);
/* l += each resource of other. */
void res_list_add_all(res_list *l, const res_list *other);
/* l -= r, as described at the top of this file. */
void res_list_sub(res_list *l, const struct resource *r);
/* l -= each resource of other. */
void res_list_sub_all(res_list *l, const res_list *other);
/* True when l contains r. */
bool res_list_contains_one(const res_list *l, const struct resource *r);
/* True when a contains every resource of b. */
bool res_list_contains(const res_list *a, const res_list *b);
/* True when a and b contain each other. */
bool res_list_equal(const res_list *a, const res_list *b);
/* True when l holds no resources. */
bool res_list_is_empty(const res_list *l);
/* True when the two resources differ only in value (and shared_count). As in
 * Mesos, a disk's volume and persistence principal are not part of its
 * identity (they say how the disk is used, not what it is). */
bool res_same_identity(const struct resource *a, const struct resource *b);
/* True when r's value is empty (scalar 0, no ranges, no items). */
bool res_is_empty(const struct resource *r);

/* Sum of the scalar resources named `name` (any reservation), milli-units;
 * saturates at INT64_MAX. */
int64_t res_list_scalar(const res_list *l, const char *name);

/* ---- Predicates and filters ----------------------------------------- */

/* The role r is reserved to (top of its stack), or "*" when unreserved. */
const char *res_reservation_role(const struct resource *r);
bool res_is_unreserved(const struct resource *r);
/* Reserved to exactly `role`, or to any role when role is NULL. */
bool res_is_reserved(const struct resource *r, const char *role);
/* Reserved to `role` or one of its ancestors: usable by a framework of
 * `role` ("a" reservations are usable by "a/b"). Unreserved counts too. */
bool res_is_allocatable_to(const struct resource *r, const char *role);
bool res_is_dynamically_reserved(const struct resource *r);
bool res_is_revocable(const struct resource *r);
bool res_is_persistent_volume(const struct resource *r);
bool res_is_shared(const struct resource *r);

/* A predicate for res_list_filter; arg is passed through. */
typedef bool (*res_pred_fn)(const struct resource *r, const void *arg);
/* Append to *out a copy of each resource of in that satisfies pred. */
void res_list_filter(const res_list *in, res_pred_fn pred, const void *arg,
                     res_list *out);

/* Append to *out the resources of in with reservations, disk info and
 * allocation role removed (shared and revocable kept), merged: the
 * "quantities" Mesos compares (Resources::flatten). When role is non-NULL and
 * not "*", each is instead statically reserved to role. */
void res_list_flatten(const res_list *in, const char *role, res_list *out);

/* Set allocation_info.role of every resource of l to role (role copied), or
 * clear it when role is NULL; entries that become addable are merged. */
void res_list_allocate(res_list *l, const char *role);

/* ---- Reservations, volumes and an agent's total ---------------------- */

/* Make r the disk it was before its persistent volume was created (what
 * DESTROY does): persistence and Volume removed, and no longer shared. A
 * disk with a source keeps its DiskInfo and source; one without loses its
 * DiskInfo. Nothing happens to a resource that is not a volume. */
void res_drop_volume(struct resource *r);

/* Remove the top of r's reservation stack (what UNRESERVE does to a dynamic
 * reservation); nothing when r is unreserved. */
void res_pop_reservation(struct resource *r);

/* An agent's total resources: static_res (its --resources, or what it
 * detected) with the checkpointed resources ckpt (dynamic reservations and
 * persistent volumes) applied, as the master and the agent both compute
 * it. Each resource of ckpt replaces its base, the same resource with its
 * volume dropped, its dynamic reservations popped and no allocation role.
 * Returns 0 with *out replaced by the total, or -1 with *out replaced by a
 * copy of static_res and a one-line reason in err when the bases do not
 * fit in static_res. */
int res_agent_total(const res_list *static_res, const res_list *ckpt,
                    res_list *out, char *err, size_t errlen);

/* ---- Ranges helpers (arrays sorted and coalesced as in struct resource) */

/* Sort and coalesce n ranges in place; returns the new count. Ranges that
 * overlap or touch are merged. */
uint32_t res_ranges_normalize(struct res_range *v, uint32_t n);
/* True when every range of b lies inside a. */
bool res_ranges_contains(const struct res_range *a, uint32_t na,
                         const struct res_range *b, uint32_t nb);
/* Total number of values covered. */
uint64_t res_ranges_count(const struct res_range *v, uint32_t n);

/* ---- Rendering -------------------------------------------------------- */

/*
 * Render l in the text form res_parse_text reads back, e.g.
 * "cpus:4;mem:1024;disk(role1):100;ports:[31000-32000]". Scalars print with
 * up to three decimals and no trailing zeros. Reservations print as the top
 * role (res_parse_text turns it back into a static reservation); dynamic
 * reservations, refinements, disk info, revocable, shared and allocation
 * roles print in the annotated form Mesos logs, e.g.
 * "disk(reservations: [(DYNAMIC,eng,ops)]){persistence:v1}:10", which is for
 * people and is not parsed back.
 * Returns a new string the caller frees ("" for an empty list).
 */
char *res_list_render(const res_list *l);
/* Render one resource the same way; the caller frees the string. */
char *res_render(const struct resource *r);

#endif
