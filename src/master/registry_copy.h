/*
 * Copying a registry from one store to another, for migrating a single
 * master's SQLite registry into ZooKeeper (offerd-registry copy, see
 * docs/ha-registry.md). Works on the backends directly, with no master and
 * no event loop: run it while no master uses either store.
 */
#ifndef OFFERD_MASTER_REGISTRY_COPY_H
#define OFFERD_MASTER_REGISTRY_COPY_H

#include "master/registry_backend.h"

#include <stdbool.h>
#include <stddef.h>

/* The most operations and bytes of one write of the copy. */
#define REGISTRY_COPY_BATCH_OPS   500
#define REGISTRY_COPY_BATCH_BYTES (256 * 1024)

/* Parse a store's spec: "sqlite:<work_dir>" or a zk:// URL. Sets *be and
 * *where (pointing into spec). Returns 0, or -1 with a reason. */
int registry_spec_parse(const char *spec, const struct registry_backend **be,
                        const char **where, char *err, size_t errlen);

/*
 * Copy every entity of the store at from_where into the store at to_where.
 * A destination that already holds entities is refused unless force, in
 * which case what it holds and the source lacks is deleted. The copy is
 * written in writes of at most REGISTRY_COPY_BATCH_OPS operations; if it
 * stops half-way, run it again with force. Sets *copied (OUT) to the
 * entities written. Returns 0, or -1 with a one-line reason.
 */
int registry_copy(const struct registry_backend *from_be,
                  const char *from_where, const struct registry_backend *to_be,
                  const char *to_where, bool force, size_t *copied, char *err,
                  size_t errlen);

#endif
