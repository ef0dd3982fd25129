/*
 * offerctl: the operator command line of offerd. Everything but the
 * wiring lives in the library (offerctl.h): parse the arguments, make the
 * only event_base, find the master once (cli/master_addr.h: a zk:// leader
 * is looked up on that base before any request), run the
 * command through the network octl_io (offerctl_http.h), and return its
 * exit status (0 done, 1 refused, 2 usage, 3 unreachable).
 */
#include "cli/cli_auth.h"
#include "cli/master_addr.h"
#include "cli/offerctl.h"
#include "cli/offerctl_http.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    struct octl_args a;
    char err[512];
    if (octl_parse_args(argc, argv, getenv(OCTL_MASTER_ENV), &a, err,
                        sizeof(err)) != 0) {
        fprintf(stderr,
                OCTL_PROGRAM ": %s (see '" OCTL_PROGRAM " %s%s--help')\n", err,
                a.cmd ? octl_cmd_name(a.cmd) : "", a.cmd ? " " : "");
        return OCTL_EXIT_USAGE;
    }
    struct octl_http h = {.timeout_ms = a.timeout_ms};
    char *authorization = NULL;
    if (cli_authorization(a.principal, a.secret, a.secret_file, &authorization,
                          err, sizeof(err)) != 0) {
        fprintf(stderr, OCTL_PROGRAM ": %s\n", err);
        return OCTL_EXIT_USAGE;
    }
    h.authorization = authorization;
    /* A closed pipe (offerctl ... | head) ends the program through write
     * errors, not a signal mid-output. */
    signal(SIGPIPE, SIG_IGN);
    h.base = event_base_new();
    if (h.base == NULL) {
        fprintf(stderr, OCTL_PROGRAM ": cannot create an event loop\n");
        free(authorization);
        return OCTL_EXIT_UNREACHABLE;
    }
    if (!a.help && a.cmd != NULL) {
        int rc = cli_master_addr_find(h.base, a.master, (int)a.timeout_ms,
                                      h.master_ip, sizeof(h.master_ip),
                                      &h.master_port, err, sizeof(err));
        if (rc != 0) {
            fprintf(stderr, OCTL_PROGRAM ": %s\n", err);
            event_base_free(h.base);
            free(authorization);
            return rc == -2 ? OCTL_EXIT_UNREACHABLE : OCTL_EXIT_USAGE;
        }
    }
    struct octl_io io = {
        .request = octl_http_request,
        .sleep_ms = octl_http_sleep_ms,
        .stopped = octl_http_stopped,
        .arg = &h,
        .out = stdout,
        .err = stderr,
    };
    int rc = octl_run(&a, &io);
    octl_http_clear(&h);
    event_base_free(h.base);
    free(authorization);
    if (fflush(stdout) != 0 && rc == 0)
        rc = OCTL_EXIT_REFUSED;
    return rc;
}
