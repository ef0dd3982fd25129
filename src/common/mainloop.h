/*
 * mainloop: the one event loop of a daemon (offerd, offerd-agent) with
 * what every daemon's main() sets up around it: SIGPIPE ignored, so that a
 * peer closing a socket cannot kill the process, and SIGTERM and SIGINT
 * delivered as loop events that stop the loop (nothing is done inside a
 * signal handler). Under systemd (NOTIFY_SOCKET set by Type=notify units)
 * it also reports READY=1 when the loop starts to run and STOPPING=1 when a
 * stop signal arrives (common/notify.h). main() creates it, hands
 * mainloop_base() to whoever needs the loop, runs it once everything
 * listens, and frees it last.
 */
#ifndef OFFERD_COMMON_MAINLOOP_H
#define OFFERD_COMMON_MAINLOOP_H

struct event_base;
struct mainloop;

/* Ignore SIGPIPE, create the event loop and stop it on SIGTERM or SIGINT,
 * logging "received <signal>: <stopping>" (stopping is borrowed and must
 * outlive the loop, e.g. "shutting down") and notifying STOPPING=1. Takes
 * NOTIFY_SOCKET out of the environment (notify_socket_take). Returns the loop
 * (free with mainloop_free), or NULL, the reason logged and nothing left
 * behind. */
struct mainloop *mainloop_new(const char *stopping);

/* The loop's event base (borrowed: it lives until mainloop_free). */
struct event_base *mainloop_base(const struct mainloop *ml);

/* Notify READY=1 (the daemon listens by now), then run the loop until it
 * is stopped (a signal above, or a callback's
 * event_base_loopexit). Returns 0, or -1 when libevent fails (logged). */
int mainloop_run(struct mainloop *ml);

/* Free the signal events and the event base; NULL is ignored. Free every
 * event and connection of the loop first. */
void mainloop_free(struct mainloop *ml);

#endif
