/*
 * The registry's SQLite backend: <work_dir>/registry.db holds
 *
 *     meta(name TEXT PRIMARY KEY, value INTEGER)     -- "format_version"
 *     entities(kind TEXT, key TEXT, value BLOB, crc INTEGER,
 *              PRIMARY KEY (kind, key))
 *
 * and PRAGMA application_id marks the file as offerd's. The connection runs
 * in WAL mode with synchronous=FULL, so a COMMIT returns only after the WAL
 * is fsynced, and in exclusive locking mode, so the file stays locked for
 * as long as the registry is open (a second offerd on the same work_dir is
 * refused) and no -shm file is needed. Every batch is one transaction;
 * a failed statement or COMMIT rolls it back.
 *
 * Corruption is looked for at open: SQLite refuses a file that is not a
 * database, PRAGMA integrity_check walks every page and index, and load
 * checks each value's CRC-32 (SQLite keeps no checksum of its own, so a
 * flipped byte inside a value would otherwise decode as a wrong entity or
 * not at all).
 */
#include "master/registry_sqlite.h"

#include "common/log.h"
#include "common/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "offd": PRAGMA application_id of an offerd registry. */
#define APPLICATION_ID 0x6f666664

struct store {
    sqlite3 *db;
    char *path;          /* <work_dir>/registry.db */
    sqlite3_stmt *put;   /* INSERT OR REPLACE one entity */
    sqlite3_stmt *del;   /* DELETE one entity */
    sqlite3_stmt *begin; /* BEGIN */
    sqlite3_stmt *commit;
    sqlite3_stmt *rollback;
};

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib's crc32) ---- */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ---- Opening ---- */

static bool is_corrupt(int rc)
{
    int primary = rc & 0xFF;
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

static bool is_busy(int rc)
{
    int primary = rc & 0xFF;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

/* Turn a failed open step into the message the operator sees. */
static void open_error(const struct store *st, int rc, const char *what,
                       char *err, size_t errlen)
{
    const char *msg = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
    if (is_corrupt(rc))
        snprintf(err, errlen,
                 "registry %s is corrupt (%s: %s); refusing to start: "
                 "restore it from a backup, or move it aside to start with "
                 "an empty registry",
                 st->path, what, msg);
    else if (is_busy(rc))
        snprintf(err, errlen,
                 "registry %s is in use by another process (is another "
                 "offerd running with this work_dir?)",
                 st->path);
    else
        snprintf(err, errlen, "cannot open registry %s (%s: %s)", st->path,
                 what, msg);
}

/* Run sql (no result rows wanted, or rows ignored). */
static int exec_sql(struct store *st, const char *sql, char *err, size_t errlen)
{
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        open_error(st, rc, sql, err, errlen);
        return -1;
    }
    return 0;
}

/* Run sql and copy the first column of its first row into out (empty when
 * there is no row). */
static int query_text(struct store *st, const char *sql, char *out,
                      size_t outlen, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(s, 0);
            snprintf(out, outlen, "%s", t ? (const char *)t : "");
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            if (outlen > 0)
                out[0] = '\0';
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK)
        open_error(st, rc, sql, err, errlen);
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? 0 : -1;
}

/* PRAGMA integrity_check: "ok", or the first problem it reports. */
static int check_integrity(struct store *st, char *err, size_t errlen)
{
    char first[512];
    if (query_text(st, "PRAGMA integrity_check", first, sizeof(first), err,
                   errlen) != 0)
        return -1;
    if (strcmp(first, "ok") != 0) {
        /* Keep the reason on one line. */
        for (char *p = first; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        snprintf(err, errlen,
                 "registry %s is corrupt (integrity_check: %s); refusing to "
                 "start: restore it from a backup, or move it aside to start "
                 "with an empty registry",
                 st->path, first);
        return -1;
    }
    return 0;
}

/* Create the schema in a new file, or check an existing one is an offerd
 * registry of a format this build reads. Runs inside BEGIN EXCLUSIVE. */
static int check_schema(struct store *st, char *err, size_t errlen)
{
    char buf[64];
    if (query_text(st, "PRAGMA application_id", buf, sizeof(buf), err,
                   errlen) != 0)
        return -1;
    long app = strtol(buf, NULL, 10);
    if (query_text(st, "SELECT count(*) FROM sqlite_schema", buf, sizeof(buf),
                   err, errlen) != 0)
        return -1;
    long tables = strtol(buf, NULL, 10);

    if (app == 0 && tables == 0) {
        char sql[512];
        int n = snprintf(
            sql, sizeof(sql),
            "PRAGMA application_id=%d;"
            "CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
            "CREATE TABLE entities(kind TEXT NOT NULL, key TEXT NOT NULL,"
            " value BLOB NOT NULL, crc INTEGER NOT NULL,"
            " PRIMARY KEY (kind, key));"
            "INSERT INTO meta VALUES ('format_version', %d);",
            APPLICATION_ID, REGISTRY_SQLITE_FORMAT);
        if (n < 0 || (size_t)n >= sizeof(sql)) {
            snprintf(err, errlen, "registry schema does not fit its buffer");
            return -1;
        }
        return exec_sql(st, sql, err, errlen);
    }
    if (app != APPLICATION_ID) {
        snprintf(err, errlen,
                 "%s is not an offerd registry (SQLite application_id %ld); "
                 "refusing to start",
                 st->path, app);
        return -1;
    }
    if (query_text(st, "SELECT value FROM meta WHERE name = 'format_version'",
                   buf, sizeof(buf), err, errlen) != 0)
        return -1;
    if (buf[0] == '\0') {
        snprintf(err, errlen,
                 "registry %s has no format version; refusing to start",
                 st->path);
        return -1;
    }
    long format = strtol(buf, NULL, 10);
    if (format > REGISTRY_SQLITE_FORMAT || format < 1) {
        snprintf(err, errlen,
                 "registry %s has format %ld, this offerd reads up to %d "
                 "(written by a newer offerd?); refusing to start",
                 st->path, format, REGISTRY_SQLITE_FORMAT);
        return -1;
    }
    return 0;
}

static int prepare(struct store *st, const char *sql, sqlite3_stmt **out,
                   char *err, size_t errlen)
{
    int rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out,
                                NULL);
    if (rc != SQLITE_OK) {
        open_error(st, rc, sql, err, errlen);
        return -1;
    }
    return 0;
}

/* fsync the directory so that the database file's name is durable too
 * (SQLite syncs the directory when it creates the WAL, not the main file). */
static int sync_dir(const char *dir, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "cannot sync %s: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static void store_close(void *handle)
{
    struct store *st = handle;
    if (st == NULL)
        return;
    sqlite3_finalize(st->put);
    sqlite3_finalize(st->del);
    sqlite3_finalize(st->begin);
    sqlite3_finalize(st->commit);
    sqlite3_finalize(st->rollback);
    /* The last connection checkpoints the WAL into the file and removes
     * it; a failure here loses nothing (the WAL stays and is replayed at
     * the next open). */
    int rc = sqlite3_close(st->db);
    if (rc != SQLITE_OK)
        log_warn("closing registry %s: %s", st->path, sqlite3_errstr(rc));
    free(st->path);
    free(st);
}

static void *store_open(const char *where, char *err, size_t errlen)
{
    struct stat sb;
    if (where == NULL || where[0] == '\0') {
        snprintf(err, errlen, "registry needs a work_dir");
        return NULL;
    }
    if (stat(where, &sb) != 0) {
        snprintf(err, errlen, "registry work_dir %s: %s", where,
                 strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "registry work_dir %s is not a directory", where);
        return NULL;
    }

    struct store *st = xcalloc(1, sizeof(*st));
    st->path = xasprintf("%s/%s", where, REGISTRY_SQLITE_FILE);

    int rc = sqlite3_open_v2(
        st->path, &st->db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        open_error(st, rc, "open", err, errlen);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);

    /* locking_mode must come before the first access so that WAL runs
     * without shared memory and the lock taken below is kept. */
    if (exec_sql(st, "PRAGMA locking_mode=EXCLUSIVE", err, errlen) != 0)
        goto fail;
    char mode[32];
    if (query_text(st, "PRAGMA journal_mode=WAL", mode, sizeof(mode), err,
                   errlen) != 0)
        goto fail;
    if (strcmp(mode, "wal") != 0) {
        snprintf(err, errlen, "registry %s: cannot switch to WAL mode (%s)",
                 st->path, mode);
        goto fail;
    }
    /* FULL: every commit fsyncs the WAL (NORMAL would only sync at
     * checkpoints and could lose the last commits on power loss). The WAL
     * is cut back to 16 MiB after a checkpoint so one big batch does not
     * leave a big file behind. */
    if (exec_sql(st,
                 "PRAGMA synchronous=FULL;"
                 "PRAGMA journal_size_limit=16777216",
                 err, errlen) != 0)
        goto fail;
    /* BEGIN EXCLUSIVE takes the write lock now, and exclusive locking mode
     * keeps it until close: a second process fails here, not later. */
    if (exec_sql(st, "BEGIN EXCLUSIVE", err, errlen) != 0)
        goto fail;
    if (check_integrity(st, err, errlen) != 0 ||
        check_schema(st, err, errlen) != 0) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        goto fail;
    }
    if (exec_sql(st, "COMMIT", err, errlen) != 0)
        goto fail;
    if (sync_dir(where, err, errlen) != 0)
        goto fail;

    if (prepare(st,
                "INSERT OR REPLACE INTO entities(kind, key, value, crc)"
                " VALUES (?1, ?2, ?3, ?4)",
                &st->put, err, errlen) != 0 ||
        prepare(st, "DELETE FROM entities WHERE kind = ?1 AND key = ?2",
                &st->del, err, errlen) != 0 ||
        prepare(st, "BEGIN", &st->begin, err, errlen) != 0 ||
        prepare(st, "COMMIT", &st->commit, err, errlen) != 0 ||
        prepare(st, "ROLLBACK", &st->rollback, err, errlen) != 0)
        goto fail;
    return st;

fail:
    store_close(st);
    return NULL;
}

/* ---- Loading ---- */

static int store_load(void *handle, registry_load_fn each, void *arg, char *err,
                      size_t errlen)
{
    struct store *st = handle;
    static const uint8_t empty[1];
    sqlite3_stmt *s = NULL;
    int ret = -1;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT kind, key, value, crc FROM entities ORDER BY kind, key",
        -1, &s, NULL);
    if (rc != SQLITE_OK) {
        open_error(st, rc, "load", err, errlen);
        goto out;
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(s, 0);
        const char *key = (const char *)sqlite3_column_text(s, 1);
        const uint8_t *value = sqlite3_column_blob(s, 2);
        int len = sqlite3_column_bytes(s, 2);
        int64_t crc = sqlite3_column_int64(s, 3);
        if (kind == NULL || key == NULL) {
            snprintf(err, errlen,
                     "registry %s is corrupt (an entity without kind or "
                     "key); refusing to start",
                     st->path);
            goto out;
        }
        if (len < 0 || (size_t)len > REGISTRY_MAX_ENTITY_BYTES) {
            snprintf(err, errlen,
                     "registry %s is corrupt (%s '%.64s' is %d bytes, above "
                     "the limit); refusing to start",
                     st->path, kind, key, len);
            goto out;
        }
        if (value == NULL)
            value = empty; /* a zero-length blob */
        if ((int64_t)crc32_of(value, (size_t)len) != crc) {
            snprintf(err, errlen,
                     "registry %s is corrupt (checksum mismatch in %s "
                     "'%.64s'); refusing to start: restore it from a backup, "
                     "or move it aside to start with an empty registry",
                     st->path, kind, key);
            goto out;
        }
        if (each(arg, kind, key, value, (size_t)len, err, errlen) != 0)
            goto out;
    }
    if (rc != SQLITE_DONE) {
        open_error(st, rc, "load", err, errlen);
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret;
}

/* ---- Writing ---- */

/* Step a statement that returns no rows, then reset it. */
static int step_done(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int run_op(struct store *st, const struct registry_op *op)
{
    sqlite3_stmt *s = op->type == REGISTRY_OP_PUT ? st->put : st->del;
    int rc = sqlite3_bind_text(s, 1, op->kind, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, op->key, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && op->type == REGISTRY_OP_PUT) {
        /* bind_blob with a NULL pointer would store NULL, not x''. */
        if (op->len == 0)
            rc = sqlite3_bind_zeroblob(s, 3, 0);
        else
            rc = sqlite3_bind_blob64(s, 3, op->value, op->len, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(s, 4, crc32_of(op->value, op->len));
    }
    if (rc == SQLITE_OK)
        rc = step_done(s);
    sqlite3_clear_bindings(s);
    return rc;
}

static int store_apply(void *handle, const struct registry_op *ops, size_t nops,
                       enum registry_fault fault, char *err, size_t errlen)
{
    struct store *st = handle;
    int rc = step_done(st->begin);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "registry write failed (BEGIN): %s",
                 sqlite3_errmsg(st->db));
        goto rollback;
    }
    for (size_t i = 0; i < nops; i++) {
        rc = run_op(st, &ops[i]);
        if (rc != SQLITE_OK) {
            snprintf(err, errlen, "registry write failed (%s %s '%.64s'): %s",
                     ops[i].type == REGISTRY_OP_PUT ? "put" : "delete",
                     ops[i].kind, ops[i].key, sqlite3_errmsg(st->db));
            goto rollback;
        }
    }
    if (fault == REGISTRY_FAULT_FAIL) {
        snprintf(err, errlen, "injected failure");
        goto rollback;
    }
    if (fault == REGISTRY_FAULT_EXIT)
        _exit(REGISTRY_FAULT_EXIT_CODE);
    rc = step_done(st->commit);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "registry write failed (COMMIT): %s",
                 sqlite3_errmsg(st->db));
        goto rollback;
    }
    return 0;

rollback:
    /* Some errors (disk full, I/O) end the transaction by themselves. */
    if (!sqlite3_get_autocommit(st->db)) {
        rc = step_done(st->rollback);
        if (rc != SQLITE_OK)
            log_error("registry %s: ROLLBACK failed: %s", st->path,
                      sqlite3_errmsg(st->db));
    }
    return -1;
}

const struct registry_backend registry_sqlite_backend = {
    .name = "sqlite",
    .open = store_open,
    .load = store_load,
    .apply = store_apply,
    .close = store_close,
};
