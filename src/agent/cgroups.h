/*
 * Linux control groups for the agent's tasks, v1 and v2 (unified), as
 * Mesos's cgroups isolators use them (src/linux/cgroups.cpp and
 * isolators/cgroups/ in Mesos).
 *
 * Detection reads /proc/self/mountinfo and /proc/cgroups once at start:
 *   - v1 when the memory and cpu controllers are mounted as cgroup v1
 *     hierarchies (each task gets <mount>/<root>/<id> in the cpu, cpuacct,
 *     memory, pids and freezer hierarchies that are mounted);
 *   - else v2 when a cgroup2 file system is mounted whose
 *     cgroup.controllers lists memory and cpu (each task gets
 *     <mount>/<root>/<id>, with cpu, memory and pids enabled in the
 *     subtree_control of the mount and of <root>);
 *   - else none.
 * A hybrid machine (v1 controllers and a cgroup2 mount that holds none of
 * them) is v1.
 *
 * Everything takes the hierarchy as a value, and the paths come from it:
 * unit tests point it at a directory tree of plain files that stands in for
 * a real hierarchy. Parsers are pure. A cgroup handle holds paths only; each
 * call does its own I/O (a few small reads or writes of cgroup files) and
 * does not block.
 */
#ifndef OFFERD_AGENT_CGROUPS_H
#define OFFERD_AGENT_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Longest mount point or cgroup path kept. */
#define AGENT_CG_PATH_MAX 512

enum agent_cg_version {
    AGENT_CG_NONE, /* no usable hierarchy */
    AGENT_CG_V1,   /* one hierarchy per controller (or co-mounted ones) */
    AGENT_CG_V2,   /* the unified hierarchy */
};

/* The controllers offerd uses. */
enum agent_cg_ctl {
    AGENT_CG_CPU,
    AGENT_CG_CPUACCT, /* v1 only; v2 has cpu.stat */
    AGENT_CG_MEMORY,
    AGENT_CG_PIDS,
    AGENT_CG_FREEZER, /* v1 only; v2 freezes with cgroup.freeze */
    AGENT_CG_NCTL,
};

/* Where the hierarchies are. */
struct agent_cg_hier {
    enum agent_cg_version version;
    /* v1: mount point of each controller's hierarchy, "" when absent; v2:
     * every controller that cgroup.controllers lists has the unified mount
     * point, the others "". */
    char mount[AGENT_CG_NCTL][AGENT_CG_PATH_MAX];
    char unified[AGENT_CG_PATH_MAX]; /* v2: the cgroup2 mount point */
};

/* The controller's name ("memory"). */
const char *agent_cg_ctl_name(enum agent_cg_ctl c);

/* Parse the text of /proc/self/mountinfo and of /proc/cgroups (either may
 * be NULL: no mounts / every controller enabled) into *out (OUT): v1 mount
 * points of enabled controllers and the cgroup2 mount point, and the
 * version by the rules above, with v2 controllers taken from
 * v2_controllers (the text of <unified>/cgroup.controllers, NULL when
 * unknown: none). Never fails; AGENT_CG_NONE when nothing fits. */
void agent_cg_parse(const char *mountinfo, const char *proc_cgroups,
                    const char *v2_controllers, struct agent_cg_hier *out);

/* Detect this machine's hierarchies from /proc (agent_cg_parse on the real
 * files). Never fails. */
void agent_cg_detect(struct agent_cg_hier *out);

/* Text of a version ("v1", "v2", "none"). */
const char *agent_cg_version_name(enum agent_cg_version v);

/* Make <root> in every hierarchy (and, on v2, enable the cpu, memory and
 * pids controllers for its children). root is a relative path ("offerd").
 * Returns 0, or -1 with a reason in err. */
int agent_cg_prepare_root(const struct agent_cg_hier *h, const char *root,
                          char *err, size_t errlen);

/* One cgroup: <root>/<id> in each hierarchy. */
struct agent_cgroup;

/* A handle for <root>/<id> (nothing is created). NULL when the version is
 * NONE or a path would be too long. Free with agent_cg_free. */
struct agent_cgroup *agent_cg_open(const struct agent_cg_hier *h,
                                   const char *root, const char *id);
void agent_cg_free(struct agent_cgroup *c);

/* The id it was opened with (borrowed). */
const char *agent_cg_id(const struct agent_cgroup *c);

/* Make the cgroup's directories. Returns 0 (also when they exist), or -1
 * with a reason in err (what was made is left for agent_cg_destroy). */
int agent_cg_create(const struct agent_cgroup *c, char *err, size_t errlen);

/* True when the cgroup's directory exists (memory's, or the unified one). */
bool agent_cg_exists(const struct agent_cgroup *c);

/* What to hold a task to. Zero means "no limit" for each. */
struct agent_cg_limits {
    uint64_t cpu_shares;   /* v1 cpu.shares (2..262144); v2 cpu.weight is
                              derived (agent_cg_weight_of_shares) */
    uint64_t cfs_quota_us; /* with cfs_period_us: cpu.cfs_quota_us or
                              cpu.max */
    uint64_t cfs_period_us;
    uint64_t mem_bytes;  /* memory.limit_in_bytes / memory.max */
    bool swap_off;       /* no swap: memory.swappiness 0 (and memsw
                            = mem) / memory.swap.max 0 */
    uint64_t swap_bytes; /* !swap_off: swap allowed beyond mem (v1
                            memsw = mem + swap), 0: unlimited */
    uint64_t pids_max;   /* pids.max */
};

/* Mesos's numbers (isolators/cgroups/constants.hpp). */
#define AGENT_CG_SHARES_PER_CPU   1024
#define AGENT_CG_MIN_SHARES       2
#define AGENT_CG_CFS_PERIOD_US    100000
#define AGENT_CG_MIN_CFS_QUOTA_US 1000
#define AGENT_CG_MIN_MEMORY       (32ULL * 1024 * 1024)

/* The cpu.weight (1..10000) for v1 shares (2..262144), as the kernel
 * documentation and container runtimes map them. */
uint64_t agent_cg_weight_of_shares(uint64_t shares);

/* Write l into the cgroup's files (only the non-zero ones; files a
 * hierarchy lacks, such as memsw without swap accounting, are skipped).
 * Returns 0, or -1 with the file and reason in err. */
int agent_cg_set_limits(const struct agent_cgroup *c,
                        const struct agent_cg_limits *l, char *err,
                        size_t errlen);

/* The cgroup.procs files a process writes "0" to in order to join the
 * cgroup, one per distinct directory; returns how many (at most max) were
 * put in out (borrowed from c). */
size_t agent_cg_procs_files(const struct agent_cgroup *c, const char **out,
                            size_t max);

/* Move pid into the cgroup. Returns 0, or -1 with a reason in err. */
int agent_cg_attach(const struct agent_cgroup *c, pid_t pid, char *err,
                    size_t errlen);

/* What the cgroup's files say; has_* tell which parts could be read. */
struct agent_cg_stats {
    bool has_cpu;
    uint64_t cpu_user_ns;   /* user CPU time */
    uint64_t cpu_system_ns; /* system CPU time */
    uint64_t cpu_usage_ns;  /* total CPU time */
    bool has_throttle;
    uint64_t nr_periods;   /* CFS periods that passed */
    uint64_t nr_throttled; /* periods in which the cgroup was throttled */
    uint64_t throttled_ns; /* time spent throttled */
    bool has_mem;
    uint64_t mem_current; /* memory.usage_in_bytes / memory.current */
    uint64_t mem_peak;    /* memory.max_usage_in_bytes / memory.peak; 0
                             when the kernel keeps none */
    uint64_t mem_limit;   /* 0: unlimited */
    uint64_t mem_anon;    /* anonymous (rss) */
    uint64_t mem_file;    /* page cache */
    uint64_t mem_swap;    /* swap in use */
    uint64_t oom_kills;   /* processes the OOM killer killed in it */
    bool has_pids;
    uint64_t pids_current;
    uint64_t pids_max; /* 0: unlimited */
    uint32_t nprocs;   /* processes listed in cgroup.procs */
};

/* Read the cgroup's statistics into *out (OUT, zeroed first). Returns 0
 * when the cgroup exists (parts may be missing), -1 when it does not. */
int agent_cg_stats(const struct agent_cgroup *c, struct agent_cg_stats *out);

/* SIGKILL every process of the cgroup: v2 through cgroup.kill where the
 * kernel has it; else the freezer is frozen first (v1 with a freezer
 * hierarchy, v2 cgroup.freeze) so that nothing forks meanwhile, every pid
 * of cgroup.procs is killed, and it is thawed. Returns how many processes
 * were signalled. */
int agent_cg_kill_all(const struct agent_cgroup *c);

/* Remove the cgroup's directories. Returns 0 when none is left, 1 when a
 * directory is still busy (processes not reaped yet: try again later), -1
 * on another error. */
int agent_cg_remove(const struct agent_cgroup *c);

/* The names of the children of <root> (in the memory or unified
 * hierarchy); returns how many were put in out (at most max), each a new
 * string for the caller to free. */
size_t agent_cg_list(const struct agent_cg_hier *h, const char *root,
                     char **out, size_t max);

/* Pure parsers, for tests. */

/* The value of key in "key value\n" lines (memory.stat, cpu.stat,
 * memory.events, memory.oom_control, cpuacct.stat). Returns 0, or -1 when
 * the key is absent. */
int agent_cg_parse_kv(const char *text, const char *key, uint64_t *out);

/* A single number, or "max" (*out = 0: unlimited), as memory.max,
 * pids.max and memory.limit_in_bytes hold them (values of 2^62 and above
 * count as unlimited). Returns 0, or -1. */
int agent_cg_parse_limit(const char *text, uint64_t *out);

/* Mesos's form of a byte count: "64MB", "1GB", "512KB" or "100B" (the
 * largest unit that divides it). */
void agent_cg_format_bytes(uint64_t bytes, char *out, size_t outlen);

#endif
