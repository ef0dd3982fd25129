/*
 * --domain values: inline JSON or a file, decoded through the JSON <->
 * protobuf codec so that errors name the field as the API's do.
 */
#include "common/domain.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/fs.h"
#include "common/json_pb.h"

/* True when spec is inline JSON rather than a path: its first non-blank
 * character opens an object (a path never starts with '{'). */
static bool is_inline_json(const char *spec)
{
    while (*spec == ' ' || *spec == '\t' || *spec == '\n' || *spec == '\r')
        spec++;
    return *spec == '{';
}

static bool name_ok(const char *s)
{
    return s != NULL && s[0] != '\0';
}

Mesos__V1__DomainInfo *domain_load(const char *spec, char *err, size_t errlen)
{
    if (spec == NULL || spec[0] == '\0') {
        errbuf_set(err, errlen, "empty value");
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    if (is_inline_json(spec)) {
        len = strlen(spec);
    } else {
        const char *path = strncmp(spec, "file://", 7) == 0 ? spec + 7 : spec;
        uint8_t *data = NULL;
        int rc = fs_read(path, DOMAIN_MAX_FILE, &data, &len);
        if (rc != 1) {
            errbuf_set(err, errlen, "%s: %s", path,
                       rc == 0          ? "no such file"
                       : errno == EFBIG ? "file too large"
                                        : strerror(errno));
            return NULL;
        }
        text = (char *)data;
    }
    char why[256];
    ProtobufCMessage *msg =
        jpb_from_json_text(&mesos__v1__domain_info__descriptor,
                           text != NULL ? text : spec, len, why, sizeof(why));
    free(text);
    if (msg == NULL) {
        errbuf_set(err, errlen, "%s", why);
        return NULL;
    }
    Mesos__V1__DomainInfo *d = (Mesos__V1__DomainInfo *)msg;
    const Mesos__V1__DomainInfo__FaultDomain *fd = d->fault_domain;
    if (fd == NULL) {
        errbuf_set(err, errlen, "fault_domain: required");
        jpb_free(msg);
        return NULL;
    }
    if (fd->region == NULL || !name_ok(fd->region->name) || fd->zone == NULL ||
        !name_ok(fd->zone->name)) {
        errbuf_set(err, errlen,
                   "fault_domain: region.name and zone.name "
                   "must be non-empty");
        jpb_free(msg);
        return NULL;
    }
    return d;
}

const char *domain_region(const Mesos__V1__DomainInfo *d)
{
    if (d == NULL || d->fault_domain == NULL || d->fault_domain->region == NULL)
        return NULL;
    return d->fault_domain->region->name;
}

const char *domain_zone(const Mesos__V1__DomainInfo *d)
{
    if (d == NULL || d->fault_domain == NULL || d->fault_domain->zone == NULL)
        return NULL;
    return d->fault_domain->zone->name;
}
