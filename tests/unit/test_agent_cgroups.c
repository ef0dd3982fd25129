/*
 * Unit tests of src/agent/cgroups.c, isolation_flags.c, disk_quota.c and
 * the pure parts of isolator.c: detection from crafted mountinfo and
 * /proc/cgroups text (v1, v2, hybrid), the file parsers, and limits,
 * statistics and the cgroup.procs list against fake v1 and v2 hierarchies
 * made of plain files in a temporary directory.
 */
#include "agent/cgroups.h"
#include "agent/disk_quota.h"
#include "agent/isolation_flags.h"
#include "agent/isolator.h"
#include "agent/tasks.h"
#include "common/fs.h"
#include "common/json_pb.h"
#include "common/mem.h"

#include "check_main.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This machine's layout: v1 controllers and a cgroup2 mount with none of
 * them (hybrid). */
static const char V1_MOUNTINFO[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup "
    "rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "
    "rw,memory\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup "
    "rw,freezer\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime shared:5 - cgroup cgroup "
    "rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup "
    "rw,xattr,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char V2_MOUNTINFO[] =
    "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate\n";

static const char PROC_CGROUPS[] = "#subsys_name\thierarchy\tnum_cgroups\t"
                                   "enabled\n"
                                   "cpu\t1\t1\t1\n"
                                   "memory\t4\t71\t1\n"
                                   "pids\t8\t1\t1\n";

START_TEST(test_parse_v1_hybrid)
{
    struct agent_cg_hier h;
    agent_cg_parse(V1_MOUNTINFO, PROC_CGROUPS, NULL, &h);
    ck_assert_int_eq(h.version, AGENT_CG_V1);
    ck_assert_str_eq(h.mount[AGENT_CG_CPU], "/sys/fs/cgroup/cpu,cpuacct");
    ck_assert_str_eq(h.mount[AGENT_CG_CPUACCT], "/sys/fs/cgroup/cpu,cpuacct");
    ck_assert_str_eq(h.mount[AGENT_CG_MEMORY], "/sys/fs/cgroup/memory");
    ck_assert_str_eq(h.mount[AGENT_CG_PIDS], "/sys/fs/cgroup/pids");
    ck_assert_str_eq(h.mount[AGENT_CG_FREEZER], "/sys/fs/cgroup/freezer");
    ck_assert_str_eq(h.unified, "/sys/fs/cgroup/unified");
    /* Only hugetlb in the unified one: still v1. */
    agent_cg_parse(V1_MOUNTINFO, PROC_CGROUPS, "hugetlb\n", &h);
    ck_assert_int_eq(h.version, AGENT_CG_V1);
}
END_TEST

START_TEST(test_parse_v2)
{
    struct agent_cg_hier h;
    agent_cg_parse(V2_MOUNTINFO, NULL, "cpuset cpu io memory hugetlb pids\n",
                   &h);
    ck_assert_int_eq(h.version, AGENT_CG_V2);
    ck_assert_str_eq(h.unified, "/sys/fs/cgroup");
    ck_assert_str_eq(h.mount[AGENT_CG_CPU], "/sys/fs/cgroup");
    ck_assert_str_eq(h.mount[AGENT_CG_MEMORY], "/sys/fs/cgroup");
    ck_assert_str_eq(h.mount[AGENT_CG_PIDS], "/sys/fs/cgroup");
    ck_assert_str_eq(h.mount[AGENT_CG_CPUACCT], "");
    ck_assert_str_eq(h.mount[AGENT_CG_FREEZER], "");
    /* No pids controller: cgroups still, without a pids limit. */
    agent_cg_parse(V2_MOUNTINFO, NULL, "cpu memory", &h);
    ck_assert_int_eq(h.version, AGENT_CG_V2);
    ck_assert_str_eq(h.mount[AGENT_CG_PIDS], "");
}
END_TEST

START_TEST(test_parse_none)
{
    struct agent_cg_hier h;
    /* v2 without memory. */
    agent_cg_parse(V2_MOUNTINFO, NULL, "cpu io pids", &h);
    ck_assert_int_eq(h.version, AGENT_CG_NONE);
    /* Controllers unknown (unreadable cgroup.controllers). */
    agent_cg_parse(V2_MOUNTINFO, NULL, NULL, &h);
    ck_assert_int_eq(h.version, AGENT_CG_NONE);
    /* v1 memory disabled in /proc/cgroups (cgroup_disable=memory). */
    agent_cg_parse(V1_MOUNTINFO, "memory\t4\t1\t0\ncpu\t1\t1\t1\n", "hugetlb",
                   &h);
    ck_assert_int_eq(h.version, AGENT_CG_NONE);
    ck_assert_str_eq(h.mount[AGENT_CG_CPU], "");
    /* Nothing mounted, garbage lines. */
    agent_cg_parse("", NULL, NULL, &h);
    ck_assert_int_eq(h.version, AGENT_CG_NONE);
    agent_cg_parse("x\n1 2 3\n- - -\n", "junk", "", &h);
    ck_assert_int_eq(h.version, AGENT_CG_NONE);
    agent_cg_parse(NULL, NULL, NULL, &h);
    ck_assert_int_eq(h.version, AGENT_CG_NONE);
}
END_TEST

START_TEST(test_parse_escaped_mount_point)
{
    struct agent_cg_hier h;
    agent_cg_parse("1 0 0:1 / /cg\\040v2 rw - cgroup2 none rw\n", NULL,
                   "cpu memory", &h);
    ck_assert_int_eq(h.version, AGENT_CG_V2);
    ck_assert_str_eq(h.unified, "/cg v2");
}
END_TEST

START_TEST(test_parse_kv_and_limit)
{
    const char *stat = "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"
                       "nr_periods 7\n";
    uint64_t v = 0;
    ck_assert_int_eq(agent_cg_parse_kv(stat, "user_usec", &v), 0);
    ck_assert_uint_eq(v, 1000);
    ck_assert_int_eq(agent_cg_parse_kv(stat, "usage_usec", &v), 0);
    ck_assert_uint_eq(v, 1500);
    ck_assert_int_eq(agent_cg_parse_kv(stat, "nr_periods", &v), 0);
    ck_assert_uint_eq(v, 7);
    ck_assert_int_eq(agent_cg_parse_kv(stat, "usage", &v), -1);
    ck_assert_int_eq(agent_cg_parse_kv(stat, "nr_throttled", &v), -1);
    ck_assert_int_eq(agent_cg_parse_kv("a x\n", "a", &v), -1);

    static const struct {
        const char *text;
        int rc;
        uint64_t v;
    } lim[] = {
        {"max\n", 0, 0},
        {"67108864\n", 0, 67108864},
        {"9223372036854771712\n", 0, 0}, /* v1's "unlimited" */
        {"12", 0, 12},
        {"", -1, 0},
        {"-1\n", -1, 0},
        {"12x", -1, 0},
        {"maximum", -1, 0},
    };
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
        v = 99;
        ck_assert_int_eq(agent_cg_parse_limit(lim[i].text, &v), lim[i].rc);
        if (lim[i].rc == 0)
            ck_assert_uint_eq(v, lim[i].v);
    }
}
END_TEST

START_TEST(test_format_bytes_and_weight)
{
    char b[32];
    agent_cg_format_bytes(64ULL << 20, b, sizeof(b));
    ck_assert_str_eq(b, "64MB");
    agent_cg_format_bytes(1ULL << 30, b, sizeof(b));
    ck_assert_str_eq(b, "1GB");
    agent_cg_format_bytes(3084ULL << 10, b, sizeof(b));
    ck_assert_str_eq(b, "3084KB");
    agent_cg_format_bytes(100, b, sizeof(b));
    ck_assert_str_eq(b, "100B");
    agent_cg_format_bytes(0, b, sizeof(b));
    ck_assert_str_eq(b, "0B");
    ck_assert_uint_eq(agent_cg_weight_of_shares(2), 1);
    ck_assert_uint_eq(agent_cg_weight_of_shares(0), 1);
    ck_assert_uint_eq(agent_cg_weight_of_shares(1024), 39);
    ck_assert_uint_eq(agent_cg_weight_of_shares(262144), 10000);
    ck_assert_uint_eq(agent_cg_weight_of_shares(1 << 30), 10000);
}
END_TEST

/* ---- Fake hierarchies ---- */

static char tmp[256];

static void make_tmp(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/offerd-test-cg-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void put(const char *dir, const char *file, const char *text)
{
    char *p = xasprintf("%s/%s", dir, file);
    FILE *f = fopen(p, "w");
    ck_assert_msg(f != NULL, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
    free(p);
}

static char *get(const char *dir, const char *file)
{
    char *p = xasprintf("%s/%s", dir, file);
    uint8_t *data = NULL;
    size_t len = 0;
    ck_assert_msg(fs_read(p, 4096, &data, &len) == 1, "cannot read %s", p);
    free(p);
    char *s = xmalloc(len + 1);
    memcpy(s, data, len);
    s[len] = '\0';
    free(data);
    return s;
}

static void assert_file(const char *dir, const char *file, const char *want)
{
    char *s = get(dir, file);
    ck_assert_msg(strcmp(s, want) == 0, "%s/%s is '%s', not '%s'", dir, file, s,
                  want);
    free(s);
}

static void fake_v2(struct agent_cg_hier *h)
{
    make_tmp();
    agent_cg_parse(NULL, NULL, NULL, h);
    h->version = AGENT_CG_V2;
    snprintf(h->unified, sizeof(h->unified), "%s", tmp);
    snprintf(h->mount[AGENT_CG_CPU], AGENT_CG_PATH_MAX, "%s", tmp);
    snprintf(h->mount[AGENT_CG_MEMORY], AGENT_CG_PATH_MAX, "%s", tmp);
    snprintf(h->mount[AGENT_CG_PIDS], AGENT_CG_PATH_MAX, "%s", tmp);
    put(tmp, "cgroup.subtree_control", "");
}

START_TEST(test_v2_root_limits_stats)
{
    struct agent_cg_hier h;
    fake_v2(&h);
    char err[512];
    /* The root's subtree_control is a plain file here: it must exist. */
    char *rootdir = xasprintf("%s/offerd", tmp);
    ck_assert_int_eq(mkdir(rootdir, 0755), 0);
    put(rootdir, "cgroup.subtree_control", "");
    ck_assert_int_eq(agent_cg_prepare_root(&h, "offerd", err, sizeof(err)), 0);
    /* Each write enabled one controller; the last one was pids. */
    assert_file(rootdir, "cgroup.subtree_control", "+pids");
    ck_assert_int_eq(agent_cg_prepare_root(&h, "/abs", err, sizeof(err)), -1);
    ck_assert_int_eq(agent_cg_prepare_root(&h, "a/../b", err, sizeof(err)), -1);

    struct agent_cgroup *c = agent_cg_open(&h, "offerd", "run-1");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(agent_cg_id(c), "run-1");
    ck_assert(!agent_cg_exists(c));
    ck_assert_int_eq(agent_cg_create(c, err, sizeof(err)), 0);
    ck_assert(agent_cg_exists(c));
    char *dir = xasprintf("%s/run-1", rootdir);
    const char *files[] = {"cpu.weight", "cpu.max", "memory.max",
                           "memory.swap.max", "pids.max"};
    for (size_t i = 0; i < 5; i++)
        put(dir, files[i], "");
    struct agent_cg_limits l = {
        .cpu_shares = 512,
        .cfs_quota_us = 50000,
        .cfs_period_us = 100000,
        .mem_bytes = 64ULL << 20,
        .swap_off = true,
        .pids_max = 32,
    };
    ck_assert_int_eq(agent_cg_set_limits(c, &l, err, sizeof(err)), 0);
    assert_file(dir, "cpu.weight", "20");
    assert_file(dir, "cpu.max", "50000 100000");
    assert_file(dir, "memory.max", "67108864");
    assert_file(dir, "memory.swap.max", "0");
    assert_file(dir, "pids.max", "32");

    /* One cgroup.procs for the whole unified hierarchy. */
    const char *procs[AGENT_CG_NCTL];
    ck_assert_uint_eq(agent_cg_procs_files(c, procs, AGENT_CG_NCTL), 1);
    char *want = xasprintf("%s/cgroup.procs", dir);
    ck_assert_str_eq(procs[0], want);
    free(want);

    put(dir, "cpu.stat",
        "usage_usec 3000000\nuser_usec 2000000\nsystem_usec 1000000\n"
        "nr_periods 50\nnr_throttled 20\nthrottled_usec 400000\n");
    put(dir, "memory.current", "1048576\n");
    put(dir, "memory.peak", "2097152\n");
    put(dir, "memory.max", "67108864\n");
    put(dir, "memory.stat", "anon 524288\nfile 262144\nkernel 4096\n");
    put(dir, "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
    put(dir, "memory.swap.current", "0\n");
    put(dir, "pids.current", "3\n");
    put(dir, "pids.max", "max\n");
    put(dir, "cgroup.procs", "10\n11\n12\n");
    struct agent_cg_stats s;
    ck_assert_int_eq(agent_cg_stats(c, &s), 0);
    ck_assert(s.has_cpu && s.has_throttle && s.has_mem && s.has_pids);
    ck_assert_uint_eq(s.cpu_usage_ns, 3000000000ULL);
    ck_assert_uint_eq(s.cpu_user_ns, 2000000000ULL);
    ck_assert_uint_eq(s.cpu_system_ns, 1000000000ULL);
    ck_assert_uint_eq(s.nr_periods, 50);
    ck_assert_uint_eq(s.nr_throttled, 20);
    ck_assert_uint_eq(s.throttled_ns, 400000000ULL);
    ck_assert_uint_eq(s.mem_current, 1048576);
    ck_assert_uint_eq(s.mem_peak, 2097152);
    ck_assert_uint_eq(s.mem_limit, 64ULL << 20);
    ck_assert_uint_eq(s.mem_anon, 524288);
    ck_assert_uint_eq(s.mem_file, 262144);
    ck_assert_uint_eq(s.oom_kills, 1);
    ck_assert_uint_eq(s.pids_current, 3);
    ck_assert_uint_eq(s.pids_max, 0);
    ck_assert_uint_eq(s.nprocs, 3);
    agent_cg_free(c);

    /* A cgroup that is not there has no statistics. */
    c = agent_cg_open(&h, "offerd", "run-2");
    ck_assert_int_eq(agent_cg_stats(c, &s), -1);
    /* Removing an empty cgroup directory. */
    ck_assert_int_eq(agent_cg_create(c, err, sizeof(err)), 0);
    ck_assert_int_eq(agent_cg_remove(c), 0);
    ck_assert(!agent_cg_exists(c));
    ck_assert_int_eq(agent_cg_remove(c), 0);
    agent_cg_free(c);

    /* Listing the root's children. */
    char *names[8];
    size_t n = agent_cg_list(&h, "offerd", names, 8);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(names[0], "run-1");
    free(names[0]);
    fs_remove_tree(tmp);
    free(dir);
    free(rootdir);
}
END_TEST

START_TEST(test_open_rejects_bad_names)
{
    struct agent_cg_hier h;
    fake_v2(&h);
    ck_assert_ptr_null(agent_cg_open(&h, "offerd", "a/b"));
    ck_assert_ptr_null(agent_cg_open(&h, "offerd", ".."));
    ck_assert_ptr_null(agent_cg_open(&h, "offerd", ""));
    ck_assert_ptr_null(agent_cg_open(&h, "/offerd", "x"));
    struct agent_cg_hier none;
    agent_cg_parse(NULL, NULL, NULL, &none);
    ck_assert_ptr_null(agent_cg_open(&none, "offerd", "x"));
    char err[256];
    ck_assert_int_eq(agent_cg_prepare_root(&none, "offerd", err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "no cgroup hierarchy"));
    fs_remove_tree(tmp);
}
END_TEST

START_TEST(test_v1_limits_stats_procs)
{
    make_tmp();
    struct agent_cg_hier h;
    agent_cg_parse(NULL, NULL, NULL, &h);
    h.version = AGENT_CG_V1;
    /* cpu and cpuacct co-mounted, as many distributions do. */
    snprintf(h.mount[AGENT_CG_CPU], AGENT_CG_PATH_MAX, "%s/cpu,cpuacct", tmp);
    snprintf(h.mount[AGENT_CG_CPUACCT], AGENT_CG_PATH_MAX, "%s/cpu,cpuacct",
             tmp);
    snprintf(h.mount[AGENT_CG_MEMORY], AGENT_CG_PATH_MAX, "%s/memory", tmp);
    snprintf(h.mount[AGENT_CG_PIDS], AGENT_CG_PATH_MAX, "%s/pids", tmp);
    char err[512];
    ck_assert_int_eq(agent_cg_prepare_root(&h, "offerd", err, sizeof(err)), 0);
    struct agent_cgroup *c = agent_cg_open(&h, "offerd", "r");
    ck_assert_int_eq(agent_cg_create(c, err, sizeof(err)), 0);
    const char *procs[AGENT_CG_NCTL];
    ck_assert_uint_eq(agent_cg_procs_files(c, procs, AGENT_CG_NCTL), 3);
    char *cpu = xasprintf("%s/cpu,cpuacct/offerd/r", tmp);
    char *mem = xasprintf("%s/memory/offerd/r", tmp);
    char *pids = xasprintf("%s/pids/offerd/r", tmp);
    const char *cf[] = {"cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us"};
    for (size_t i = 0; i < 3; i++)
        put(cpu, cf[i], "");
    const char *mf[] = {"memory.limit_in_bytes", "memory.swappiness",
                        "memory.memsw.limit_in_bytes"};
    for (size_t i = 0; i < 3; i++)
        put(mem, mf[i], "");
    put(pids, "pids.max", "");
    struct agent_cg_limits l = {
        .cpu_shares = 2,
        .cfs_quota_us = 1000,
        .cfs_period_us = 100000,
        .mem_bytes = 32ULL << 20,
        .swap_off = true,
        .pids_max = 8,
    };
    ck_assert_int_eq(agent_cg_set_limits(c, &l, err, sizeof(err)), 0);
    assert_file(cpu, "cpu.shares", "2");
    assert_file(cpu, "cpu.cfs_period_us", "100000");
    assert_file(cpu, "cpu.cfs_quota_us", "1000");
    assert_file(mem, "memory.limit_in_bytes", "33554432");
    assert_file(mem, "memory.swappiness", "0");
    assert_file(mem, "memory.memsw.limit_in_bytes", "33554432");
    assert_file(pids, "pids.max", "8");
    /* Swap allowed: memsw = memory + swap. */
    l.swap_off = false;
    l.swap_bytes = 32ULL << 20;
    ck_assert_int_eq(agent_cg_set_limits(c, &l, err, sizeof(err)), 0);
    assert_file(mem, "memory.memsw.limit_in_bytes", "67108864");
    /* A file the hierarchy lacks is an error naming it. */
    char *p = xasprintf("%s/pids.max", pids);
    unlink(p);
    free(p);
    ck_assert_int_eq(agent_cg_set_limits(c, &l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "pids.max"));

    long tck = sysconf(_SC_CLK_TCK);
    char text[64];
    snprintf(text, sizeof(text), "user %ld\nsystem %ld\n", 3 * tck, tck);
    put(cpu, "cpuacct.stat", text);
    put(cpu, "cpuacct.usage", "4000000000\n");
    put(cpu, "cpu.stat",
        "nr_periods 10\nnr_throttled 5\nthrottled_time "
        "123\n");
    put(mem, "memory.usage_in_bytes", "1000\n");
    put(mem, "memory.max_usage_in_bytes", "2000\n");
    put(mem, "memory.limit_in_bytes", "33554432\n");
    put(mem, "memory.stat",
        "cache 10\nrss 20\ntotal_cache 30\ntotal_rss 40\n"
        "total_swap 0\n");
    put(mem, "memory.oom_control",
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    put(mem, "cgroup.procs", "5\n");
    put(pids, "pids.current", "1\n");
    put(pids, "pids.max", "8\n");
    struct agent_cg_stats s;
    ck_assert_int_eq(agent_cg_stats(c, &s), 0);
    ck_assert(s.has_cpu && s.has_throttle && s.has_mem && s.has_pids);
    ck_assert_uint_eq(s.cpu_user_ns, 3000000000ULL);
    ck_assert_uint_eq(s.cpu_system_ns, 1000000000ULL);
    ck_assert_uint_eq(s.cpu_usage_ns, 4000000000ULL);
    ck_assert_uint_eq(s.nr_throttled, 5);
    ck_assert_uint_eq(s.throttled_ns, 123);
    ck_assert_uint_eq(s.mem_current, 1000);
    ck_assert_uint_eq(s.mem_peak, 2000);
    ck_assert_uint_eq(s.mem_limit, 32ULL << 20);
    ck_assert_uint_eq(s.mem_anon, 40);
    ck_assert_uint_eq(s.mem_file, 30);
    ck_assert_uint_eq(s.oom_kills, 2);
    ck_assert_uint_eq(s.pids_max, 8);
    ck_assert_uint_eq(s.nprocs, 1);
    agent_cg_free(c);
    free(cpu);
    free(mem);
    free(pids);
    fs_remove_tree(tmp);
}
END_TEST

/* ---- Policy ---- */

START_TEST(test_limits_for)
{
    struct agent_iso_flags f;
    struct flag_def defs[AGENT_ISO_FLAGS_ROWS];
    agent_iso_flag_defs(&f, defs);
    struct agent_cg_limits l;
    agent_iso_limits_for(&f, 0.5, 64, false, &l);
    ck_assert_uint_eq(l.cpu_shares, 512);
    ck_assert_uint_eq(l.cfs_quota_us, 0);
    ck_assert_uint_eq(l.mem_bytes, 64ULL << 20);
    ck_assert(l.swap_off);
    ck_assert_uint_eq(l.pids_max, 0);
    /* Revocable: the lowest weight; tiny memory: Mesos's 32 MB floor. */
    agent_iso_limits_for(&f, 2, 8, true, &l);
    ck_assert_uint_eq(l.cpu_shares, AGENT_CG_MIN_SHARES);
    ck_assert_uint_eq(l.mem_bytes, AGENT_CG_MIN_MEMORY);
    f.cgroups_enable_cfs = true;
    f.cgroups_limit_swap = true;
    f.cgroups_limit_pids = 100;
    agent_iso_limits_for(&f, 0.5, 64, false, &l);
    ck_assert_uint_eq(l.cfs_quota_us, 50000);
    ck_assert_uint_eq(l.cfs_period_us, 100000);
    ck_assert(!l.swap_off);
    ck_assert_uint_eq(l.swap_bytes, 64ULL << 20);
    ck_assert_uint_eq(l.pids_max, 100);
    agent_iso_limits_for(&f, 0.001, 0, false, &l);
    ck_assert_uint_eq(l.cpu_shares, AGENT_CG_MIN_SHARES);
    ck_assert_uint_eq(l.cfs_quota_us, AGENT_CG_MIN_CFS_QUOTA_US);
    ck_assert_uint_eq(l.mem_bytes, 0);
    /* No resources at all: nothing but the pids limit. */
    agent_iso_limits_for(&f, 0, 0, false, &l);
    ck_assert_uint_eq(l.cpu_shares, 0);
    ck_assert_uint_eq(l.cfs_quota_us, 0);
}
END_TEST

START_TEST(test_parse_isolation)
{
    static const struct {
        const char *text;
        int rc;
        enum agent_isolation mode;
    } cases[] = {
        {"posix", 0, AGENT_ISOLATION_POSIX},
        {"cgroups", 0, AGENT_ISOLATION_CGROUPS},
        {"cgroups/cpu,cgroups/mem", 0, AGENT_ISOLATION_CGROUPS},
        {"posix/cpu,posix/mem", 0, AGENT_ISOLATION_POSIX},
        {"posix/cpu,cgroups/mem,disk/du", 0, AGENT_ISOLATION_CGROUPS},
        {"filesystem/posix,disk/du", 0, AGENT_ISOLATION_POSIX},
        {"", -1, 0},
        {"docker/runtime", -1, 0},
        {"cgroups/", -1, 0},
        {"cgroups/cpu,", -1, 0},
        {"Cgroups", -1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum agent_isolation m = AGENT_ISOLATION_AUTO;
        char err[256] = "";
        ck_assert_msg(agent_iso_parse_isolation(cases[i].text, &m, err,
                                                sizeof(err)) == cases[i].rc,
                      "'%s'", cases[i].text);
        if (cases[i].rc == 0)
            ck_assert_int_eq(m, cases[i].mode);
        else
            ck_assert_ptr_nonnull(strstr(err, "--isolation"));
    }
}
END_TEST

START_TEST(test_flags_check)
{
    struct agent_iso_flags f;
    struct flag_def defs[AGENT_ISO_FLAGS_ROWS];
    agent_iso_flag_defs(&f, defs);
    f.cgroups_root = "offerd";
    f.container_disk_watch_interval_ns = 1000;
    char err[256];
    ck_assert_int_eq(agent_iso_flags_check(&f, err, sizeof(err)), 0);
    ck_assert_int_eq(f.mode, AGENT_ISOLATION_AUTO);
    f.isolation = "cgroups/mem";
    ck_assert_int_eq(agent_iso_flags_check(&f, err, sizeof(err)), 0);
    ck_assert_int_eq(f.mode, AGENT_ISOLATION_CGROUPS);
    f.cgroups_root = "/sys/fs/cgroup";
    ck_assert_int_eq(agent_iso_flags_check(&f, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--cgroups_root"));
    f.cgroups_root = "a/../../b";
    ck_assert_int_eq(agent_iso_flags_check(&f, err, sizeof(err)), -1);
    f.cgroups_root = "a/b";
    f.cgroups_limit_pids = -1;
    ck_assert_int_eq(agent_iso_flags_check(&f, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--cgroups_limit_pids"));
    f.cgroups_limit_pids = 0;
    f.container_disk_watch_interval_ns = 0;
    ck_assert_int_eq(agent_iso_flags_check(&f, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--container_disk_watch_interval"));
}
END_TEST

START_TEST(test_isolator_falls_back_or_refuses)
{
    struct event_base *base = event_base_new();
    struct agent_tasks_cbs cbs = {NULL, NULL, NULL};
    struct agent_tasks *ts = agent_tasks_new(base, &cbs);
    make_tmp();
    struct agent_iso_flags f;
    struct flag_def defs[AGENT_ISO_FLAGS_ROWS];
    agent_iso_flag_defs(&f, defs);
    f.cgroups_root = "offerd";
    struct agent_cg_hier none;
    agent_cg_parse(NULL, NULL, NULL, &none);
    char err[512] = "";
    /* Not asked for: posix. */
    struct agent_iso *iso =
        agent_iso_new(base, &f, &none, tmp, ts, err, sizeof(err));
    ck_assert_ptr_nonnull(iso);
    ck_assert(!agent_iso_uses_cgroups(iso));
    agent_iso_free(iso);
    /* Asked for: no start. */
    f.mode = AGENT_ISOLATION_CGROUPS;
    iso = agent_iso_new(base, &f, &none, tmp, ts, err, sizeof(err));
    ck_assert_ptr_null(iso);
    ck_assert_ptr_nonnull(strstr(err, "--isolation=cgroups"));
    /* A (fake) v2 hierarchy: cgroups. */
    struct agent_cg_hier h;
    char *keep = xstrdup(tmp);
    fake_v2(&h);
    char *rootdir = xasprintf("%s/offerd", tmp);
    ck_assert_int_eq(mkdir(rootdir, 0755), 0);
    put(rootdir, "cgroup.subtree_control", "");
    iso = agent_iso_new(base, &f, &h, keep, ts, err, sizeof(err));
    ck_assert_msg(iso != NULL, "%s", err);
    ck_assert(agent_iso_uses_cgroups(iso));
    agent_iso_free(iso);
    fs_remove_tree(tmp);
    fs_remove_tree(keep);
    free(keep);
    free(rootdir);
    agent_tasks_free(ts);
    event_base_free(base);
}
END_TEST

/* An isolator on a fake v2 hierarchy under tmp (work_dir tmp/work) with a
 * task of mem:64;cpus:0.5 whose run id is "run-1". */
struct iso_fixture {
    struct event_base *base;
    struct agent_tasks *ts;
    struct agent_iso *iso;
    struct agent_task *t;
    char *work, *rootdir, *dir;
};

static void iso_fixture_start(struct iso_fixture *x)
{
    memset(x, 0, sizeof(*x));
    struct agent_cg_hier h;
    fake_v2(&h);
    x->rootdir = xasprintf("%s/offerd", tmp);
    ck_assert_int_eq(mkdir(x->rootdir, 0755), 0);
    put(x->rootdir, "cgroup.subtree_control", "");
    x->dir = xasprintf("%s/run-1", x->rootdir);
    x->work = xasprintf("%s/work", tmp);
    x->base = event_base_new();
    struct agent_tasks_cbs cbs = {NULL, NULL, NULL};
    x->ts = agent_tasks_new(x->base, &cbs);
    struct agent_iso_flags f;
    struct flag_def defs[AGENT_ISO_FLAGS_ROWS];
    agent_iso_flag_defs(&f, defs);
    f.cgroups_root = "offerd";
    f.mode = AGENT_ISOLATION_CGROUPS;
    char err[512];
    x->iso = agent_iso_new(x->base, &f, &h, x->work, x->ts, err, sizeof(err));
    ck_assert_msg(x->iso != NULL, "%s", err);
    static const char info[] =
        "{\"name\": \"t\", \"task_id\": {\"value\": \"t1\"}, \"agent_id\": "
        "{\"value\": \"a\"}, \"resources\": [{\"name\": \"mem\", \"type\": "
        "\"SCALAR\", \"scalar\": {\"value\": 64}}, {\"name\": \"cpus\", "
        "\"type\": \"SCALAR\", \"scalar\": {\"value\": 0.5}}]}";
    Mesos__V1__TaskInfo *ti = (Mesos__V1__TaskInfo *)jpb_from_json_text(
        &mesos__v1__task_info__descriptor, info, strlen(info), err,
        sizeof(err));
    ck_assert_msg(ti != NULL, "%s", err);
    x->t = agent_tasks_add(x->ts, "fw", ti);
    jpb_free(&ti->base);
    snprintf(x->t->run_id, sizeof(x->t->run_id), "run-1");
}

static void iso_fixture_stop(struct iso_fixture *x)
{
    agent_iso_free(x->iso);
    agent_tasks_free(x->ts);
    event_base_free(x->base);
    fs_remove_tree(tmp);
    free(x->work);
    free(x->rootdir);
    free(x->dir);
}

static bool marker_exists(const struct iso_fixture *x)
{
    char *p = xasprintf("%s/meta/cgroups/run-1", x->work);
    bool there = access(p, F_OK) == 0;
    free(p);
    return there;
}

START_TEST(test_iso_oom_is_a_memory_limitation)
{
    struct iso_fixture x;
    iso_fixture_start(&x);
    /* The task's cgroup as the kernel leaves it after an OOM kill. */
    ck_assert_int_eq(mkdir(x.dir, 0755), 0);
    put(x.dir, "memory.current", "1000\n");
    put(x.dir, "memory.peak", "67108864\n");
    put(x.dir, "memory.max", "67108864\n");
    put(x.dir, "memory.events", "oom 1\noom_kill 1\n");
    put(x.dir, "cgroup.procs", "");
    struct agent_iso_limitation lim;
    agent_iso_ended(x.iso, x.t, &lim);
    ck_assert(lim.limited);
    ck_assert_int_eq(
        lim.reason,
        MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LIMITATION_MEMORY);
    ck_assert_str_eq(lim.message,
                     "Memory limit exceeded: Requested: 64MB Maximum Used: "
                     "64MB");
    /* Without an OOM kill: no limitation. */
    put(x.dir, "memory.events", "oom 0\noom_kill 0\n");
    agent_iso_ended(x.iso, x.t, &lim);
    ck_assert(!lim.limited);
    /* No cgroup at all (posix, or gone): none either. */
    fs_remove_tree(x.dir);
    agent_iso_ended(x.iso, x.t, &lim);
    ck_assert(!lim.limited);
    iso_fixture_stop(&x);
}
END_TEST

START_TEST(test_iso_prepare_failure_leaves_nothing)
{
    struct iso_fixture x;
    iso_fixture_start(&x);
    /* The fake cgroup has no limit files: writing them fails. */
    struct agent_launch l;
    memset(&l, 0, sizeof(l));
    char err[512] = "";
    ck_assert_int_eq(agent_iso_prepare(x.iso, x.t, &l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "run-1"));
    ck_assert_uint_eq(l.ncgroup_procs, 0);
    struct stat st;
    ck_assert_int_ne(stat(x.dir, &st), 0);
    ck_assert(!marker_exists(&x));
    ck_assert_ptr_null(agent_iso_statistics(x.iso, x.t, 1.0));
    iso_fixture_stop(&x);
}
END_TEST

START_TEST(test_iso_recover_removes_own_leftovers)
{
    struct iso_fixture x;
    iso_fixture_start(&x);
    /* A cgroup this agent made for a task it no longer has, and one it
     * did not make (another agent's). */
    char e[256];
    char *mk = xasprintf("%s/meta/cgroups", x.work);
    ck_assert_int_eq(fs_mkdirs(mk, e, sizeof(e)), 0);
    put(mk, "run-1", "");
    ck_assert_int_eq(mkdir(x.dir, 0755), 0);
    char *other = xasprintf("%s/run-other", x.rootdir);
    ck_assert_int_eq(mkdir(other, 0755), 0);
    /* t1 has not run (phase NEW): its cgroup is a leftover. */
    agent_iso_recover(x.iso);
    struct stat st;
    ck_assert_int_ne(stat(x.dir, &st), 0);
    ck_assert(!marker_exists(&x));
    ck_assert_int_eq(stat(other, &st), 0);
    free(mk);
    free(other);
    iso_fixture_stop(&x);
}
END_TEST

/* ---- Disk ---- */

START_TEST(test_disk_usage_and_quota)
{
    make_tmp();
    uint64_t empty = 0, full = 0;
    ck_assert_int_eq(agent_disk_usage(tmp, &empty), 0);
    char *sub = xasprintf("%s/a/b", tmp);
    char e[256];
    ck_assert_int_eq(fs_mkdirs(sub, e, sizeof(e)), 0);
    char *p = xasprintf("%s/f", sub);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    static char block[65536];
    memset(block, 'x', sizeof(block));
    for (int i = 0; i < 32; i++)
        fwrite(block, 1, sizeof(block), f);
    fclose(f);
    /* A hard link counts once, a symlink's target not at all. */
    char *q = xasprintf("%s/link", tmp);
    ck_assert_int_eq(link(p, q), 0);
    char *s = xasprintf("%s/sym", tmp);
    ck_assert_int_eq(symlink("/usr", s), 0);
    ck_assert_int_eq(agent_disk_usage(tmp, &full), 0);
    ck_assert_uint_ge(full - empty, 2ULL << 20);
    ck_assert_uint_lt(full - empty, 3ULL << 20);
    ck_assert_int_eq(agent_disk_usage("/nonexistent/x", &full), -1);

    char msg[256];
    ck_assert(!agent_disk_over_quota(100, 0, msg, sizeof(msg)));
    ck_assert(!agent_disk_over_quota(1 << 20, 1 << 20, msg, sizeof(msg)));
    ck_assert(agent_disk_over_quota(3ULL << 20, 1ULL << 20, msg, sizeof(msg)));
    ck_assert_str_eq(msg, "Disk usage (3MB) exceeds quota (1MB)");
    fs_remove_tree(tmp);
    free(sub);
    free(p);
    free(q);
    free(s);
}
END_TEST

static Suite *cgroups_suite(void)
{
    Suite *s = suite_create("agent_cgroups");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_v1_hybrid);
    tcase_add_test(tc, test_parse_v2);
    tcase_add_test(tc, test_parse_none);
    tcase_add_test(tc, test_parse_escaped_mount_point);
    tcase_add_test(tc, test_parse_kv_and_limit);
    tcase_add_test(tc, test_format_bytes_and_weight);
    tcase_add_test(tc, test_v2_root_limits_stats);
    tcase_add_test(tc, test_open_rejects_bad_names);
    tcase_add_test(tc, test_v1_limits_stats_procs);
    tcase_add_test(tc, test_limits_for);
    tcase_add_test(tc, test_parse_isolation);
    tcase_add_test(tc, test_flags_check);
    tcase_add_test(tc, test_isolator_falls_back_or_refuses);
    tcase_add_test(tc, test_iso_oom_is_a_memory_limitation);
    tcase_add_test(tc, test_iso_prepare_failure_leaves_nothing);
    tcase_add_test(tc, test_iso_recover_removes_own_leftovers);
    tcase_add_test(tc, test_disk_usage_and_quota);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(cgroups_suite)
