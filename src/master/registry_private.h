/*
 * Test hooks of master/registry: fault injection for the failure paths.
 * Only tests and benchmarks include this header; the functions are always
 * compiled in and cost one branch per registry_apply().
 */
#ifndef OFFERD_MASTER_REGISTRY_PRIVATE_H
#define OFFERD_MASTER_REGISTRY_PRIVATE_H

#include <stddef.h>

struct registry;

/* Make the next n batches applied fail: each is committed alone, its
 * operations are carried out inside the transaction, which is then rolled
 * back, and its done gets ok false and the reason "injected failure". */
void registry_test_fail_next(struct registry *reg, unsigned n);

/* Make the next batch applied crash the process: its operations are carried
 * out inside the transaction and the worker thread then calls
 * _exit(REGISTRY_FAULT_EXIT_CODE) before committing. For a forked child. */
void registry_test_exit_next(struct registry *reg);

/* Make the registry's writes look synchronous to a test: block until every
 * batch applied so far is finished (committed or failed), then run their
 * done callbacks on the calling thread, in order, and repeat for batches
 * those callbacks apply, until none is left. Call it on the loop thread,
 * outside any done callback, instead of running the loop until the
 * callbacks arrive; the loop's wake-up event later finds nothing to do. */
void registry_test_flush(struct registry *reg);

#endif
