/*
 * A master for the fuzz targets that drive it (fuzz_http_request.c,
 * fuzz_agent_protocol.c): started once per process on a private event_base
 * with its registry in memory, kept for every input (its state carries from
 * one input to the next, as a daemon's does), and freed at exit so that
 * leak checkers see a clean end.
 */
#ifndef OFFERD_TESTS_FUZZ_MASTER_H
#define OFFERD_TESTS_FUZZ_MASTER_H

#include "common/log.h"
#include "master/flags_master.h"
#include "master/master.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static struct event_base *fuzz_base;
static struct master *fuzz_m;
static struct master_flags fuzz_flags;

static void fuzz_master_stop(void)
{
    master_free(fuzz_m);
    master_flags_fini(&fuzz_flags);
    event_base_free(fuzz_base);
}

/* Start the master once: listening on 127.0.0.1 (a free port) when listen,
 * else with no socket. Aborts on failure (a broken harness, not a find). */
static void fuzz_master_start(bool listen)
{
    if (fuzz_m != NULL)
        return;
    signal(SIGPIPE, SIG_IGN);
    fuzz_base = event_base_new();
    master_flags_init(&fuzz_flags);
    char *argv[] = {"offerd",
                    "--ip=127.0.0.1",
                    "--port=0",
                    "--hostname=fuzz",
                    "--registry=in_memory",
                    "--logging_level=ERROR",
                    "--http_idle_timeout=1secs",
                    NULL};
    char *env[] = {NULL};
    char err[512];
    if (master_flags_parse(&fuzz_flags, (int)(sizeof(argv) / sizeof(*argv)) - 1,
                           argv, env, err, sizeof(err)) != FLAGS_OK) {
        fprintf(stderr, "fuzz: flags: %s\n", err);
        abort();
    }
    log_set_level(fuzz_flags.log_level);
    struct master_options o = {.no_listen = !listen};
    fuzz_m = master_new_with(fuzz_base, &fuzz_flags, &o, err, sizeof(err));
    if (fuzz_m == NULL) {
        fprintf(stderr, "fuzz: master: %s\n", err);
        abort();
    }
    atexit(fuzz_master_stop);
}

/* Run what is ready on the loop, n times. */
static void fuzz_master_settle(int n)
{
    for (int i = 0; i < n; i++)
        event_base_loop(fuzz_base, EVLOOP_NONBLOCK);
}

#endif
