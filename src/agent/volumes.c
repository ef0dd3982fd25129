/*
 * Checkpointed resources and persistent volume directories (volumes.h).
 *
 * What keeps a crash from leaking or losing a volume directory is one
 * invariant between the two files of meta/resources/ and the directories:
 * every volume directory that exists is named by the list (checkpointed)
 * or by the removal file (removing), durably, and a volume that the list
 * names is never removed. agent_vols_apply keeps it by writing the removal
 * file first, naming every volume whose directory may exist during the
 * change and that the old or the new list leaves out, before it makes a
 * directory; agent_vols_recover reads "named by the removal file, not by
 * the list" as "remove it", and searches volumes/ for directories that
 * neither file names (left by an older offerd), which it removes too.
 */
#include "agent/volumes.h"

#include "agent/checkpoint.h"
#include "common/fs.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest container path accepted (as the master's check). */
#define CONTAINER_PATH_MAX 1024

/* One persistent volume: who it is and where its directory is. */
struct vol {
    char *role;              /* the role it is reserved to */
    char *id;                /* its persistence id */
    char *path;              /* its directory */
    Mesos__V1__Resource *pb; /* the resource as the master sent it (owned);
                                NULL for a directory found on disk that no
                                record names (never written to a file) */
};

struct agent_vols {
    char *work_dir;
    struct agent_ckpt *ck;
    agent_vols_in_use_fn in_use;
    void *arg;
    uint64_t version;
    Mesos__V1__Resource **pb; /* the list as the master sent it (owned) */
    size_t npb;
    res_list list;    /* the same, native */
    struct vol *held; /* the volumes of the list */
    size_t nheld;
    struct vol *removing; /* volumes awaiting removal (none is listed) */
    size_t nremoving;
    bool applying;       /* inside agent_vols_apply: crash points count */
    char *crash_point;   /* OFFERD_TEST_CRASH_AT's point ("any": every one),
                            NULL when unset */
    unsigned crash_nth;  /* the pass of it that kills the agent (from 1) */
    unsigned crash_seen; /* passes so far */
};

/* ---- Paths ---- */

char *agent_vol_role_dir(const char *role)
{
    char *s = xstrdup(role);
    for (char *p = s; *p != '\0'; p++)
        if (*p == '/')
            *p = ' ';
    return s;
}

bool agent_vol_id_is_safe(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > NAME_MAX || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return false;
    for (const char *p = id; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
            return false;
    }
    return true;
}

/* True when path has a ".." component. */
static bool has_dotdot(const char *path)
{
    for (const char *s = path; *s != '\0';) {
        const char *e = strchr(s, '/');
        size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
        if (len == 2 && s[0] == '.' && s[1] == '.')
            return true;
        if (e == NULL)
            break;
        s = e + 1;
    }
    return false;
}

char *agent_vol_path(const char *work_dir, const struct resource *r, char *err,
                     size_t errlen)
{
    if (!res_is_persistent_volume(r) || r->nresv == 0) {
        snprintf(err, errlen, "not a persistent volume on reserved disk");
        return NULL;
    }
    const char *id = r->disk->persistence_id;
    const char *role = res_reservation_role(r);
    char why[256];
    if (strcmp(role, "*") == 0 ||
        res_role_validate(role, why, sizeof(why)) != 0) {
        snprintf(err, errlen,
                 "volume '%.128s': role '%.128s' cannot name a "
                 "directory",
                 id, role);
        return NULL;
    }
    if (strlen(role) > NAME_MAX) {
        snprintf(err, errlen,
                 "volume '%.128s': role '%.64s...' is too long "
                 "for a directory name",
                 id, role);
        return NULL;
    }
    if (!agent_vol_id_is_safe(id)) {
        snprintf(err, errlen,
                 "persistence id '%.128s' cannot name a "
                 "directory",
                 id);
        return NULL;
    }
    char *base = NULL;
    switch (r->disk->source) {
    case RES_DISK_SOURCE_NONE:
        base = xstrdup(work_dir);
        break;
    case RES_DISK_SOURCE_PATH: {
        const char *root = r->disk->source_root;
        if (root == NULL || root[0] == '\0' || has_dotdot(root)) {
            snprintf(err, errlen,
                     "volume '%s': the PATH disk's root is "
                     "missing or climbs with '..'",
                     id);
            return NULL;
        }
        base =
            root[0] == '/' ? xstrdup(root) : xasprintf("%s/%s", work_dir, root);
        break;
    }
    default:
        snprintf(err, errlen,
                 "volume '%s': persistent volumes are only "
                 "supported on the default disk and on PATH disks",
                 id);
        return NULL;
    }
    char *enc = agent_vol_role_dir(role);
    char *path = xasprintf("%s/volumes/roles/%s/%s", base, enc, id);
    free(enc);
    free(base);
    if (strlen(path) >= PATH_MAX) {
        snprintf(err, errlen, "volume '%s': its directory path is too long",
                 id);
        free(path);
        return NULL;
    }
    return path;
}

int agent_vol_container_path(const char *p, char *out, size_t outlen, char *err,
                             size_t errlen)
{
    if (p == NULL || p[0] == '\0') {
        snprintf(err, errlen, "the volume's container path is empty");
        return -1;
    }
    if (p[0] == '/') {
        snprintf(err, errlen,
                 "the volume's container path '%.256s' is "
                 "absolute (it must be relative to the sandbox)",
                 p);
        return -1;
    }
    if (strlen(p) > CONTAINER_PATH_MAX || outlen == 0) {
        snprintf(err, errlen, "the volume's container path is too long");
        return -1;
    }
    size_t o = 0;
    for (const char *s = p; *s != '\0';) {
        const char *e = strchr(s, '/');
        size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
        if (len == 2 && s[0] == '.' && s[1] == '.') {
            snprintf(err, errlen,
                     "the volume's container path '%.256s' has a '..' "
                     "component",
                     p);
            return -1;
        }
        if (len > 0 && !(len == 1 && s[0] == '.')) {
            if (o + (o > 0) + len + 1 > outlen) {
                snprintf(err, errlen,
                         "the volume's container path is too long");
                return -1;
            }
            if (o > 0)
                out[o++] = '/';
            memcpy(out + o, s, len);
            o += len;
        }
        if (e == NULL)
            break;
        s = e + 1;
    }
    if (o == 0) {
        snprintf(err, errlen, "the volume's container path is empty");
        return -1;
    }
    out[o] = '\0';
    return 0;
}

/* Role and persistence id of a volume resource, or false when pb is not
 * one (or is not a valid resource). */
static bool volume_of_pb(const Mesos__V1__Resource *pb, struct resource *out)
{
    if (pb->disk == NULL || pb->disk->persistence == NULL)
        return false;
    char err[256];
    if (res_from_pb(pb, out, err, sizeof(err)) != 0)
        return false;
    if (!res_is_persistent_volume(out)) {
        res_clear(out);
        return false;
    }
    return true;
}

bool agent_vol_task_uses(const Mesos__V1__TaskInfo *ti, const char *role,
                         const char *id)
{
    for (size_t i = 0; i < ti->n_resources; i++) {
        struct resource r;
        if (!volume_of_pb(ti->resources[i], &r))
            continue;
        bool same = strcmp(r.disk->persistence_id, id) == 0 &&
                    strcmp(res_reservation_role(&r), role) == 0;
        res_clear(&r);
        if (same)
            return true;
    }
    return false;
}

/* ---- Totals ---- */

/* ---- The set ---- */

static void vol_clear(struct vol *x)
{
    free(x->role);
    free(x->id);
    free(x->path);
    if (x->pb != NULL)
        jpb_free(&x->pb->base);
    memset(x, 0, sizeof(*x));
}

static void vols_free(struct vol *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vol_clear(&v[i]);
    free(v);
}

/* The volumes among the n resources of pb, with their directories. All or
 * nothing: -1 with a reason in err for an undecodable resource, a volume
 * whose directory cannot be named, or two volumes with one directory. */
static int volumes_of(const char *work_dir, Mesos__V1__Resource *const *pb,
                      size_t n, struct vol **out, size_t *nout, char *err,
                      size_t errlen)
{
    struct vol *v = NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct resource r;
        char why[512];
        if (res_from_pb(pb[i], &r, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "resource %zu: %s", i, why);
            goto fail;
        }
        if (!res_is_persistent_volume(&r)) {
            res_clear(&r);
            continue;
        }
        char *path = agent_vol_path(work_dir, &r, why, sizeof(why));
        if (path == NULL) {
            snprintf(err, errlen, "resource %zu: %s", i, why);
            res_clear(&r);
            goto fail;
        }
        for (size_t j = 0; j < k; j++) {
            if (strcmp(v[j].path, path) == 0 ||
                (strcmp(v[j].id, r.disk->persistence_id) == 0 &&
                 strcmp(v[j].role, res_reservation_role(&r)) == 0)) {
                snprintf(err, errlen,
                         "resource %zu: a second volume '%s' of role '%s'", i,
                         r.disk->persistence_id, res_reservation_role(&r));
                free(path);
                res_clear(&r);
                goto fail;
            }
        }
        v = xreallocarray(v, k + 1, sizeof(*v));
        v[k].role = xstrdup(res_reservation_role(&r));
        v[k].id = xstrdup(r.disk->persistence_id);
        v[k].path = path;
        v[k].pb = (Mesos__V1__Resource *)jpb_copy(
            &mesos__v1__resource__descriptor, &pb[i]->base);
        k++;
        res_clear(&r);
    }
    *out = v;
    *nout = k;
    return 0;
fail:
    vols_free(v, k);
    return -1;
}

/* The index of the volume of x's role and id, or of x's path, in v; -1. */
static long vol_index(const struct vol *v, size_t n, const struct vol *x)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].path, x->path) == 0 ||
            (strcmp(v[i].id, x->id) == 0 && strcmp(v[i].role, x->role) == 0))
            return (long)i;
    return -1;
}

static void vol_copy(struct vol *dst, const struct vol *src)
{
    dst->role = xstrdup(src->role);
    dst->id = xstrdup(src->id);
    dst->path = xstrdup(src->path);
    dst->pb = src->pb != NULL
                  ? (Mesos__V1__Resource *)jpb_copy(
                        &mesos__v1__resource__descriptor, &src->pb->base)
                  : NULL;
}

/* True when the n volumes of a and the m of b are the same volumes. */
static bool same_vols(const struct vol *a, size_t n, const struct vol *b,
                      size_t m)
{
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++)
        if (vol_index(b, m, &a[i]) < 0)
            return false;
    return true;
}

/* ---- Crash points (tests) ----
 *
 * OFFERD_TEST_CRASH_AT=<point>[:<n>] makes the agent kill itself (SIGKILL,
 * as kill -9 would) the n-th time (default: the first) agent_vols_apply
 * passes <point>, to test what a crash there leaves (docs/agent.md, "Crash
 * points"). The points, in the order an apply passes them:
 *
 *   begin             the list is checked, nothing is written yet
 *   intent-written    the removal file names the volumes about to be made
 *   dir-made          one new volume directory made (once per directory)
 *   list-written      the new list and version are durable
 *   dir-removed       one volume directory removed (once per directory)
 *   removing-written  the removal file is final (passed even when it needed
 *                     no write)
 *
 * "any" counts every point. Unset (production), a point costs a test. */

/* Read OFFERD_TEST_CRASH_AT into v. */
static void crash_point_arm(struct agent_vols *v)
{
    const char *spec = getenv("OFFERD_TEST_CRASH_AT");
    if (spec == NULL || spec[0] == '\0')
        return;
    const char *colon = strchr(spec, ':');
    size_t len = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    unsigned long nth = 1;
    if (colon != NULL) {
        char *end;
        errno = 0;
        nth = strtoul(colon + 1, &end, 10);
        if (errno != 0 || *end != '\0' || nth == 0 || nth > 1000000)
            nth = 0;
    }
    if (len == 0 || nth == 0) {
        log_warn("OFFERD_TEST_CRASH_AT='%s' is not <point>[:<n>]: ignored",
                 spec);
        return;
    }
    v->crash_point = xstrndup(spec, len);
    v->crash_nth = (unsigned)nth;
    log_warn("OFFERD_TEST_CRASH_AT: this agent kills itself at pass %u of "
             "crash point %s (a test setting)",
             v->crash_nth, v->crash_point);
}

/* Pass crash point name (see above): SIGKILL on the armed pass. */
static void crash_point(struct agent_vols *v, const char *name)
{
    if (v->crash_point == NULL || !v->applying ||
        (strcmp(v->crash_point, "any") != 0 &&
         strcmp(v->crash_point, name) != 0))
        return;
    if (++v->crash_seen < v->crash_nth)
        return;
    log_warn("crash point %s reached (OFFERD_TEST_CRASH_AT): killing the "
             "agent",
             name);
    raise(SIGKILL);
}

struct agent_vols *agent_vols_new(const char *work_dir, struct agent_ckpt *ck,
                                  agent_vols_in_use_fn in_use, void *arg)
{
    struct agent_vols *v = xcalloc(1, sizeof(*v));
    v->work_dir = xstrdup(work_dir);
    v->ck = ck;
    v->in_use = in_use;
    v->arg = arg;
    crash_point_arm(v);
    return v;
}

static void clear_list(struct agent_vols *v)
{
    for (size_t i = 0; i < v->npb; i++)
        jpb_free(&v->pb[i]->base);
    free(v->pb);
    v->pb = NULL;
    v->npb = 0;
    res_list_clear(&v->list);
    vols_free(v->held, v->nheld);
    v->held = NULL;
    v->nheld = 0;
    v->version = 0;
}

void agent_vols_free(struct agent_vols *v)
{
    if (v == NULL)
        return;
    clear_list(v);
    vols_free(v->removing, v->nremoving);
    free(v->crash_point);
    free(v->work_dir);
    free(v);
}

/* Write the removal file: the volumes of w (n of them) that have a
 * resource (a directory found on disk without a record has none: it is
 * found again after a restart). */
static int save_removing(struct agent_vols *v, const struct vol *w, size_t n,
                         char *err, size_t errlen)
{
    Mesos__V1__Resource **pb = xcalloc(n ? n : 1, sizeof(*pb));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (w[i].pb != NULL)
            pb[k++] = w[i].pb;
    int rc = agent_ckpt_save_resources(v->ck, AGENT_CKPT_RES_REMOVING, pb, k, 0,
                                       err, errlen);
    free(pb);
    return rc;
}

/* A directory's identity: paths are compared by it, not as strings, since
 * one directory has many names ("<root>/./volumes", a root given with a
 * trailing '/', a PATH disk whose root is the work_dir). */
struct dir_id {
    dev_t dev;
    ino_t ino;
};

/* True when ids (n of them) hold the identity st gives. */
static bool has_id(const struct dir_id *ids, size_t n, const struct stat *st)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i].dev == st->st_dev && ids[i].ino == st->st_ino)
            return true;
    return false;
}

/* Queue for removal every directory <base>/volumes/roles/<role>/<id> (not a
 * link) whose identity is not among the n claimed ones. */
static void find_unclaimed_under(struct agent_vols *v, const char *base,
                                 const struct dir_id *claimed, size_t n)
{
    char *roles = xasprintf("%s/volumes/roles", base);
    DIR *d = opendir(roles);
    if (d == NULL) {
        if (errno != ENOENT)
            log_warn("checkpoint: cannot read %s: %s", roles, strerror(errno));
        free(roles);
        return;
    }
    struct dirent *rde;
    while ((rde = readdir(d)) != NULL) {
        if (strcmp(rde->d_name, ".") == 0 || strcmp(rde->d_name, "..") == 0)
            continue;
        char *rdir = xasprintf("%s/%s", roles, rde->d_name);
        struct stat st;
        DIR *r =
            lstat(rdir, &st) == 0 && S_ISDIR(st.st_mode) ? opendir(rdir) : NULL;
        struct dirent *ide;
        while (r != NULL && (ide = readdir(r)) != NULL) {
            if (strcmp(ide->d_name, ".") == 0 || strcmp(ide->d_name, "..") == 0)
                continue;
            char *path = xasprintf("%s/%s", rdir, ide->d_name);
            if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
                has_id(claimed, n, &st)) {
                free(path);
                continue;
            }
            log_warn("checkpoint: %s is the directory of no persistent volume "
                     "the checkpoint names (left by a crash, e.g. of an older "
                     "offerd): removed",
                     path);
            v->removing = xreallocarray(v->removing, v->nremoving + 1,
                                        sizeof(*v->removing));
            struct vol *x = &v->removing[v->nremoving++];
            x->role = xstrdup(rde->d_name); /* decoded: ' ' is '/' */
            for (char *p = x->role; *p != '\0'; p++)
                if (*p == ' ')
                    *p = '/';
            x->id = xstrdup(ide->d_name);
            x->path = path;
            x->pb = NULL;
        }
        if (r != NULL)
            closedir(r);
        free(rdir);
    }
    closedir(d);
    free(roles);
}

/* The directory volumes/ lies in for the volume directory path
 * (<base>/volumes/roles/<role>/<id>): <base>, newly allocated. */
static char *base_of(const char *path)
{
    char *base = xstrdup(path);
    for (int i = 0; i < 4; i++) {
        char *slash = strrchr(base, '/');
        if (slash != NULL)
            *slash = '\0';
    }
    return base;
}

/* Queue every volume directory no record names, under the agent's
 * work_dir and the roots of the PATH disks of the volumes held or awaiting
 * removal (each directory once, whatever its names). */
static void find_unclaimed(struct agent_vols *v)
{
    size_t nvols = v->nheld + v->nremoving;
    struct dir_id *claimed = xcalloc(nvols + 1, sizeof(*claimed));
    struct dir_id *scanned = xcalloc(nvols + 1, sizeof(*scanned));
    size_t nclaimed = 0, nscanned = 0;
    struct stat st;
    for (size_t i = 0; i < nvols; i++) {
        const struct vol *x =
            i < v->nheld ? &v->held[i] : &v->removing[i - v->nheld];
        if (stat(x->path, &st) == 0)
            claimed[nclaimed++] = (struct dir_id){st.st_dev, st.st_ino};
    }
    for (size_t i = 0; i <= nvols; i++) {
        char *base = i == 0 ? xstrdup(v->work_dir)
                     : i <= v->nheld
                         ? base_of(v->held[i - 1].path)
                         : base_of(v->removing[i - 1 - v->nheld].path);
        char *roles = xasprintf("%s/volumes/roles", base);
        if (stat(roles, &st) == 0 && !has_id(scanned, nscanned, &st)) {
            scanned[nscanned++] = (struct dir_id){st.st_dev, st.st_ino};
            find_unclaimed_under(v, base, claimed, nclaimed);
        }
        free(roles);
        free(base);
    }
    free(claimed);
    free(scanned);
}

size_t agent_vols_recover(struct agent_vols *v)
{
    clear_list(v);
    vols_free(v->removing, v->nremoving);
    v->removing = NULL;
    v->nremoving = 0;
    size_t problems = 0;
    char err[1024];
    Offerd__Agent__Event__CheckpointResources *cr = NULL;
    int rc = agent_ckpt_load_resources(v->ck, AGENT_CKPT_RES_CHECKPOINTED, &cr,
                                       err, sizeof(err));
    bool trusted = rc >= 0;
    bool listed = false; /* a list was read */
    if (rc < 0) {
        log_error("checkpoint: %s: taken as version 0 with no checkpointed "
                  "resources (the master sends its list again)",
                  err);
        problems++;
    } else if (rc == 1) {
        res_list l = RES_LIST_INIT;
        struct vol *held = NULL;
        size_t nheld = 0;
        if (res_list_from_pb(cr->resources, cr->n_resources, &l, err,
                             sizeof(err)) != 0 ||
            volumes_of(v->work_dir, cr->resources, cr->n_resources, &held,
                       &nheld, err, sizeof(err)) != 0) {
            log_error("checkpoint: the checkpointed resources are unusable "
                      "(%s): taken as version 0 with none",
                      err);
            problems++;
            trusted = false;
            res_list_clear(&l);
        } else {
            listed = true;
            v->version = cr->version;
            v->list = l;
            v->held = held;
            v->nheld = nheld;
            v->npb = cr->n_resources;
            v->pb = xcalloc(v->npb ? v->npb : 1, sizeof(*v->pb));
            for (size_t i = 0; i < v->npb; i++)
                v->pb[i] = (Mesos__V1__Resource *)jpb_copy(
                    &mesos__v1__resource__descriptor, &cr->resources[i]->base);
            log_info("checkpointed resources: version %llu, %zu resource(s), "
                     "%zu persistent volume(s)",
                     (unsigned long long)v->version, v->npb, v->nheld);
        }
        jpb_free(&cr->base);
    }
    if (!trusted) {
        log_warn("checkpoint: the volumes awaiting removal are not trusted "
                 "without a readable list: none is removed");
        return problems;
    }
    cr = NULL;
    rc = agent_ckpt_load_resources(v->ck, AGENT_CKPT_RES_REMOVING, &cr, err,
                                   sizeof(err));
    if (rc < 0) {
        log_error("checkpoint: %s: no volume is removed on its strength (nor "
                  "any directory that no record names)",
                  err);
        return problems + 1;
    }
    for (size_t i = 0; rc == 1 && i < cr->n_resources; i++) {
        struct vol *one = NULL;
        size_t n1 = 0;
        if (volumes_of(v->work_dir, &cr->resources[i], 1, &one, &n1, err,
                       sizeof(err)) != 0 ||
            n1 != 1) {
            log_warn("checkpoint: volume awaiting removal skipped: %s",
                     n1 != 1 ? "not a persistent volume" : err);
            problems++;
            vols_free(one, n1);
            continue;
        }
        /* Listed (again, or made by an apply whose list was written): kept.
         * Not listed: leaving the list, or made by an apply cut short
         * before its list was written: removed. */
        if (vol_index(v->held, v->nheld, &one[0]) < 0 &&
            vol_index(v->removing, v->nremoving, &one[0]) < 0) {
            v->removing = xreallocarray(v->removing, v->nremoving + 1,
                                        sizeof(*v->removing));
            v->removing[v->nremoving++] = one[0];
            free(one);
        } else {
            vols_free(one, n1);
        }
    }
    if (rc == 1)
        jpb_free(&cr->base);
    /* Without a list (a new agent, or --recover=cleanup removed it) the
     * directories found are an earlier agent's: kept for the operator. */
    if (listed)
        find_unclaimed(v);
    if (v->nremoving > 0)
        log_info("checkpoint: %zu persistent volume(s) await removal",
                 v->nremoving);
    return problems;
}

/* True when path exists (as anything). */
static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static size_t collect(struct agent_vols *v, bool save);

enum agent_vols_result agent_vols_apply(struct agent_vols *v,
                                        Mesos__V1__Resource *const *res,
                                        size_t n, uint64_t version, char *err,
                                        size_t errlen)
{
    if (version < v->version) {
        snprintf(err, errlen,
                 "version %llu is older than the version held (%llu): "
                 "ignored",
                 (unsigned long long)version, (unsigned long long)v->version);
        return AGENT_VOLS_STALE;
    }
    res_list l = RES_LIST_INIT;
    char why[1024];
    if (res_list_from_pb(res, n, &l, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "bad resources: %s", why);
        return AGENT_VOLS_FAILED;
    }
    struct vol *nv = NULL;
    size_t nnv = 0;
    if (volumes_of(v->work_dir, res, n, &nv, &nnv, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        res_list_clear(&l);
        return AGENT_VOLS_FAILED;
    }
    v->applying = true;
    crash_point(v, "begin");

    /* rm: awaiting removal once the new list is in effect: those awaiting
     * already and those leaving the list, less those (still or again)
     * listed. */
    bool *created = xcalloc(nnv ? nnv : 1, sizeof(*created));
    struct vol *rm = NULL;
    size_t nrm = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        const struct vol *src = pass == 0 ? v->removing : v->held;
        size_t nsrc = pass == 0 ? v->nremoving : v->nheld;
        for (size_t i = 0; i < nsrc; i++) {
            if (vol_index(nv, nnv, &src[i]) >= 0 ||
                vol_index(rm, nrm, &src[i]) >= 0)
                continue;
            rm = xreallocarray(rm, nrm + 1, sizeof(*rm));
            vol_copy(&rm[nrm++], &src[i]);
        }
    }
    /* The intent, written before any directory is made: rm and every
     * listed volume the old list does not hold, i.e. every volume whose
     * directory may exist while this runs and that one of the two lists
     * leaves out. After a crash before the new list is written, recovery
     * removes what it names beyond the old list: the new volumes too. */
    struct vol *intent = xcalloc(nrm + nnv + 1, sizeof(*intent));
    size_t nintent = 0;
    for (size_t i = 0; i < nrm; i++)
        vol_copy(&intent[nintent++], &rm[i]);
    for (size_t i = 0; i < nnv; i++)
        if (vol_index(v->held, v->nheld, &nv[i]) < 0)
            vol_copy(&intent[nintent++], &nv[i]);
    bool intent_written = false;
    if (!same_vols(intent, nintent, v->removing, v->nremoving)) {
        if (save_removing(v, intent, nintent, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "%s", why);
            goto fail;
        }
        intent_written = true;
    }
    crash_point(v, "intent-written");

    /* Every listed volume has its directory (one of a volume listed
     * already and found missing is made again). */
    for (size_t i = 0; i < nnv; i++) {
        bool existed = exists(nv[i].path);
        if (fs_mkdirs(nv[i].path, why, sizeof(why)) != 0) {
            snprintf(err, errlen,
                     "cannot create the directory of volume '%s' of role "
                     "'%s': %s",
                     nv[i].id, nv[i].role, why);
            goto fail;
        }
        if (existed)
            continue;
        created[i] = true;
        log_info("created the directory of persistent volume %s of role %s: "
                 "%s",
                 nv[i].id, nv[i].role, nv[i].path);
        crash_point(v, "dir-made");
    }

    if (agent_ckpt_save_resources(v->ck, AGENT_CKPT_RES_CHECKPOINTED, res, n,
                                  version, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        goto fail;
    }
    crash_point(v, "list-written");

    clear_list(v);
    v->version = version;
    v->list = l;
    v->held = nv;
    v->nheld = nnv;
    v->npb = n;
    v->pb = xcalloc(n ? n : 1, sizeof(*v->pb));
    for (size_t i = 0; i < n; i++)
        v->pb[i] = (Mesos__V1__Resource *)jpb_copy(
            &mesos__v1__resource__descriptor, &res[i]->base);
    vols_free(v->removing, v->nremoving);
    v->removing = rm;
    v->nremoving = nrm;
    free(created);
    /* The removal file still names the volumes just made: rewritten. */
    collect(v, !same_vols(intent, nintent, rm, nrm));
    vols_free(intent, nintent);
    crash_point(v, "removing-written");
    v->applying = false;
    return AGENT_VOLS_APPLIED;

fail:
    for (size_t i = 0; i < nnv; i++)
        if (created[i] && rmdir(nv[i].path) != 0)
            log_warn("cannot remove %s again: %s", nv[i].path, strerror(errno));
    /* Put the removal file back as it was. Were it left, what it names
     * beyond the old list (nothing it holds) would be removed at the next
     * start: the directories just removed, and any that existed before
     * without a record. */
    if (intent_written &&
        save_removing(v, v->removing, v->nremoving, why, sizeof(why)) != 0)
        log_error("checkpoint: %s", why);
    free(created);
    vols_free(intent, nintent);
    vols_free(rm, nrm);
    vols_free(nv, nnv);
    res_list_clear(&l);
    v->applying = false;
    return AGENT_VOLS_FAILED;
}

/* agent_vols_collect; save: write the removal file even when nothing was
 * removed (it names volumes it should not). */
static size_t collect(struct agent_vols *v, bool save)
{
    size_t removed = 0, k = 0;
    for (size_t i = 0; i < v->nremoving; i++) {
        struct vol *x = &v->removing[i];
        bool keep = false;
        if (v->in_use != NULL && v->in_use(x->role, x->id, v->arg)) {
            log_info("persistent volume %s of role %s is no longer listed but "
                     "a task uses it: removed when it ends",
                     x->id, x->role);
            keep = true;
        } else if (agent_ckpt_trash(v->ck, x->path) != 0) {
            log_error("cannot remove the directory of persistent volume %s "
                      "of role %s (%s): retried later",
                      x->id, x->role, x->path);
            keep = true;
        } else {
            log_info("removed the directory of persistent volume %s of role "
                     "%s: %s",
                     x->id, x->role, x->path);
            removed++;
            save = save || x->pb != NULL;
            crash_point(v, "dir-removed");
        }
        if (keep)
            v->removing[k++] = *x;
        else
            vol_clear(x);
    }
    v->nremoving = k;
    if (save) {
        char err[1024];
        if (save_removing(v, v->removing, v->nremoving, err, sizeof(err)) != 0)
            log_error("checkpoint: %s", err);
    }
    return removed;
}

size_t agent_vols_collect(struct agent_vols *v)
{
    return collect(v, false);
}

/* Create the directories of rel (a normalised container path) but its last
 * component under sandbox. A component that exists must be a directory,
 * not a link (say, another volume's: a volume is never made inside
 * another) nor a file. */
static int make_parents(const char *sandbox, const char *rel, char *err,
                        size_t errlen)
{
    char *path = xasprintf("%s/%s", sandbox, rel);
    char *p = path + strlen(sandbox) + 1;
    int rc = 0;
    for (char *slash = strchr(p, '/'); slash != NULL;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(
                    err, errlen,
                    "the container path '%.200s' goes through '%.200s', which "
                    "is not a directory of the sandbox",
                    rel, p);
                rc = -1;
            }
        } else if (mkdir(path, 0755) != 0) {
            snprintf(err, errlen, "cannot create %s: %s", path,
                     strerror(errno));
            rc = -1;
        }
        *slash = '/';
        if (rc != 0)
            break;
    }
    free(path);
    return rc;
}

int agent_vols_attach(const struct agent_vols *v, const Mesos__V1__TaskInfo *ti,
                      const char *sandbox, char *err, size_t errlen)
{
    for (size_t i = 0; i < ti->n_resources; i++) {
        const Mesos__V1__Resource *pb = ti->resources[i];
        if (pb->disk == NULL || pb->disk->persistence == NULL)
            continue;
        struct resource r;
        char why[512];
        if (res_from_pb(pb, &r, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "resource %zu: %s", i, why);
            return -1;
        }
        const char *id = r.disk->persistence_id;
        const char *role = res_reservation_role(&r);
        const char *dir = agent_vols_find(v, role, id);
        char rel[CONTAINER_PATH_MAX + 1];
        int rc = -1;
        if (dir == NULL) {
            snprintf(err, errlen,
                     "Persistent volume '%s' of role '%s' is not held by this "
                     "agent (never created, or destroyed)",
                     id, role);
        } else if (!r.disk->has_volume ||
                   agent_vol_container_path(r.disk->container_path, rel,
                                            sizeof(rel), why,
                                            sizeof(why)) != 0) {
            snprintf(err, errlen, "Persistent volume '%s': %s", id,
                     r.disk->has_volume ? why : "no container path");
        } else if (make_parents(sandbox, rel, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "Persistent volume '%s': %s", id, why);
        } else {
            char *link = xasprintf("%s/%s", sandbox, rel);
            if (symlink(dir, link) != 0)
                snprintf(err, errlen,
                         "Persistent volume '%s': cannot link %s to %s: %s", id,
                         link, dir,
                         errno == EEXIST ? "the container path exists already"
                                         : strerror(errno));
            else
                rc = 0;
            free(link);
        }
        res_clear(&r);
        if (rc != 0)
            return -1;
    }
    return 0;
}

uint64_t agent_vols_version(const struct agent_vols *v)
{
    return v->version;
}

const res_list *agent_vols_resources(const struct agent_vols *v)
{
    return &v->list;
}

Mesos__V1__Resource **agent_vols_resources_pb(const struct agent_vols *v,
                                              size_t *n)
{
    Mesos__V1__Resource **out = xcalloc(v->npb ? v->npb : 1, sizeof(*out));
    for (size_t i = 0; i < v->npb; i++)
        out[i] = (Mesos__V1__Resource *)jpb_copy(
            &mesos__v1__resource__descriptor, &v->pb[i]->base);
    *n = v->npb;
    return out;
}

const char *agent_vols_find(const struct agent_vols *v, const char *role,
                            const char *id)
{
    for (size_t i = 0; i < v->nheld; i++)
        if (strcmp(v->held[i].id, id) == 0 &&
            strcmp(v->held[i].role, role) == 0)
            return v->held[i].path;
    return NULL;
}

size_t agent_vols_removing(const struct agent_vols *v)
{
    return v->nremoving;
}
