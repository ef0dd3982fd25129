/*
 * libofferd placement: reading an offer's agent (attributes, IP, hostname)
 * and deciding whether a task may go there under Marathon-style placement
 * constraints, given where the framework's other tasks run.
 *
 * Three pieces, all plain values with no I/O:
 *
 *  - Offer helpers (offerd_offer_*): an agent attribute by name, typed
 *    (text, scalar, ranges, set) or rendered as text; the agent's IP; its
 *    hostname. They read a borrowed Mesos__V1__Offer and copy nothing.
 *
 *  - Constraints (struct offerd_constraints): a list of
 *    `field:OPERATOR[:value]` rules in Marathon's vocabulary, parsed from
 *    Marathon's JSON form `[["hostname","UNIQUE"],["rack","CLUSTER","r1"]]`
 *    or from the text form `hostname:UNIQUE;rack:CLUSTER:r1`. The field is
 *    `hostname` (also `@hostname`: the offer's hostname) or the name of an
 *    agent attribute, whose value is compared as text (see
 *    offerd_offer_attr_format). Operators, as Marathon defines them:
 *
 *      UNIQUE          no placed task has the offer's value
 *      CLUSTER:v       the offer's value is v
 *      CLUSTER         (no value) every placed task has the offer's value
 *      IS:v            the offer's value is v
 *      GROUP_BY[:n]    spread over the values: an offer whose value has no
 *                      task yet is fine; otherwise at least n values (n
 *                      defaults to 1) must be in use and the offer's value
 *                      must hold no more tasks than the least-used one
 *      LIKE:regex      the whole value matches regex (POSIX extended)
 *      UNLIKE:regex    the whole value does not match regex
 *      MAX_PER:n       fewer than n placed tasks have the offer's value
 *
 *    An offer whose agent lacks the field's attribute satisfies only UNLIKE
 *    (as in Marathon). Operator names are case-insensitive; fields and
 *    values are not.
 *
 *  - Placements (struct offerd_placements): where the framework's current
 *    tasks run, recorded from the offers they were launched on (hostname
 *    and rendered attributes are copied). Remove a task when it ends:
 *    constraints count the tasks in the set, so that UNIQUE means "no two
 *    running together" as in Marathon.
 *
 * Threads: the constraints object is immutable once parsed and may be read
 * from any number of threads. A placements object is not locked: do not
 * change it while another thread reads it (offerd_pool_find reads it).
 *
 * Protobuf types are protoc-c's, from "mesos/v1/mesos.pb-c.h"; this header
 * only declares their names.
 */
#ifndef OFFERD_PLACEMENT_H
#define OFFERD_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Mesos__V1__Offer Mesos__V1__Offer;
typedef struct Mesos__V1__Attribute Mesos__V1__Attribute;
typedef struct Mesos__V1__Value__Range Mesos__V1__Value__Range;

/* ---- Offer helpers ----
 *
 * Every pointer returned is borrowed from the offer: valid as long as the
 * offer is. A NULL offer or name is treated as "not found". */

/* The first attribute of the offer named name, or NULL. */
const Mesos__V1__Attribute *offerd_offer_attribute(const Mesos__V1__Offer *o,
                                                   const char *name);

/* The value of a TEXT attribute, or NULL (absent, or of another type). */
const char *offerd_offer_attr_text(const Mesos__V1__Offer *o, const char *name);

/* Store a SCALAR attribute's value in *out (OUT). Returns 0, or -1 (absent,
 * or of another type) with *out untouched. */
int offerd_offer_attr_scalar(const Mesos__V1__Offer *o, const char *name,
                             double *out);

/* The ranges of a RANGES attribute (count in *n, OUT), or NULL (absent, or
 * of another type; *n is then 0). */
Mesos__V1__Value__Range *const *
offerd_offer_attr_ranges(const Mesos__V1__Offer *o, const char *name,
                         size_t *n);

/* The items of a SET attribute (count in *n, OUT), or NULL (absent, or of
 * another type; *n is then 0). */
char *const *offerd_offer_attr_set(const Mesos__V1__Offer *o, const char *name,
                                   size_t *n);

/* True when the attribute is a RANGES one containing v, or a SET one
 * containing the decimal text of v. */
bool offerd_offer_attr_contains(const Mesos__V1__Offer *o, const char *name,
                                uint64_t v);

/* Write the attribute's value as text into buf (len bytes), the form
 * constraints compare: text as is; scalars with up to three decimals and no
 * trailing zeros ("2", "0.5"); ranges "[31000-32000,33000-33000]"; sets
 * "{a,b}". Returns 0, or -1 when absent, malformed or longer than len - 1
 * (buf then holds ""). */
int offerd_offer_attr_format(const Mesos__V1__Offer *o, const char *name,
                             char *buf, size_t len);

/* The agent's hostname (Offer.hostname), or NULL. */
const char *offerd_offer_hostname(const Mesos__V1__Offer *o);

/* Write the agent's IP address into buf (len bytes): the value of the TEXT
 * attribute attr when attr is non-NULL and it holds an IPv4 or IPv6
 * address, else the address the agent reported (Offer.url.address.ip) when
 * it is one. Returns 0, or -1 when neither is (buf then holds ""). */
int offerd_offer_ip(const Mesos__V1__Offer *o, const char *attr, char *buf,
                    size_t len);

/* ---- Constraints ---- */

/* Operators (Marathon's names). */
enum offerd_constraint_op {
    OFFERD_CONSTRAINT_UNIQUE = 0,
    OFFERD_CONSTRAINT_CLUSTER = 1,
    OFFERD_CONSTRAINT_IS = 2,
    OFFERD_CONSTRAINT_GROUP_BY = 3,
    OFFERD_CONSTRAINT_LIKE = 4,
    OFFERD_CONSTRAINT_UNLIKE = 5,
    OFFERD_CONSTRAINT_MAX_PER = 6,
};

/* Limits on what offerd_constraints_parse accepts. */
#define OFFERD_CONSTRAINTS_MAX      64   /* constraints in one list */
#define OFFERD_CONSTRAINT_FIELD_MAX 128  /* bytes of a field name */
#define OFFERD_CONSTRAINT_VALUE_MAX 1024 /* bytes of a value or regex */
#define OFFERD_ATTR_TEXT_MAX        1024 /* bytes of a rendered value */

struct offerd_constraints;

/*
 * Parse text: Marathon's JSON form when its first non-space character is
 * '[' (an array of arrays of two or three strings; GROUP_BY and MAX_PER
 * also take a number as third element), else the text form: constraints
 * separated by ';', each `field:OPERATOR` or `field:OPERATOR:value` (the
 * value is everything after the second ':', so a regex may hold ':'; use
 * the JSON form for one holding ';'). Empty text, "[]" and empty ';'
 * entries give an empty list. Checked: known operator; UNIQUE takes no
 * value; IS, LIKE, UNLIKE, MAX_PER need one; GROUP_BY and MAX_PER take a
 * positive integer; regexes compile; the limits above.
 * Returns a new list (free with offerd_constraints_free), or NULL with a
 * one-line reason in err (errlen bytes) naming the constraint's index.
 */
struct offerd_constraints *offerd_constraints_parse(const char *text, char *err,
                                                    size_t errlen);

/* Free the list; NULL is ignored. */
void offerd_constraints_free(struct offerd_constraints *c);

/* Number of constraints in the list (0 for NULL). */
size_t offerd_constraints_count(const struct offerd_constraints *c);

/* The i-th constraint (i < count): its field, operator and value (NULL when
 * none), all OUT and borrowed from c; any pointer may be NULL. Returns 0,
 * or -1 when i is out of range. */
int offerd_constraints_get(const struct offerd_constraints *c, size_t i,
                           const char **field, enum offerd_constraint_op *op,
                           const char **value);

/* Write the list in the text form offerd_constraints_parse reads back
 * (e.g. "hostname:UNIQUE;rack:CLUSTER:r1") into buf (len bytes). Returns
 * 0, or -1 when it does not fit (buf then holds a truncated text). */
int offerd_constraints_format(const struct offerd_constraints *c, char *buf,
                              size_t len);

struct offerd_placements;

/* True when an offer on o's agent satisfies every constraint of c given
 * the tasks in p (NULL: no task placed). A NULL or empty c is satisfied by
 * every offer. */
bool offerd_constraints_match(const struct offerd_constraints *c,
                              const Mesos__V1__Offer *o,
                              const struct offerd_placements *p);

/* ---- Placements ---- */

/* A new, empty set of placements (free with offerd_placements_free). */
struct offerd_placements *offerd_placements_new(void);

/* Free the set; NULL is ignored. */
void offerd_placements_free(struct offerd_placements *p);

/* Record that task_id runs on the agent of offer o: its agent id, hostname
 * and every attribute (rendered as offerd_offer_attr_format does) are
 * copied. A task already recorded is moved. Returns 0, or -1 when task_id
 * or o is NULL. */
int offerd_placements_add(struct offerd_placements *p, const char *task_id,
                          const Mesos__V1__Offer *o);

/* Forget task_id (it ended). Returns 0, or -1 when it was not recorded. */
int offerd_placements_remove(struct offerd_placements *p, const char *task_id);

/* Number of tasks recorded (0 for NULL). */
size_t offerd_placements_count(const struct offerd_placements *p);

/* Number of recorded tasks on agents whose field (as in constraints:
 * "hostname" or an attribute name) has the text value value. */
size_t offerd_placements_count_value(const struct offerd_placements *p,
                                     const char *field, const char *value);

/* The agent id task_id was recorded on, or NULL. Borrowed from p: valid
 * until the task is removed or moved. */
const char *offerd_placements_agent(const struct offerd_placements *p,
                                    const char *task_id);

#endif
