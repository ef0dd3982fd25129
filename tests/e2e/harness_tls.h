/*
 * TLS for the e2e harness. With OFFERD_E2E_TLS=1 in its environment a test
 * binary runs its whole cluster over TLS: e2e_main makes certificates once
 * (tests/tls/gen-certs.sh, under the run's directory) and sets
 * LIBPROCESS_SSL_* so that every process it spawns (master, agents,
 * executors) and every in-process client (libofferd) speaks TLS, verifies
 * the server and presents a certificate (client certificates required);
 * the harness's own HTTP client (e2e_http, e2e_stream_*) speaks TLS too.
 */
#ifndef OFFERD_E2E_HARNESS_TLS_H
#define OFFERD_E2E_HARNESS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Called by e2e_main with the run's directory: when OFFERD_E2E_TLS=1,
 * make the certificates and set the environment. Returns 0, or -1 when
 * the certificates cannot be made. */
int e2e_tls_setup(const char *run_dir);

/* Make the certificates (under the run's directory) if not made yet, for
 * tests that set up TLS themselves (e2e_tls). Returns 0 or -1. */
int e2e_tls_make_certs(void);

/* Make the harness's HTTP client speak TLS (after e2e_tls_make_certs),
 * presenting client.crt, or plain again. */
void e2e_tls_use(bool on);

/* Whether the harness's HTTP client speaks TLS. */
bool e2e_tls_on(void);

/* The path of a certificate file made by gen-certs.sh ("ca.crt",
 * "client.key" ...), in a static buffer (one of 8, reused in turn). */
const char *e2e_tls_file(const char *name);

/* Set the LIBPROCESS_SSL_* variables for the processes spawned from now
 * on: TLS with server.crt/.key, CA ca.crt, client certificates required,
 * plus downgrade when asked. Clears every other LIBPROCESS_SSL_*. */
void e2e_tls_env_cluster(bool downgrade);

/* Socket I/O of the harness's HTTP client: over TLS when e2e_tls_on() (the
 * handshake is done by e2e_io_start), else plain. Non-blocking fds;
 * e2e_io_recv and e2e_io_send return as recv/send do (-1 with errno
 * EAGAIN when they would block). */
int e2e_io_start(int fd, int64_t deadline_ms);
ssize_t e2e_io_recv(int fd, void *buf, size_t len);
ssize_t e2e_io_send(int fd, const void *buf, size_t len);
void e2e_io_close(int fd);

/* One GET of path on 127.0.0.1:port over TLS trusting ca (a file of
 * gen-certs.sh) and presenting cert/key (NULL: none), or over plain HTTP
 * when ca is NULL. Returns the HTTP status, or -1 when the connection or
 * the handshake failed. Blocking, bounded by timeout_ms. */
int e2e_tls_get_status(uint16_t port, const char *path, const char *ca,
                       const char *cert, const char *key, int timeout_ms);

#endif
