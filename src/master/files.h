/*
 * The master's files (Mesos's master Files): its log file, when it writes
 * one (--log_dir), attached as the virtual path /master/log, served by
 * /files/browse, /files/read, /files/debug (common/files.h) and by the
 * operator API's LIST_FILES and READ_FILE. Without a log file nothing is
 * attached, and /master/log is not found (404), as in Mesos.
 */
#ifndef OFFERD_MASTER_FILES_H
#define OFFERD_MASTER_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "master/master_types.h"
#include "mesos/v1/master.pb-c.h"

/* The virtual path of the master's log, as Mesos names it. */
#define MASTER_LOG_VPATH "/master/log"
/* The log file's name in --log_dir. */
#define MASTER_LOG_NAME "offerd-master.log"

/* The log file's path, <log_dir>/offerd-master.log, into out (n bytes).
 * False when --log_dir is unset or the path does not fit. */
bool master_log_path(const struct master_flags *flags, char *out, size_t n);

/* Attach the log file if --log_dir is set and the file exists (a warning
 * otherwise), and route /files/{browse,read,debug}. Returns 0, or -1 when a
 * route is taken. Sets m->files; master_files_free frees it. */
int master_files_register(struct master *m);
void master_files_free(struct master *m);

/* LIST_FILES {path}: the Response (free with
 * protobuf_c_message_free_unpacked), or NULL after answering req 403 or
 * 404. */
Mesos__V1__Master__Response *
master_files_list(struct master *m, struct http_request *req,
                  const Mesos__V1__Master__Call__ListFiles *lf);

/* READ_FILE {path, offset, length}: the Response (as above), or NULL after
 * answering req 400, 403, 404 or 500. */
Mesos__V1__Master__Response *
master_files_read(struct master *m, struct http_request *req,
                  const Mesos__V1__Master__Call__ReadFile *rf);

#endif
