/*
 * The agent's total resources: what --resources gives, completed by what the
 * machine has, with Mesos's rules for the resources it detects:
 *
 *   cpus   the number of online CPUs
 *   mem    (MB) total RAM minus 1 GB when RAM is at least 2 GB, else half
 *   disk   (MB) size of the work_dir filesystem minus max(5 GB, 10% of it)
 *          when that size is at least 10 GB, else half of it
 *   ports  [31000-32000]
 *
 * Each of the four is detected only when --resources names no resource of
 * that name. The rule (agent_resources_build) is pure; agent_machine_probe
 * reads the machine.
 */
#ifndef OFFERD_AGENT_RESOURCES_DETECT_H
#define OFFERD_AGENT_RESOURCES_DETECT_H

#include "common/resources.h"

#include <stddef.h>
#include <stdint.h>

/* What the machine has, as read by agent_machine_probe. */
struct agent_machine {
    uint32_t cpus;       /* online CPUs, >= 1 */
    uint64_t mem_bytes;  /* total RAM */
    uint64_t disk_bytes; /* total size of the work_dir filesystem */
};

/* Detected mem in whole MB for total RAM of total_bytes. */
uint64_t agent_detect_mem_mb(uint64_t total_bytes);

/* Detected disk in whole MB for a filesystem of total_bytes. */
uint64_t agent_detect_disk_mb(uint64_t total_bytes);

/* Fill *m from the running machine, the disk from the filesystem holding
 * work_dir. Returns 0, or -1 with a one-line reason in err. */
int agent_machine_probe(const char *work_dir, struct agent_machine *m,
                        char *err, size_t errlen);

/* Parse text (the --resources value; NULL or empty: nothing given) with
 * default_role, and add the detected cpus, mem, disk and ports of *m that
 * text does not name, reserved to default_role unless it is "*". Appends to
 * *out. Returns 0, or -1 with *out unchanged and a reason in err. */
int agent_resources_build(const char *text, const char *default_role,
                          const struct agent_machine *m, res_list *out,
                          char *err, size_t errlen);

#endif
