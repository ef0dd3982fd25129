/*
 * The master's flag table.
 */
#include "master/flags_master.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void master_flags_init(struct master_flags *mf)
{
    memset(mf, 0, sizeof(*mf));
    const struct flag_def defs[MASTER_FLAGS_ROWS] = {
        {"ip", FLAG_STRING, "0.0.0.0", "IP address to listen on.", &mf->ip},
        {"port", FLAG_PORT, "5050", "Port to listen on.", &mf->port},
        {"work_dir", FLAG_STRING, ".offerd/master",
         "Directory of the master's persistent state (the registry), created "
         "if missing. Relative paths are taken from the current directory.",
         &mf->work_dir},
        {"hostname", FLAG_STRING, NULL,
         "Hostname the master advertises. Defaults to this machine's "
         "hostname.",
         &mf->hostname},
        {"logging_level", FLAG_STRING, "INFO",
         "Lowest level of log messages written to stderr: DEBUG, INFO, "
         "WARNING or ERROR.",
         &mf->logging_level},
    };
    memcpy(mf->defs, defs, sizeof(defs));
    mf->flags = flags_new("offerd",
                          "offerd, a Mesos-compatible master: owns the "
                          "cluster's state and hands out resources as offers.",
                          mf->defs, MASTER_FLAGS_ROWS);
}

enum flags_result master_flags_parse(struct master_flags *mf, int argc,
                                     char *const *argv, char *const *env,
                                     char *err, size_t errlen)
{
    enum flags_result r = flags_parse(mf->flags, argc, argv, env, err, errlen);
    if (r != FLAGS_OK)
        return r;
    if (log_parse_level(mf->logging_level, &mf->log_level) != 0) {
        snprintf(err, errlen,
                 "--logging_level: unknown level '%s' (expected DEBUG, INFO, "
                 "WARNING or ERROR)",
                 mf->logging_level);
        return FLAGS_ERROR;
    }
    if (mf->work_dir[0] == '\0') {
        snprintf(err, errlen, "--work_dir: must not be empty");
        return FLAGS_ERROR;
    }
    if (mf->hostname == NULL) {
        if (gethostname(mf->hostname_buf, sizeof(mf->hostname_buf) - 1) != 0)
            snprintf(mf->hostname_buf, sizeof(mf->hostname_buf), "localhost");
        mf->hostname_buf[sizeof(mf->hostname_buf) - 1] = '\0';
        mf->hostname = mf->hostname_buf;
    }
    return FLAGS_OK;
}

void master_flags_usage(const struct master_flags *mf, FILE *out)
{
    flags_usage(mf->flags, out);
}

const struct flags *master_flags_object(const struct master_flags *mf)
{
    return mf->flags;
}

void master_flags_fini(struct master_flags *mf)
{
    flags_free(mf->flags);
    mf->flags = NULL;
}
