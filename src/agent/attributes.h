/*
 * Agent attributes (--attributes), parsed as Mesos's Attributes::parse:
 *
 *     rack:r1;zone:z1;cores:8;slots:[1-4,8-9]
 *
 * Entries are separated by ';' or newlines (empty entries skipped); each is
 * NAME:VALUE split at the first ':' (so a text value may hold ':'); spaces
 * inside the value are removed. A value starting with '[' is a range list,
 * one that reads whole as a finite number is a scalar, anything else is
 * text. Sets ("{a,b}") are refused, as Mesos refuses them for attributes,
 * and so are mismatched brackets and a '[' or '{' not at the start.
 *
 * The result converts to mesos.v1.Attribute messages (AgentInfo.attributes)
 * and to the JSON object /state shows ({"rack": "r1", "cores": 8, "slots":
 * "[1-4, 8-9]"}).
 */
#ifndef OFFERD_AGENT_ATTRIBUTES_H
#define OFFERD_AGENT_ATTRIBUTES_H

#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Most attributes and ranges per attribute accepted. */
#define AGENT_ATTR_MAX       256
#define AGENT_ATTR_MAX_RANGE 1024

enum agent_attr_type {
    AGENT_ATTR_SCALAR,
    AGENT_ATTR_RANGES,
    AGENT_ATTR_TEXT,
};

struct agent_attr_range {
    uint64_t begin, end; /* inclusive, begin <= end */
};

struct agent_attr {
    char *name;
    enum agent_attr_type type;
    double scalar;                   /* SCALAR */
    struct agent_attr_range *ranges; /* RANGES: sorted and coalesced */
    size_t nranges;
    char *text; /* TEXT */
};

struct agent_attrs {
    struct agent_attr *v;
    size_t n;
};

/* Parse text (NULL or empty: no attributes) into *out (overwritten). Returns
 * 0, or -1 with *out empty and a one-line reason naming the entry in err.
 * Free with agent_attrs_clear. */
int agent_attrs_parse(const char *text, struct agent_attrs *out, char *err,
                      size_t errlen);

/* Free what *a holds and leave it empty. */
void agent_attrs_clear(struct agent_attrs *a);

/* New mesos.v1.Attribute messages, one per attribute (malloc'd array with
 * *n entries, never NULL); free each with jpb_free and the array with
 * free, or all at once with agent_attrs_pb_free. */
Mesos__V1__Attribute **agent_attrs_to_pb(const struct agent_attrs *a,
                                         size_t *n);
void agent_attrs_pb_free(Mesos__V1__Attribute **v, size_t n);

/* The /state form: an object of name -> number (scalar) or string (text,
 * ranges as "[1-4, 8-9]"). New reference. */
json_t *agent_attrs_to_json(const struct agent_attrs *a);

#endif
