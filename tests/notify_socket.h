/*
 * A test's stand-in for systemd's NOTIFY_SOCKET, shared by the unit tests
 * of common/notify and common/mainloop and the end-to-end test of the
 * daemons as services: bind the datagram socket, read what arrives.
 */
#ifndef OFFERD_TESTS_NOTIFY_SOCKET_H
#define OFFERD_TESTS_NOTIFY_SOCKET_H

/* Bind a datagram socket at name, a path or "@..." for the abstract
 * namespace (as systemd names NOTIFY_SOCKET), whose reads wait at most
 * timeout_secs. Returns the fd (the caller closes it, and unlinks a
 * path); fails the test when it cannot. */
int notify_socket_bind(const char *name, int timeout_secs);

/* Read the next datagram on fd (waiting at most the socket's timeout);
 * fails the test unless one came and it is want. */
void notify_socket_expect(int fd, const char *want);

#endif
