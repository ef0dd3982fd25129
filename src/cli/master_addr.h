/*
 * master_addr: the --master=HOST:PORT value the command-line programs
 * (offerd-execute, offerctl) take, split and resolved once before the event
 * loop starts, so that nothing resolves a name inside the loop (the HTTP
 * client wants a numeric address; see common/http_client.h).
 */
#ifndef OFFERD_CLI_MASTER_ADDR_H
#define OFFERD_CLI_MASTER_ADDR_H

#include <stddef.h>
#include <stdint.h>

/* Split text, "HOST:PORT" with an optional "http://" in front and a '/'
 * behind ("[::1]:5050" for IPv6), and resolve HOST to a numeric IPv4 or
 * IPv6 address (blocking getaddrinfo). Returns 0 with the address in ip
 * (iplen bytes) and *port (OUT), or -1 with a one-line reason, starting
 * with "--master: ", in err; ip and *port are then untouched. */
int cli_master_addr_parse(const char *text, char *ip, size_t iplen,
                          uint16_t *port, char *err, size_t errlen);

#endif
