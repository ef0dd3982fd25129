/*
 * A loopback TCP port nothing listens on now, for tests and benchmarks that
 * start servers on ports chosen at run time.
 */
#ifndef OFFERD_COMMON_NETPORT_H
#define OFFERD_COMMON_NETPORT_H

#include <stdint.h>

/* Binds a socket to 127.0.0.1:0, reads back the port the kernel chose and
 * closes the socket. The port comes from the ephemeral range, so two calls
 * rarely return the same one, but nothing reserves it: a caller that takes
 * several checks them for duplicates, and one that binds later can lose it
 * to another process. Returns 0 when no socket could be bound. */
uint16_t netport_free_loopback(void);

#endif
