/*
 * notify: tell the service manager how a daemon is doing, with systemd's
 * sd_notify protocol (sd_notify(3)): one datagram of "KEY=value" lines
 * ("READY=1", "STOPPING=1", "STATUS=...") to the AF_UNIX socket named by
 * NOTIFY_SOCKET, which systemd sets for Type=notify units. A path starting
 * with '@' is in the abstract namespace.
 *
 * Written here rather than linked from libsystemd: the protocol is a
 * documented stable interface of a few lines, and the daemons keep their
 * dependencies to what they already had (and build where libsystemd is
 * missing). common/mainloop sends READY=1 when a daemon's loop starts and
 * STOPPING=1 when a stop signal arrives.
 */
#ifndef OFFERD_COMMON_NOTIFY_H
#define OFFERD_COMMON_NOTIFY_H

/* Take the service manager's socket from the environment: return a copy of
 * NOTIFY_SOCKET (caller frees) and remove the variable, so that processes
 * the daemon starts (the agent's tasks) do not inherit it. NULL when unset
 * or empty. */
char *notify_socket_take(void);

/* Send state (e.g. "READY=1") as one datagram to the socket at path (as
 * NOTIFY_SOCKET names it). Never blocks. Returns 0, or -1 with errno set
 * (EINVAL for a path that is empty or too long, otherwise the socket
 * call's errno). */
int notify_send(const char *path, const char *state);

#endif
