/*
 * Tests of the agent's checkpointed resources and persistent volumes
 * (agent/volumes.h and the resources files of agent/checkpoint.h): the
 * checkpoint file's round trip and corruption, volume directory paths and
 * unsafe roles and ids, container paths, applying lists (directories made,
 * versions, failures leaving the previous list), removal deferred while a
 * task uses a volume (and across a restart), a resized volume keeping its
 * directory and data, a crash at every step of an apply
 * (OFFERD_TEST_CRASH_AT, in a forked child) and what recovery makes of it,
 * directories that no record names, the links made in a sandbox, and the
 * agent's total resources.
 */
#include "agent/volumes.h"

#include "agent/checkpoint.h"
#include "check_main.h"
#include "common/fs.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/resources_pb.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[PATH_MAX];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/offerd-vols-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    ck_assert_int_eq(fs_remove_tree(dir), 0);
}

static bool exists(const char *rel)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* ---- Building resources ---- */

/* A disk volume of role with persistence id at container path at. */
#define VOLUME_AT(role, id, at)                                                \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64},"        \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"" role "\","           \
    "\"principal\":\"ops\"}],"                                                 \
    "\"disk\":{\"persistence\":{\"id\":\"" id "\",\"principal\":\"ops\"},"     \
    "\"volume\":{\"container_path\":\"" at "\",\"mode\":\"RW\"}}}"
#define VOLUME(role, id) VOLUME_AT(role, id, "data")
#define RESERVED_CPUS(role)                                                    \
    "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"         \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"" role "\","           \
    "\"principal\":\"ops\"}]}"

/* Parse a JSON array of Resource objects into a message array. */
struct pbs {
    Mesos__V1__Resource **v;
    size_t n;
};

static struct pbs pbs_of(const char *json)
{
    json_error_t e;
    json_t *arr = json_loads(json, 0, &e);
    ck_assert_msg(arr != NULL, "%s: %s", json, e.text);
    struct pbs p = {xcalloc(json_array_size(arr) + 1, sizeof(*p.v)), 0};
    size_t i;
    json_t *el;
    json_array_foreach(arr, i, el)
    {
        char err[256];
        p.v[p.n] = (Mesos__V1__Resource *)jpb_from_json(
            &mesos__v1__resource__descriptor, el, err, sizeof(err));
        ck_assert_msg(p.v[p.n] != NULL, "%s", err);
        p.n++;
    }
    json_decref(arr);
    return p;
}

static void pbs_free(struct pbs *p)
{
    for (size_t i = 0; i < p->n; i++)
        jpb_free(&p->v[i]->base);
    free(p->v);
}

static void resource_of(const char *json_obj, struct resource *out)
{
    char arr[2048];
    snprintf(arr, sizeof(arr), "[%s]", json_obj);
    struct pbs p = pbs_of(arr);
    char err[256];
    ck_assert_msg(res_from_pb(p.v[0], out, err, sizeof(err)) == 0, "%s", err);
    pbs_free(&p);
}

/* ---- The checkpoint file ---- */

START_TEST(test_resources_file_round_trip)
{
    char err[512];
    struct agent_ckpt *ck = agent_ckpt_new(dir, err, sizeof(err));
    ck_assert_ptr_nonnull(ck);
    Offerd__Agent__Event__CheckpointResources *cr = NULL;
    ck_assert_int_eq(agent_ckpt_load_resources(ck, AGENT_CKPT_RES_CHECKPOINTED,
                                               &cr, err, sizeof(err)),
                     0);
    struct pbs p = pbs_of("[" VOLUME("eng", "v1") "," RESERVED_CPUS("eng") "]");
    ck_assert_int_eq(agent_ckpt_save_resources(ck, AGENT_CKPT_RES_CHECKPOINTED,
                                               p.v, p.n, 7, err, sizeof(err)),
                     0);
    ck_assert(exists("meta/resources/checkpointed"));
    ck_assert(!exists("meta/resources/checkpointed.tmp"));
    ck_assert_int_eq(agent_ckpt_load_resources(ck, AGENT_CKPT_RES_CHECKPOINTED,
                                               &cr, err, sizeof(err)),
                     1);
    ck_assert_uint_eq(cr->version, 7);
    ck_assert_uint_eq(cr->n_resources, 2);
    ck_assert_str_eq(cr->resources[0]->disk->persistence->id, "v1");
    ck_assert_str_eq(cr->resources[1]->name, "cpus");
    jpb_free(&cr->base);
    /* The removal file is another file. */
    ck_assert_int_eq(agent_ckpt_load_resources(ck, AGENT_CKPT_RES_REMOVING, &cr,
                                               err, sizeof(err)),
                     0);
    /* An empty list at a new version replaces it. */
    ck_assert_int_eq(agent_ckpt_save_resources(ck, AGENT_CKPT_RES_CHECKPOINTED,
                                               NULL, 0, 8, err, sizeof(err)),
                     0);
    ck_assert_int_eq(agent_ckpt_load_resources(ck, AGENT_CKPT_RES_CHECKPOINTED,
                                               &cr, err, sizeof(err)),
                     1);
    ck_assert_uint_eq(cr->version, 8);
    ck_assert_uint_eq(cr->n_resources, 0);
    jpb_free(&cr->base);
    /* --recover=cleanup's removal takes it too. */
    ck_assert_int_eq(agent_ckpt_remove_all(ck), 0);
    ck_assert(!exists("meta/resources"));
    pbs_free(&p);
    agent_ckpt_free(ck);
}
END_TEST

START_TEST(test_resources_file_corrupt)
{
    static const struct {
        const char *bytes;
        size_t len;
    } cases[] = {
        {"", 0},                       /* truncated to nothing: no version */
        {"garbage, not protobuf", 21}, /* not a message */
        {"\x12\x05\x0a\x03", 4},       /* a record cut short */
    };
    char err[512], path[PATH_MAX + 64];
    struct agent_ckpt *ck = agent_ckpt_new(dir, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/meta/resources", dir);
    ck_assert_int_eq(fs_mkdirs(path, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/meta/resources/checkpointed", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_int_eq(fs_write_atomic(path, cases[i].bytes, cases[i].len),
                         0);
        Offerd__Agent__Event__CheckpointResources *cr = NULL;
        err[0] = '\0';
        ck_assert_int_eq(agent_ckpt_load_resources(ck,
                                                   AGENT_CKPT_RES_CHECKPOINTED,
                                                   &cr, err, sizeof(err)),
                         -1);
        ck_assert_ptr_null(cr);
        ck_assert_ptr_nonnull(strstr(err, "not a valid"));
    }
    agent_ckpt_free(ck);
}
END_TEST

/* in_use for the set: "busy" names the one volume id in use. */
static char busy[64];

static bool in_use(const char *role, const char *id, void *arg)
{
    (void)role;
    (void)arg;
    return strcmp(id, busy) == 0;
}

struct fixture {
    struct agent_ckpt *ck;
    struct agent_vols *v;
};

static void open_set(struct fixture *f)
{
    char err[256];
    f->ck = agent_ckpt_new(dir, err, sizeof(err));
    ck_assert_ptr_nonnull(f->ck);
    f->v = agent_vols_new(dir, f->ck, in_use, NULL);
    agent_vols_recover(f->v);
}

static void close_set(struct fixture *f)
{
    agent_vols_free(f->v);
    agent_ckpt_free(f->ck);
}

static enum agent_vols_result apply(struct fixture *f, const char *json,
                                    uint64_t version, char *err, size_t errlen)
{
    struct pbs p = pbs_of(json);
    enum agent_vols_result r =
        agent_vols_apply(f->v, p.v, p.n, version, err, errlen);
    pbs_free(&p);
    return r;
}

START_TEST(test_corrupt_checkpoint_is_version_zero)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 3, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    /* v1 leaves the list while in use: it awaits removal. */
    strcpy(busy, "v1");
    ck_assert_int_eq(apply(&f, "[]", 4, err, sizeof(err)), AGENT_VOLS_APPLIED);
    ck_assert_uint_eq(agent_vols_removing(f.v), 1);
    close_set(&f);
    /* The list file is damaged: version 0, nothing held, and the removal
     * file is not trusted (v1's data stays). */
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/meta/resources/checkpointed", dir);
    ck_assert_int_eq(fs_write_atomic(path, "\xff\xff", 2), 0);
    busy[0] = '\0';
    open_set(&f);
    ck_assert_uint_eq(agent_vols_version(f.v), 0);
    ck_assert(res_list_is_empty(agent_vols_resources(f.v)));
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    ck_assert_uint_eq(agent_vols_collect(f.v), 0);
    ck_assert(exists("volumes/roles/eng/v1"));
    size_t n;
    Mesos__V1__Resource **pb = agent_vols_resources_pb(f.v, &n);
    ck_assert_uint_eq(n, 0);
    free(pb);
    /* Any version applies on top of it. */
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    ck_assert_uint_eq(agent_vols_version(f.v), 1);
    close_set(&f);
}
END_TEST

/* ---- Paths ---- */

START_TEST(test_volume_paths)
{
    static const struct {
        const char *resource; /* JSON object */
        const char *path;     /* under dir; NULL: refused */
    } cases[] = {
        {VOLUME("eng", "v1"), "volumes/roles/eng/v1"},
        {VOLUME("eng/db/main", "v1"), "volumes/roles/eng db main/v1"},
        {VOLUME("eng", "..v"), "volumes/roles/eng/..v"},
        {VOLUME("eng", "a:b.c_d-e"), "volumes/roles/eng/a:b.c_d-e"},
        /* PATH disks: root relative to work_dir, or absolute. */
        {"{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"
         "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"r\"}],"
         "\"disk\":{\"source\":{\"type\":\"PATH\",\"path\":{\"root\":"
         "\"disks/d1\"}},\"persistence\":{\"id\":\"p\"},"
         "\"volume\":{\"container_path\":\"x\",\"mode\":\"RW\"}}}",
         "disks/d1/volumes/roles/r/p"},
        /* Refused: ids and roles that would not be one path component,
         * roots that climb, other disk sources. */
        {VOLUME("eng", "a/b"), NULL},
        {VOLUME("eng", "."), NULL},
        {VOLUME("eng", ".."), NULL},
        {VOLUME("eng", "my vol \u00e9"), "volumes/roles/eng/my vol \xc3\xa9"},
        {VOLUME("eng", "a\\\\b"), NULL},
        {VOLUME("eng", "tab\\t"), NULL},
        {"{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"
         "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"r\"}],"
         "\"disk\":{\"source\":{\"type\":\"PATH\",\"path\":{\"root\":"
         "\"../elsewhere\"}},\"persistence\":{\"id\":\"p\"},"
         "\"volume\":{\"container_path\":\"x\",\"mode\":\"RW\"}}}",
         NULL},
        {"{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"
         "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"r\"}],"
         "\"disk\":{\"source\":{\"type\":\"MOUNT\",\"mount\":{\"root\":"
         "\"/mnt/d\"}},\"persistence\":{\"id\":\"p\"},"
         "\"volume\":{\"container_path\":\"x\",\"mode\":\"RW\"}}}",
         NULL},
        /* Not a volume at all. */
        {RESERVED_CPUS("eng"), NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct resource r;
        resource_of(cases[i].resource, &r);
        char err[512] = "";
        char *p = agent_vol_path(dir, &r, err, sizeof(err));
        if (cases[i].path == NULL) {
            ck_assert_msg(p == NULL, "case %zu: accepted as %s", i, p);
            ck_assert_msg(err[0] != '\0', "case %zu: no reason", i);
        } else {
            char want[PATH_MAX + 256];
            snprintf(want, sizeof(want), "%s/%s", dir, cases[i].path);
            ck_assert_msg(p != NULL, "case %zu: %s", i, err);
            ck_assert_str_eq(p, want);
        }
        free(p);
        res_clear(&r);
    }
    /* An id of 256 characters is too long for a directory name. */
    char id[300], json[1200];
    memset(id, 'i', 256);
    id[256] = '\0';
    snprintf(json, sizeof(json),
             "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"r\"}],"
             "\"disk\":{\"persistence\":{\"id\":\"%s\"},\"volume\":{"
             "\"container_path\":\"x\",\"mode\":\"RW\"}}}",
             id);
    struct resource r;
    resource_of(json, &r);
    char err[512];
    ck_assert_ptr_null(agent_vol_path(dir, &r, err, sizeof(err)));
    res_clear(&r);
}
END_TEST

START_TEST(test_id_safety)
{
    static const struct {
        const char *id;
        bool safe;
    } cases[] = {
        {"db1", true},    {"a b", true},   {"caf\xc3\xa9", true},
        {"..x", true},    {"", false},     {".", false},
        {"..", false},    {"a/b", false},  {"a\\b", false},
        {"tab\t", false}, {"\x7f", false}, {"nl\n", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(agent_vol_id_is_safe(cases[i].id) == cases[i].safe,
                      "'%s'", cases[i].id);
    char id[300];
    memset(id, 'a', sizeof(id) - 1);
    id[sizeof(id) - 1] = '\0';
    ck_assert(!agent_vol_id_is_safe(id));
    id[255] = '\0';
    ck_assert(agent_vol_id_is_safe(id));
}
END_TEST

START_TEST(test_role_dir)
{
    char *s = agent_vol_role_dir("a/b/c");
    ck_assert_str_eq(s, "a b c");
    free(s);
    s = agent_vol_role_dir("web");
    ck_assert_str_eq(s, "web");
    free(s);
}
END_TEST

START_TEST(test_container_paths)
{
    static const struct {
        const char *in;
        const char *out; /* NULL: refused */
    } cases[] = {
        {"data", "data"},     {"a/b/c", "a/b/c"}, {"a//b/", "a/b"},
        {"..data", "..data"}, {"", NULL},         {"/abs", NULL},
        {"..", NULL},         {"a/../b", NULL},   {"./a", "a"},
        {"a/./b/.", "a/b"},   {".", NULL},        {"//", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[64] = "", err[256] = "";
        int rc = agent_vol_container_path(cases[i].in, out, sizeof(out), err,
                                          sizeof(err));
        if (cases[i].out == NULL) {
            ck_assert_msg(rc == -1, "'%s' accepted as '%s'", cases[i].in, out);
            ck_assert(err[0] != '\0');
        } else {
            ck_assert_msg(rc == 0, "'%s': %s", cases[i].in, err);
            ck_assert_str_eq(out, cases[i].out);
        }
    }
    char big[1100], out[2048], err[256];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(
        agent_vol_container_path(big, out, sizeof(out), err, sizeof(err)), -1);
    /* The output buffer bounds it too. */
    ck_assert_int_eq(
        agent_vol_container_path("abcdef", out, 4, err, sizeof(err)), -1);
}
END_TEST

/* ---- Applying lists ---- */

START_TEST(test_apply_creates_and_persists)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    ck_assert_uint_eq(agent_vols_version(f.v), 0);
    char err[512];
    ck_assert_int_eq(apply(&f,
                           "[" VOLUME("eng", "v1") "," VOLUME(
                               "eng/db", "v2") "," RESERVED_CPUS("eng") "]",
                           2, err, sizeof(err)),
                     AGENT_VOLS_APPLIED);
    ck_assert(exists("volumes/roles/eng/v1"));
    ck_assert(exists("volumes/roles/eng db/v2"));
    ck_assert_uint_eq(agent_vols_version(f.v), 2);
    ck_assert_uint_eq(agent_vols_resources(f.v)->n, 3);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof(want), "%s/volumes/roles/eng/v1", dir);
    ck_assert_str_eq(agent_vols_find(f.v, "eng", "v1"), want);
    ck_assert_ptr_null(agent_vols_find(f.v, "other", "v1"));
    ck_assert_ptr_null(agent_vols_find(f.v, "eng", "v3"));
    /* Durable: a new set over the same work_dir reads it all back, and
     * reports it as the master sent it. */
    close_set(&f);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_version(f.v), 2);
    size_t n;
    Mesos__V1__Resource **pb = agent_vols_resources_pb(f.v, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(pb[0]->disk->persistence->id, "v1");
    ck_assert_str_eq(pb[1]->reservations[0]->role, "eng/db");
    for (size_t i = 0; i < n; i++)
        jpb_free(&pb[i]->base);
    free(pb);
    ck_assert_ptr_nonnull(agent_vols_find(f.v, "eng/db", "v2"));
    close_set(&f);
}
END_TEST

START_TEST(test_apply_versions)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 5, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    /* Older: ignored, nothing changes. */
    ck_assert_int_eq(apply(&f, "[]", 4, err, sizeof(err)), AGENT_VOLS_STALE);
    ck_assert_ptr_nonnull(strstr(err, "older"));
    ck_assert_uint_eq(agent_vols_version(f.v), 5);
    ck_assert(exists("volumes/roles/eng/v1"));
    /* The same version again (a resend) applies. */
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 5, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    close_set(&f);
}
END_TEST

START_TEST(test_apply_refusals_keep_previous_list)
{
    static const char *const bad[] = {
        /* An unsafe persistence id. */
        "[" VOLUME("eng", "../../etc") "]",
        /* Two volumes with one id and role. */
        "[" VOLUME("eng", "v2") "," VOLUME("eng", "v2") "]",
        /* An invalid resource (persistence on unreserved disk). */
        "[{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
        "\"disk\":{\"persistence\":{\"id\":\"x\"},\"volume\":{"
        "\"container_path\":\"x\",\"mode\":\"RW\"}}}]",
    };
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_int_eq(apply(&f, bad[i], 2, err, sizeof(err)),
                         AGENT_VOLS_FAILED);
        ck_assert_msg(err[0] != '\0', "case %zu: no reason", i);
        ck_assert_uint_eq(agent_vols_version(f.v), 1);
        ck_assert_ptr_nonnull(agent_vols_find(f.v, "eng", "v1"));
        ck_assert(exists("volumes/roles/eng/v1"));
    }
    ck_assert(!exists("volumes/roles/eng/v2"));
    ck_assert(!exists("etc"));
    /* Still version 1 on disk. */
    close_set(&f);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_version(f.v), 1);
    close_set(&f);
}
END_TEST

START_TEST(test_apply_directory_failure)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512], path[PATH_MAX + 64];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    /* Role "web"'s directory cannot be made: a file is in its way. */
    snprintf(path, sizeof(path), "%s/volumes/roles/web", dir);
    ck_assert_int_eq(fs_write_atomic(path, "x", 1), 0);
    ck_assert_int_eq(apply(&f,
                           "[" VOLUME("eng", "v1") "," VOLUME(
                               "eng", "v9") "," VOLUME("web", "w1") "]",
                           2, err, sizeof(err)),
                     AGENT_VOLS_FAILED);
    ck_assert_ptr_nonnull(strstr(err, "w1"));
    /* What it made on the way is gone again; the old list holds, after a
     * restart too (the removal file was put back). */
    ck_assert(!exists("volumes/roles/eng/v9"));
    ck_assert_uint_eq(agent_vols_version(f.v), 1);
    ck_assert_ptr_null(agent_vols_find(f.v, "eng", "v9"));
    close_set(&f);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_version(f.v), 1);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    ck_assert(exists("volumes/roles/eng/v1"));
    close_set(&f);
}
END_TEST

START_TEST(test_apply_checkpoint_failure)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512], path[PATH_MAX + 64];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    /* meta/resources cannot take a new file: a directory in its way. */
    snprintf(path, sizeof(path), "%s/meta/resources/checkpointed.tmp", dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v2") "]", 2, err, sizeof(err)),
        AGENT_VOLS_FAILED);
    ck_assert_ptr_nonnull(strstr(err, "cannot write"));
    ck_assert_uint_eq(agent_vols_version(f.v), 1);
    ck_assert(exists("volumes/roles/eng/v1"));
    ck_assert(!exists("volumes/roles/eng/v2"));
    close_set(&f);
    /* The removal file written before the directory (naming v1, leaving,
     * and v2, made) was put back: after a restart nothing awaits removal,
     * and v1, which the list still holds, is kept. */
    ck_assert_int_eq(rmdir(path), 0);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_version(f.v), 1);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    agent_vols_collect(f.v);
    ck_assert(exists("volumes/roles/eng/v1"));
    close_set(&f);
}
END_TEST

START_TEST(test_dropped_volume_removed_when_unused)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512];
    ck_assert_int_eq(apply(&f,
                           "[" VOLUME("eng", "v1") "," VOLUME("eng", "v2") "]",
                           1, err, sizeof(err)),
                     AGENT_VOLS_APPLIED);
    char data[PATH_MAX + 64];
    snprintf(data, sizeof(data), "%s/volumes/roles/eng/v1/file", dir);
    ck_assert_int_eq(fs_write_atomic(data, "keep?", 5), 0);
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v2") "]", 2, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    ck_assert(!exists("volumes/roles/eng/v1"));
    ck_assert(exists("volumes/roles/eng/v2"));
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    close_set(&f);
}
END_TEST

START_TEST(test_removal_deferred_while_in_use)
{
    struct fixture f;
    open_set(&f);
    char err[512];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    strcpy(busy, "v1");
    ck_assert_int_eq(apply(&f, "[]", 2, err, sizeof(err)), AGENT_VOLS_APPLIED);
    /* Kept while the task runs; no longer held (no new task gets it). */
    ck_assert(exists("volumes/roles/eng/v1"));
    ck_assert_uint_eq(agent_vols_removing(f.v), 1);
    ck_assert_ptr_null(agent_vols_find(f.v, "eng", "v1"));
    ck_assert_uint_eq(agent_vols_collect(f.v), 0);
    ck_assert(exists("volumes/roles/eng/v1"));
    /* The agent restarts meanwhile: the pending removal survives. */
    close_set(&f);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 1);
    ck_assert_uint_eq(agent_vols_collect(f.v), 0);
    /* The task ends: the next collect removes it, for good. */
    busy[0] = '\0';
    ck_assert_uint_eq(agent_vols_collect(f.v), 1);
    ck_assert(!exists("volumes/roles/eng/v1"));
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    close_set(&f);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    close_set(&f);
}
END_TEST

START_TEST(test_relisted_volume_is_not_removed)
{
    struct fixture f;
    open_set(&f);
    char err[512];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    strcpy(busy, "v1");
    ck_assert_int_eq(apply(&f, "[]", 2, err, sizeof(err)), AGENT_VOLS_APPLIED);
    ck_assert_uint_eq(agent_vols_removing(f.v), 1);
    /* Created again (same role and id) before the task ended: it is the
     * same directory, held again, and no longer awaits removal. */
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 3, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    busy[0] = '\0';
    ck_assert_uint_eq(agent_vols_collect(f.v), 0);
    ck_assert(exists("volumes/roles/eng/v1"));
    close_set(&f);
}
END_TEST

/* ---- Crashes ---- */

/* Apply json at version in a child process over dir, with
 * OFFERD_TEST_CRASH_AT=spec. Returns true when the child killed itself at
 * the crash point, false when the apply ran to its end. */
static bool crash_apply(const char *json, uint64_t version, const char *spec)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setenv("OFFERD_TEST_CRASH_AT", spec, 1);
        struct fixture f;
        open_set(&f);
        char err[512];
        enum agent_vols_result r = apply(&f, json, version, err, sizeof(err));
        close_set(&f);
        _exit(r == AGENT_VOLS_APPLIED ? 0 : 3);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
        return true;
    }
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: the apply failed (status %d)", spec, status);
    return false;
}

/* Write a data file into the directory of volume rel (under dir). */
static void put_data(const char *rel)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/%s/data", dir, rel);
    ck_assert_int_eq(fs_write_atomic(p, "precious", 8), 0);
}

/* A volume v1 of eng resized (GROW_VOLUME, SHRINK_VOLUME) is the same
 * volume: its directory and data stay, through a restart too. */
#define SIZED_V1(size)                                                         \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" size "},"  \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","                \
    "\"principal\":\"ops\"}],"                                                 \
    "\"disk\":{\"persistence\":{\"id\":\"v1\",\"principal\":\"ops\"},"         \
    "\"volume\":{\"container_path\":\"data\",\"mode\":\"RW\"}}}"
#define RESERVED_DISK(size)                                                    \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" size "},"  \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","                \
    "\"principal\":\"ops\"}]}"

START_TEST(test_resized_volume_keeps_its_data)
{
    struct fixture f;
    open_set(&f);
    char err[512];
    ck_assert_int_eq(apply(&f, "[" SIZED_V1("64") "," RESERVED_DISK("64") "]",
                           1, err, sizeof(err)),
                     AGENT_VOLS_APPLIED);
    put_data("volumes/roles/eng/v1");
    static const char *const lists[] = {
        "[" SIZED_V1("128") "]",                        /* grown */
        "[" SIZED_V1("32") "," RESERVED_DISK("96") "]", /* shrunk */
    };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        ck_assert_int_eq(apply(&f, lists[i], i + 2, err, sizeof(err)),
                         AGENT_VOLS_APPLIED);
        ck_assert_uint_eq(agent_vols_removing(f.v), 0);
        ck_assert_uint_eq(agent_vols_collect(f.v), 0);
        ck_assert(exists("volumes/roles/eng/v1/data"));
        /* And after a restart. */
        close_set(&f);
        open_set(&f);
        ck_assert_uint_eq(agent_vols_version(f.v), i + 2);
        ck_assert_uint_eq(agent_vols_removing(f.v), 0);
        ck_assert_uint_eq(agent_vols_collect(f.v), 0);
        ck_assert_ptr_nonnull(agent_vols_find(f.v, "eng", "v1"));
        ck_assert(exists("volumes/roles/eng/v1/data"));
    }
    close_set(&f);
}
END_TEST

/* Assert the recovery rule after a restart (recover, then collect): every
 * directory volumes/roles/<role>/<id> is a volume the list holds, or the
 * one a task uses (busy_id); every volume the list holds has its
 * directory. Returns how many directories there are. */
static size_t check_dirs(const struct fixture *f, const char *busy_id,
                         const char *what)
{
    char roles[PATH_MAX + 64];
    snprintf(roles, sizeof(roles), "%s/volumes/roles", dir);
    size_t found = 0;
    DIR *d = opendir(roles);
    struct dirent *rde;
    while (d != NULL && (rde = readdir(d)) != NULL) {
        if (rde->d_name[0] == '.')
            continue;
        char rdir[PATH_MAX + 512];
        snprintf(rdir, sizeof(rdir), "%s/%s", roles, rde->d_name);
        DIR *r = opendir(rdir);
        ck_assert_ptr_nonnull(r);
        struct dirent *ide;
        while ((ide = readdir(r)) != NULL) {
            if (strcmp(ide->d_name, ".") == 0 || strcmp(ide->d_name, "..") == 0)
                continue;
            char *role = agent_vol_role_dir(rde->d_name);
            for (char *c = role; *c != '\0'; c++)
                if (*c == ' ')
                    *c = '/';
            ck_assert_msg(agent_vols_find(f->v, role, ide->d_name) != NULL ||
                              strcmp(ide->d_name, busy_id) == 0,
                          "%s: volumes/roles/%s/%s is left behind", what,
                          rde->d_name, ide->d_name);
            free(role);
            found++;
        }
        closedir(r);
    }
    if (d != NULL)
        closedir(d);
    size_t n;
    Mesos__V1__Resource **pb = agent_vols_resources_pb(f->v, &n);
    for (size_t i = 0; i < n; i++) {
        if (pb[i]->disk != NULL && pb[i]->disk->persistence != NULL) {
            const char *id = pb[i]->disk->persistence->id;
            const char *role =
                pb[i]->reservations[pb[i]->n_reservations - 1]->role;
            const char *path = agent_vols_find(f->v, role, id);
            struct stat st;
            ck_assert_msg(path != NULL && stat(path, &st) == 0 &&
                              S_ISDIR(st.st_mode),
                          "%s: listed volume %s has no directory", what, id);
        }
        jpb_free(&pb[i]->base);
    }
    free(pb);
    return found;
}

/* One change cut short at each of its crash points in turn. */
static const struct crash_case {
    const char *name;
    const char *before; /* the list at version 1; NULL: none ever applied */
    const char *then;   /* the list at version 2; NULL: none */
    const char *change; /* the list at version 5, cut short */
    const char *after;  /* the master's list at version 6, after restart */
    const char *busy;   /* the id of a volume a task uses ("": none) */
    size_t points;      /* crash points the change passes */
} crash_cases[] = {
    /* The issue: v is made, the agent dies, v is destroyed meanwhile. */
    {"create", "[" VOLUME("eng", "keep") "]", NULL,
     "[" VOLUME("eng", "keep") "," VOLUME("eng", "v") "]",
     "[" VOLUME("eng", "keep") "]", "", 5},
    /* The first list ever, two volumes made. */
    {"first", NULL, NULL, "[" VOLUME("eng", "a") "," VOLUME("eng/db", "b") "]",
     "[]", "", 6},
    {"destroy", "[" VOLUME("eng", "keep") "," VOLUME("eng", "v") "]", NULL,
     "[" VOLUME("eng", "keep") "]", "[" VOLUME("eng", "keep") "]", "", 5},
    /* One made and one removed by the same list. */
    {"replace", "[" VOLUME("eng", "keep") "," VOLUME("eng", "old") "]", NULL,
     "[" VOLUME("eng", "keep") "," VOLUME("eng", "new") "]",
     "[" VOLUME("eng", "keep") "]", "", 6},
    /* Destroyed while a task uses it: kept until the task ends. */
    {"destroy-used", "[" VOLUME("eng", "keep") "," VOLUME("eng", "v") "]", NULL,
     "[" VOLUME("eng", "keep") "]", "[" VOLUME("eng", "keep") "]", "v", 4},
    /* Created again while its removal waits for a task. */
    {"recreate-used", "[" VOLUME("eng", "keep") "," VOLUME("eng", "v") "]",
     "[" VOLUME("eng", "keep") "]",
     "[" VOLUME("eng", "keep") "," VOLUME("eng", "v") "]",
     "[" VOLUME("eng", "keep") "]", "v", 4},
};

/* True when rel (under dir) is missing or an empty directory. */
static bool empty_or_missing(const char *rel)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    DIR *d = opendir(p);
    if (d == NULL)
        return true;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n == 0;
}

START_TEST(test_crash_at_every_step)
{
    const struct crash_case *c = &crash_cases[_i];
    uint64_t old_version = c->then != NULL ? 2 : c->before != NULL ? 1 : 0;
    size_t crashed = 0;
    for (unsigned k = 1;; k++) {
        char spec[32], what[96];
        snprintf(spec, sizeof(spec), "any:%u", k);
        snprintf(what, sizeof(what), "%s, crash at point %u", c->name, k);
        ck_assert_int_eq(fs_remove_tree(dir), 0);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        struct fixture f;
        char err[512];
        snprintf(busy, sizeof(busy), "%s", c->busy);
        if (c->before != NULL) {
            open_set(&f);
            ck_assert_int_eq(apply(&f, c->before, 1, err, sizeof(err)),
                             AGENT_VOLS_APPLIED);
            if (c->then != NULL)
                ck_assert_int_eq(apply(&f, c->then, 2, err, sizeof(err)),
                                 AGENT_VOLS_APPLIED);
            close_set(&f);
            put_data("volumes/roles/eng/keep");
        }
        if (!crash_apply(c->change, 5, spec))
            break;
        crashed++;
        /* The agent restarts: recovery, then the removals. The list in
         * effect is the old one or the new one, and the directories are
         * exactly its volumes' (and the one in use). */
        open_set(&f);
        uint64_t ver = agent_vols_version(f.v);
        ck_assert_msg(ver == old_version || ver == 5, "%s: version %llu", what,
                      (unsigned long long)ver);
        agent_vols_collect(f.v);
        check_dirs(&f, c->busy, what);
        /* The master's newer list (the volume destroyed meanwhile). */
        ck_assert_int_eq(apply(&f, c->after, 6, err, sizeof(err)),
                         AGENT_VOLS_APPLIED);
        check_dirs(&f, c->busy, what);
        close_set(&f);
        /* Nothing listed was removed, and after the next restart (a task
         * that used a volume has ended) nothing else is left. */
        if (c->before != NULL)
            ck_assert_msg(exists("volumes/roles/eng/keep/data"),
                          "%s: keep's data is gone", what);
        busy[0] = '\0';
        open_set(&f);
        ck_assert_uint_eq(agent_vols_version(f.v), 6);
        agent_vols_collect(f.v);
        size_t left = check_dirs(&f, "", what);
        ck_assert_uint_eq(left, c->before != NULL ? 1 : 0);
        ck_assert_uint_eq(agent_vols_removing(f.v), 0);
        close_set(&f);
        open_set(&f);
        ck_assert_uint_eq(agent_vols_removing(f.v), 0);
        close_set(&f);
        ck_assert_msg(empty_or_missing("meta/trash"), "%s: trash left", what);
        ck_assert_msg(k < 50, "%s: no end of crash points", c->name);
    }
    ck_assert_msg(crashed == c->points, "%s: %zu crash points, %zu expected",
                  c->name, crashed, c->points);
}
END_TEST

START_TEST(test_crash_points_by_name)
{
    static const struct {
        const char *spec;
        bool crashes;
        uint64_t version; /* after the restart */
    } cases[] = {
        {"begin", true, 1},
        {"intent-written", true, 1},
        {"dir-made", true, 1},
        {"list-written", true, 2},
        {"dir-removed", false, 2}, /* nothing is removed */
        {"removing-written", true, 2},
        {"list-written:2", false, 2}, /* passed once only */
        {"no-such-point", false, 2},
        {"dir-made:x", false, 2}, /* not <point>[:<n>]: ignored */
        {":3", false, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_int_eq(fs_remove_tree(dir), 0);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        busy[0] = '\0';
        struct fixture f;
        char err[512];
        open_set(&f);
        ck_assert_int_eq(apply(&f, "[]", 1, err, sizeof(err)),
                         AGENT_VOLS_APPLIED);
        close_set(&f);
        ck_assert_msg(crash_apply("[" VOLUME("eng", "v") "]", 2,
                                  cases[i].spec) == cases[i].crashes,
                      "%s", cases[i].spec);
        open_set(&f);
        ck_assert_msg(agent_vols_version(f.v) == cases[i].version, "%s",
                      cases[i].spec);
        agent_vols_collect(f.v);
        /* The directory exists exactly when the list holds it. */
        ck_assert_msg(exists("volumes/roles/eng/v") == (cases[i].version == 2),
                      "%s", cases[i].spec);
        close_set(&f);
    }
}
END_TEST

/* ---- Directories no record names ---- */

#define PATH_VOLUME(root, role, id)                                            \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"         \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"" role "\"}],"         \
    "\"disk\":{\"source\":{\"type\":\"PATH\",\"path\":{\"root\":\"" root       \
    "\"}},\"persistence\":{\"id\":\"" id "\"},"                                \
    "\"volume\":{\"container_path\":\"x\",\"mode\":\"RW\"}}}"

/* Make directory rel under dir (and its parents) holding a data file. */
static void make_stray(const char *rel)
{
    char p[PATH_MAX + 256], err[256];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    put_data(rel);
}

START_TEST(test_unclaimed_dirs_removed)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512], p[PATH_MAX + 64];
    ck_assert_int_eq(apply(&f,
                           "[" VOLUME("eng", "keep") "," PATH_VOLUME(
                               "disks/d1", "r", "p") "]",
                           1, err, sizeof(err)),
                     AGENT_VOLS_APPLIED);
    close_set(&f);
    put_data("volumes/roles/eng/keep");
    put_data("disks/d1/volumes/roles/r/p");
    /* Left by a crash of an older offerd: on the default disk, under a
     * hierarchical role, on a PATH disk the list names. */
    make_stray("volumes/roles/eng/ghost");
    make_stray("volumes/roles/eng db/ghost2");
    make_stray("disks/d1/volumes/roles/r/ghost3");
    /* Not volume directories: a file, a link, a directory elsewhere. */
    snprintf(p, sizeof(p), "%s/volumes/roles/eng/file", dir);
    ck_assert_int_eq(fs_write_atomic(p, "x", 1), 0);
    snprintf(p, sizeof(p), "%s/volumes/roles/eng/link", dir);
    ck_assert_int_eq(symlink(dir, p), 0);
    make_stray("volumes/other/x");

    strcpy(busy, "ghost2"); /* a task would hold it: it waits */
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 3);
    ck_assert_uint_eq(agent_vols_collect(f.v), 2);
    ck_assert(!exists("volumes/roles/eng/ghost"));
    ck_assert(!exists("disks/d1/volumes/roles/r/ghost3"));
    ck_assert(exists("volumes/roles/eng db/ghost2"));
    busy[0] = '\0';
    ck_assert_uint_eq(agent_vols_collect(f.v), 1);
    ck_assert(!exists("volumes/roles/eng db/ghost2"));
    ck_assert(exists("volumes/roles/eng/keep/data"));
    ck_assert(exists("disks/d1/volumes/roles/r/p/data"));
    ck_assert(exists("volumes/roles/eng/file"));
    ck_assert(exists("volumes/roles/eng/link"));
    ck_assert(exists("volumes/other/x/data"));
    /* Removed through trash/, which is left empty. */
    ck_assert(empty_or_missing("meta/trash"));
    /* A volume created with the id of one of them starts empty. */
    ck_assert_int_eq(
        apply(&f,
              "[" VOLUME("eng", "keep") "," VOLUME(
                  "eng", "ghost") "," PATH_VOLUME("disks/d1", "r", "p") "]",
              2, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    ck_assert(exists("volumes/roles/eng/ghost"));
    ck_assert(!exists("volumes/roles/eng/ghost/data"));
    close_set(&f);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    close_set(&f);
}
END_TEST

START_TEST(test_unclaimed_dirs_by_identity)
{
    /* One directory, several names: a PATH disk whose root is the work_dir
     * ("." and the absolute path with a trailing '/'). Each volume is
     * claimed by its directory, not by the spelling of its path. */
    char q[PATH_MAX + 512], json[PATH_MAX + 2048], err[512];
    snprintf(q, sizeof(q),
             "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"r\"}],"
             "\"disk\":{\"source\":{\"type\":\"PATH\",\"path\":{\"root\":"
             "\"%s/\"}},\"persistence\":{\"id\":\"q\"},"
             "\"volume\":{\"container_path\":\"x\",\"mode\":\"RW\"}}}",
             dir);
    snprintf(json, sizeof(json), "[%s,%s,%s]", VOLUME("eng", "keep"),
             PATH_VOLUME(".", "eng", "p"), q);
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    ck_assert_int_eq(apply(&f, json, 1, err, sizeof(err)), AGENT_VOLS_APPLIED);
    close_set(&f);
    put_data("volumes/roles/eng/keep");
    put_data("volumes/roles/eng/p");
    put_data("volumes/roles/r/q");
    make_stray("volumes/roles/r/ghost");
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 1);
    ck_assert_uint_eq(agent_vols_collect(f.v), 1);
    close_set(&f);
    ck_assert(exists("volumes/roles/eng/keep/data"));
    ck_assert(exists("volumes/roles/eng/p/data"));
    ck_assert(exists("volumes/roles/r/q/data"));
    ck_assert(!exists("volumes/roles/r/ghost"));
}
END_TEST

START_TEST(test_unclaimed_dirs_kept_without_records)
{
    struct fixture f;
    busy[0] = '\0';
    /* No list was ever written (a new agent, or --recover=cleanup removed
     * the checkpoint): the directories are an earlier agent's. */
    make_stray("volumes/roles/eng/old");
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    ck_assert_uint_eq(agent_vols_collect(f.v), 0);
    close_set(&f);
    ck_assert(exists("volumes/roles/eng/old/data"));
    /* A list, but an unreadable removal file: nothing is removed. */
    open_set(&f);
    char err[512], p[PATH_MAX + 64];
    ck_assert_int_eq(apply(&f, "[]", 1, err, sizeof(err)), AGENT_VOLS_APPLIED);
    close_set(&f);
    snprintf(p, sizeof(p), "%s/meta/resources/removing", dir);
    ck_assert_int_eq(fs_write_atomic(p, "\xff\xff", 2), 0);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_removing(f.v), 0);
    ck_assert_uint_eq(agent_vols_collect(f.v), 0);
    close_set(&f);
    ck_assert(exists("volumes/roles/eng/old/data"));
    /* Both readable: it goes. */
    ck_assert_int_eq(unlink(p), 0);
    open_set(&f);
    ck_assert_uint_eq(agent_vols_collect(f.v), 1);
    close_set(&f);
    ck_assert(!exists("volumes/roles/eng/old"));
}
END_TEST

/* ---- Tasks ---- */

/* A TaskInfo whose resources are the JSON array given (owned by p). */
static Mesos__V1__TaskInfo *task_with(struct pbs *p, const char *json)
{
    *p = pbs_of(json);
    Mesos__V1__TaskInfo *ti = xmalloc(sizeof(*ti));
    mesos__v1__task_info__init(ti);
    ti->resources = p->v;
    ti->n_resources = p->n;
    return ti;
}

START_TEST(test_task_uses)
{
    struct pbs p;
    Mesos__V1__TaskInfo *ti =
        task_with(&p, "[" RESERVED_CPUS("eng") "," VOLUME("eng/db", "v1") "]");
    ck_assert(agent_vol_task_uses(ti, "eng/db", "v1"));
    ck_assert(!agent_vol_task_uses(ti, "eng", "v1"));
    ck_assert(!agent_vol_task_uses(ti, "eng/db", "v2"));
    free(ti);
    pbs_free(&p);
}
END_TEST

START_TEST(test_attach_links_volumes)
{
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512], sandbox[PATH_MAX + 64];
    ck_assert_int_eq(apply(&f,
                           "[" VOLUME("eng", "v1") "," VOLUME("eng", "v2") "]",
                           1, err, sizeof(err)),
                     AGENT_VOLS_APPLIED);
    snprintf(sandbox, sizeof(sandbox), "%s/sandbox", dir);
    ck_assert_int_eq(mkdir(sandbox, 0755), 0);
    /* v2 at a nested container path, made under the sandbox. */
    struct pbs p;
    Mesos__V1__TaskInfo *ti = task_with(
        &p, "[" VOLUME("eng", "v1") "," VOLUME_AT("eng", "v2", "d/x/") "]");
    ck_assert_msg(agent_vols_attach(f.v, ti, sandbox, err, sizeof(err)) == 0,
                  "%s", err);
    char link[PATH_MAX + 128], target[PATH_MAX + 1];
    snprintf(link, sizeof(link), "%s/data", sandbox);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    ck_assert_str_eq(target, agent_vols_find(f.v, "eng", "v1"));
    snprintf(link, sizeof(link), "%s/d/x", sandbox);
    n = readlink(link, target, sizeof(target) - 1);
    ck_assert_int_gt(n, 0);
    /* Written through the link, read from the volume. */
    snprintf(link, sizeof(link), "%s/data/f", sandbox);
    ck_assert_int_eq(fs_write_atomic(link, "hi", 2), 0);
    ck_assert(exists("volumes/roles/eng/v1/f"));
    /* Again into the same sandbox: the container path exists. */
    ck_assert_int_eq(agent_vols_attach(f.v, ti, sandbox, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "exists"));
    free(ti);
    pbs_free(&p);
    close_set(&f);
}
END_TEST

START_TEST(test_attach_refusals)
{
    static const struct {
        const char *json;
        const char *reason;
    } cases[] = {
        /* A volume this agent does not hold. */
        {"[" VOLUME("eng", "nope") "]", "not held"},
        /* Held under another role only. */
        {"[" VOLUME("web", "v1") "]", "not held"},
        /* Two volumes at one container path. */
        {"[" VOLUME("eng", "v1") "," VOLUME("eng", "v1") "]", "exists"},
        /* A bad container path. */
        {"[" VOLUME_AT("eng", "v1", "../up") "]", "'..'"},
    };
    struct fixture f;
    busy[0] = '\0';
    open_set(&f);
    char err[512];
    ck_assert_int_eq(
        apply(&f, "[" VOLUME("eng", "v1") "]", 1, err, sizeof(err)),
        AGENT_VOLS_APPLIED);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char sandbox[PATH_MAX + 64];
        snprintf(sandbox, sizeof(sandbox), "%s/sb%zu", dir, i);
        ck_assert_int_eq(mkdir(sandbox, 0755), 0);
        struct pbs p;
        Mesos__V1__TaskInfo *ti = task_with(&p, cases[i].json);
        err[0] = '\0';
        ck_assert_int_eq(agent_vols_attach(f.v, ti, sandbox, err, sizeof(err)),
                         -1);
        ck_assert_msg(strstr(err, cases[i].reason) != NULL, "case %zu: %s", i,
                      err);
        free(ti);
        pbs_free(&p);
    }
    /* A container path through a link into another volume. */
    char sandbox[PATH_MAX + 64];
    snprintf(sandbox, sizeof(sandbox), "%s/sbx", dir);
    ck_assert_int_eq(mkdir(sandbox, 0755), 0);
    char link[PATH_MAX + 128];
    snprintf(link, sizeof(link), "%s/data", sandbox);
    ck_assert_int_eq(symlink(dir, link), 0);
    struct pbs p;
    Mesos__V1__TaskInfo *ti =
        task_with(&p, "[" VOLUME_AT("eng", "v1", "data/x") "]");
    ck_assert_int_eq(agent_vols_attach(f.v, ti, sandbox, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a directory"));
    free(ti);
    pbs_free(&p);
    close_set(&f);
}
END_TEST

/* ---- Totals ---- */

START_TEST(test_total_of)
{
    res_list stat = RES_LIST_INIT, ckpt = RES_LIST_INIT, total = RES_LIST_INIT;
    char err[256];
    ck_assert_int_eq(res_list_parse("cpus:4;mem:1024;disk:1000", NULL, &stat,
                                    err, sizeof(err)),
                     0);
    struct pbs p = pbs_of("[" VOLUME("eng", "v1") "," RESERVED_CPUS("eng") "]");
    ck_assert_int_eq(res_list_from_pb(p.v, p.n, &ckpt, err, sizeof(err)), 0);
    ck_assert_int_eq(res_agent_total(&stat, &ckpt, &total, err, sizeof(err)),
                     0);
    /* The sums are the static ones; the volume and reservation replace
     * what they were made of. */
    ck_assert_int_eq(res_list_scalar(&total, "cpus"), 4 * RES_SCALE);
    ck_assert_int_eq(res_list_scalar(&total, "disk"), 1000 * RES_SCALE);
    ck_assert(res_list_contains(&total, &ckpt));
    res_list unres = RES_LIST_INIT;
    for (uint32_t i = 0; i < total.n; i++)
        if (total.v[i].nresv == 0)
            res_list_add(&unres, &total.v[i]);
    ck_assert_int_eq(res_list_scalar(&unres, "cpus"), 3 * RES_SCALE);
    ck_assert_int_eq(res_list_scalar(&unres, "disk"), 936 * RES_SCALE);
    res_list_clear(&unres);
    /* More than the agent has: the static resources, and an error. */
    res_list small = RES_LIST_INIT;
    ck_assert_int_eq(
        res_list_parse("cpus:0.5;disk:10", NULL, &small, err, sizeof(err)), 0);
    ck_assert_int_eq(res_agent_total(&small, &ckpt, &total, err, sizeof(err)),
                     -1);
    ck_assert(res_list_equal(&total, &small));
    res_list_clear(&small);
    res_list_clear(&stat);
    res_list_clear(&ckpt);
    res_list_clear(&total);
    pbs_free(&p);
}
END_TEST

static Suite *agent_volumes_suite(void)
{
    Suite *s = suite_create("agent_volumes");
    TCase *tc = tcase_create("volumes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_resources_file_round_trip);
    tcase_add_test(tc, test_resources_file_corrupt);
    tcase_add_test(tc, test_corrupt_checkpoint_is_version_zero);
    tcase_add_test(tc, test_volume_paths);
    tcase_add_test(tc, test_id_safety);
    tcase_add_test(tc, test_role_dir);
    tcase_add_test(tc, test_container_paths);
    tcase_add_test(tc, test_apply_creates_and_persists);
    tcase_add_test(tc, test_apply_versions);
    tcase_add_test(tc, test_apply_refusals_keep_previous_list);
    tcase_add_test(tc, test_apply_directory_failure);
    tcase_add_test(tc, test_apply_checkpoint_failure);
    tcase_add_test(tc, test_dropped_volume_removed_when_unused);
    tcase_add_test(tc, test_removal_deferred_while_in_use);
    tcase_add_test(tc, test_relisted_volume_is_not_removed);
    tcase_add_test(tc, test_resized_volume_keeps_its_data);
    tcase_add_loop_test(tc, test_crash_at_every_step, 0,
                        (int)(sizeof(crash_cases) / sizeof(crash_cases[0])));
    tcase_add_test(tc, test_crash_points_by_name);
    tcase_add_test(tc, test_unclaimed_dirs_removed);
    tcase_add_test(tc, test_unclaimed_dirs_by_identity);
    tcase_add_test(tc, test_unclaimed_dirs_kept_without_records);
    tcase_add_test(tc, test_task_uses);
    tcase_add_test(tc, test_attach_links_volumes);
    tcase_add_test(tc, test_attach_refusals);
    tcase_add_test(tc, test_total_of);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_volumes_suite)
