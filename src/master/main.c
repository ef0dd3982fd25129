/*
 * offerd, the master daemon: parse flags, prepare the work_dir, run the
 * master on one libevent loop, and shut down cleanly on SIGTERM or SIGINT
 * (delivered as loop events; the handlers only stop the loop).
 */
#include "common/fs.h"
#include "common/log.h"
#include "master/flags_master.h"
#include "master/master.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct event_base *base = arg;
    (void)what;
    log_info("received %s, shutting down", strsignal((int)sig));
    event_base_loopexit(base, NULL);
}

int main(int argc, char **argv)
{
    struct master_flags mf;
    char err[4608]; /* room for a path of PATH_MAX and a reason */
    int rc = 1;

    master_flags_init(&mf);
    switch (master_flags_parse(&mf, argc, argv, environ, err, sizeof(err))) {
    case FLAGS_HELP:
        master_flags_usage(&mf, stdout);
        master_flags_fini(&mf);
        return 0;
    case FLAGS_ERROR:
        fprintf(stderr, "offerd: %s\nRun 'offerd --help' for usage.\n", err);
        master_flags_fini(&mf);
        return 1;
    case FLAGS_OK:
        break;
    }
    log_set_level(mf.log_level);

    struct event_base *base = NULL;
    struct master *m = NULL;
    struct event *sigterm = NULL, *sigint = NULL;

    if (fs_mkdirs(mf.work_dir, err, sizeof(err)) != 0) {
        log_error("--work_dir: %s", err);
        goto out;
    }
    /* A peer closing a socket must not kill the daemon. */
    signal(SIGPIPE, SIG_IGN);

    base = event_base_new();
    if (base == NULL) {
        log_error("cannot create the event loop");
        goto out;
    }
    sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    sigint = evsignal_new(base, SIGINT, on_signal, base);
    if (sigterm == NULL || sigint == NULL || evsignal_add(sigterm, NULL) ||
        evsignal_add(sigint, NULL)) {
        log_error("cannot watch signals");
        goto out;
    }
    m = master_new(base, &mf, err, sizeof(err));
    if (m == NULL) {
        log_error("%s", err);
        goto out;
    }
    log_info("offerd %s listening on %s:%u (hostname %s, work_dir %s)",
             OFFERD_VERSION, mf.ip, (unsigned)master_port(m), mf.hostname,
             mf.work_dir);

    if (event_base_dispatch(base) < 0) {
        log_error("event loop failed");
        goto out;
    }
    log_info("stopped");
    rc = 0;

out:
    master_free(m);
    if (sigterm != NULL)
        event_free(sigterm);
    if (sigint != NULL)
        event_free(sigint);
    if (base != NULL)
        event_base_free(base);
    master_flags_fini(&mf);
    return rc;
}
