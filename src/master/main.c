/*
 * offerd, the master daemon: parse flags, prepare the work_dir, run the
 * master on one libevent loop, and shut down cleanly on SIGTERM or SIGINT
 * (delivered as loop events by common/mainloop; nothing runs in a signal
 * handler).
 */
#include "common/flags.h"
#include "common/fs.h"
#include "common/http.h"
#include "common/log.h"
#include "common/mainloop.h"
#include "master/files.h"
#include "master/flags_master.h"
#include "master/ha.h"
#include "master/master.h"

#include <stdio.h>

extern char **environ;

int main(int argc, char **argv)
{
    struct master_flags mf;
    char err[4608]; /* room for a path of PATH_MAX and a reason */
    int rc = 1;

    master_flags_init(&mf);
    enum flags_result fr =
        master_flags_parse(&mf, argc, argv, environ, err, sizeof(err));
    if (fr != FLAGS_OK) {
        rc = flags_report(master_flags_object(&mf), fr, err);
        master_flags_fini(&mf);
        return rc;
    }
    log_set_level(mf.log_level);
    tls_flags_export(master_flags_object(&mf), &mf.tls);

    struct mainloop *ml = NULL;
    struct master *m = NULL;
    struct ha *ha = NULL;
    if (fs_mkdirs(mf.work_dir, err, sizeof(err)) != 0) {
        log_error("--work_dir: %s", err);
        goto out;
    }
    char log_path[4096];
    if (master_log_path(&mf, log_path, sizeof(log_path))) {
        if (fs_mkdirs(mf.log_dir, err, sizeof(err)) != 0 ||
            log_open_file(log_path, err, sizeof(err)) != 0) {
            log_error("--log_dir: %s", err);
            goto out;
        }
    } else if (mf.log_dir != NULL && mf.log_dir[0] != '\0') {
        log_error("--log_dir: path too long");
        goto out;
    }
    if (mf.max_connections == 0) {
        uint64_t fds = 0;
        mf.max_connections = (int64_t)http_max_conns_for_fd_limit(&fds);
        log_info("file descriptor limit %llu: accepting up to %lld HTTP "
                 "connections",
                 (unsigned long long)fds, (long long)mf.max_connections);
    }
    ml = mainloop_new("shutting down");
    if (ml == NULL)
        goto out;
    if (mf.zk != NULL && mf.zk[0] != '\0') {
        /* Leader election (master/ha.h): a standby until elected. */
        ha = ha_new(mainloop_base(ml), &mf, NULL, err, sizeof(err));
        if (ha == NULL) {
            log_error("%s", err);
            goto out;
        }
    } else {
        m = master_new(mainloop_base(ml), &mf, err, sizeof(err));
        if (m == NULL) {
            log_error("%s", err);
            goto out;
        }
    }
    log_info("offerd %s listening on %s:%u (hostname %s, work_dir %s)",
             OFFERD_VERSION, mf.ip,
             (unsigned)(ha != NULL ? ha_port(ha) : master_port(m)), mf.hostname,
             mf.work_dir);
    if (mainloop_run(ml) != 0)
        goto out;
    if (ha != NULL && ha_exit_code(ha) != 0) {
        rc = ha_exit_code(ha);
        goto out;
    }
    log_info("stopped");
    rc = 0;

out:
    ha_free(ha);
    master_free(m);
    mainloop_free(ml);
    master_flags_fini(&mf);
    log_close_file();
    return rc;
}
