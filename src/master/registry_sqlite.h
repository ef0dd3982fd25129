/*
 * The registry's default backend: one SQLite database in the work_dir
 * (<work_dir>/registry.db) in WAL mode with synchronous=FULL, a table of
 * entities keyed by (kind, key) with a CRC-32 of each value, and a
 * format-version row. It is opened in exclusive locking mode, so a second
 * process (another offerd on the same work_dir) is refused at open. See
 * docs/registry.md for why SQLite and what "durable" means here.
 */
#ifndef OFFERD_MASTER_REGISTRY_SQLITE_H
#define OFFERD_MASTER_REGISTRY_SQLITE_H

#include "master/registry_backend.h"

/* The database file's name inside the work_dir. */
#define REGISTRY_SQLITE_FILE "registry.db"

/* The format this build writes and reads; a store with a higher one is
 * refused. */
#define REGISTRY_SQLITE_FORMAT 1

/* The backend table (open, load, apply, close). */
extern const struct registry_backend registry_sqlite_backend;

#endif
