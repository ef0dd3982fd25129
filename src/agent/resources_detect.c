/*
 * Resource detection: Mesos's rules for the resources an agent offers when
 * --resources leaves them out.
 */
#include "agent/resources_detect.h"

#include "common/resources_pb.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define MB (UINT64_C(1) << 20)
#define GB (UINT64_C(1) << 30)

uint64_t agent_detect_mem_mb(uint64_t total)
{
    uint64_t bytes = total >= 2 * GB ? total - GB : total / 2;
    return bytes / MB;
}

uint64_t agent_detect_disk_mb(uint64_t total)
{
    uint64_t bytes;
    if (total >= 10 * GB) {
        uint64_t tenth = total / 10;
        uint64_t headroom = tenth > 5 * GB ? tenth : 5 * GB;
        bytes = total - headroom;
    } else {
        bytes = total / 2;
    }
    return bytes / MB;
}

int agent_machine_probe(const char *work_dir, struct agent_machine *m,
                        char *err, size_t errlen)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (cpus < 1)
        cpus = 1;
    if (pages <= 0 || page <= 0) {
        snprintf(err, errlen, "cannot read the total memory");
        return -1;
    }
    struct statvfs sv;
    if (statvfs(work_dir, &sv) != 0) {
        snprintf(err, errlen, "cannot read the size of %s's filesystem: %s",
                 work_dir, strerror(errno));
        return -1;
    }
    m->cpus = (uint32_t)cpus;
    m->mem_bytes = (uint64_t)pages * (uint64_t)page;
    m->disk_bytes = (uint64_t)sv.f_blocks * (uint64_t)sv.f_frsize;
    return 0;
}

static int has_name(const res_list *l, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return 1;
    return 0;
}

/* Reserve r statically to role unless role is "*", then add it. */
static void add_detected(res_list *l, struct resource *r, const char *role)
{
    if (strcmp(role, "*") != 0)
        res_push_reservation(r, RES_RESV_STATIC, role, NULL, NULL, 0);
    res_list_add(l, r);
    res_clear(r);
}

int agent_resources_build(const char *text, const char *default_role,
                          const struct agent_machine *m, res_list *out,
                          char *err, size_t errlen)
{
    res_list given = RES_LIST_INIT;
    if (text != NULL && text[0] != '\0' &&
        res_list_parse(text, default_role, &given, err, errlen) != 0)
        return -1;

    struct resource r;
    if (!has_name(&given, "cpus")) {
        res_init_scalar(&r, "cpus", (int64_t)m->cpus * RES_SCALE);
        add_detected(&given, &r, default_role);
    }
    if (!has_name(&given, "mem")) {
        uint64_t mb = agent_detect_mem_mb(m->mem_bytes);
        if (mb > 0) {
            res_init_scalar(&r, "mem", (int64_t)mb * RES_SCALE);
            add_detected(&given, &r, default_role);
        }
    }
    if (!has_name(&given, "disk")) {
        uint64_t mb = agent_detect_disk_mb(m->disk_bytes);
        if (mb > 0) {
            res_init_scalar(&r, "disk", (int64_t)mb * RES_SCALE);
            add_detected(&given, &r, default_role);
        }
    }
    if (!has_name(&given, "ports")) {
        struct res_range ports = {31000, 32000};
        res_init_ranges(&r, "ports", &ports, 1);
        add_detected(&given, &r, default_role);
    }
    res_list_add_all(out, &given);
    res_list_clear(&given);
    return 0;
}
