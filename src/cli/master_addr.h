/*
 * master_addr: the one place where the command-line programs (offerd-execute,
 * offerctl) turn a `--master` text into the address of a master, before
 * their work starts, so that nothing looks a name up inside the loop once
 * it serves (the HTTP client wants a numeric address; see
 * common/http_client.h).
 *
 * The forms are Mesos's: HOST:PORT, zk://[user:pass@]host:port,.../path (the
 * masters' election group: the leader is looked up once, at start), and
 * file:///path (a file holding one of the two).
 */
#ifndef OFFERD_CLI_MASTER_ADDR_H
#define OFFERD_CLI_MASTER_ADDR_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

/* Default wait for ZooKeeper to name a leader (cli_master_addr_find). */
#define CLI_MASTER_FIND_TIMEOUT_MS 10000

/* Split text, "HOST:PORT" with an optional "http://" in front and a '/'
 * behind ("[::1]:5050" for IPv6), and resolve HOST to a numeric IPv4 or
 * IPv6 address (blocking getaddrinfo). Returns 0 with the address in ip
 * (iplen bytes) and *port (OUT), or -1 with a one-line reason, starting
 * with "--master: ", in err; ip and *port are then untouched. */
int cli_master_addr_parse(const char *text, char *ip, size_t iplen,
                          uint16_t *port, char *err, size_t errlen);

/* Any `--master` form: HOST:PORT as cli_master_addr_parse; zk:// and
 * file:// through a detector (common/master_detect.h) run on base until it
 * names the leading master, at most timeout_ms (<= 0: the default), and
 * freed before returning; the leader's name, when it gives no address, is
 * resolved as above. base must have no loop running; other events on it
 * may run meanwhile. Returns 0 with ip and *port, or with a one-line
 * reason starting with "--master: " in err: -1 when text is unusable (no
 * form, unreadable file, unresolvable name), -2 when no master was named
 * in time ("--master: no leading master found in ZooKeeper within N s"). */
int cli_master_addr_find(struct event_base *base, const char *text,
                         int timeout_ms, char *ip, size_t iplen, uint16_t *port,
                         char *err, size_t errlen);

#endif
