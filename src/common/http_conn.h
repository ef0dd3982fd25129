/*
 * The HTTP server's connections (common/http.c's helper; only src/common/http*
 * include it): how many are open, what each is doing, and the limits that
 * keep a server up when peers misbehave (http.h, "Holding under abuse").
 *
 * evhttp 2.1 keeps its connections to itself, so this module learns of them
 * through the two doors it leaves open: evhttp_set_bevcb (called for every
 * accepted socket, before its connection exists: the bufferevent is created
 * here) and the connection's close callback (run when evhttp frees it). The
 * close callback belongs to this module for the connection's whole life;
 * http.c, which used to set it per request, registers its watcher here
 * instead (http_conn_watch).
 *
 * A connection is "busy" while a watcher is set (a request handed to a
 * handler and not yet answered, or a stream): no timeout or shedding touches
 * it then. Otherwise it is reading a request: the bytes it received for it
 * count against the server's budget until the request reaches a handler or
 * the connection goes.
 */
#ifndef OFFERD_COMMON_HTTP_CONN_H
#define OFFERD_COMMON_HTTP_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/http.h"

struct event_base;
struct evhttp;
struct evhttp_connection;
struct evconnlistener;
struct http_conns;
struct http_conn;
struct tls_server;

/* Start tracking http's connections on base with opts' limits (both
 * borrowed; they outlive the tracker). Installs the bufferevent callback on
 * http. Never fails. */
struct http_conns *http_conns_new(struct event_base *base, struct evhttp *http,
                                  const struct http_server_options *opts);

/* Watch a listener of http for accept errors (EMFILE ...): pause it with a
 * backoff instead of letting libevent log on every loop turn. */
void http_conns_add_listener(struct http_conns *c, struct evconnlistener *l);

/* Make every connection accepted from now on speak TLS through tls
 * (borrowed; it outlives the tracker), see common/tls.h. */
void http_conns_set_tls(struct http_conns *c, struct tls_server *tls);

/* Free the tracker. Call after evhttp_free (which closes every connection
 * and so forgets them here). NULL is ignored. */
void http_conns_free(struct http_conns *c);

/* The tracked connection of evcon, or NULL (never for a server's own). */
struct http_conn *http_conns_find(struct http_conns *c,
                                  struct evhttp_connection *evcon);

/* The peer's text ("ip:port") that http_conn_set_peer kept for conn, or
 * NULL (borrowed: it lives as long as conn). */
const char *http_conn_peer(const struct http_conn *conn);
/* Keep peer (transferred, malloc'd) as conn's peer text, so that the
 * requests of a kept-alive connection do not each ask the socket. */
void http_conn_set_peer(struct http_conn *conn, char *peer);

/* A request of conn reached a handler: its bytes leave the budget and the
 * next request's clock starts when the watcher is cleared. */
void http_conn_dispatched(struct http_conn *conn);

/* Run fn(evcon, arg) once if the connection goes while the watcher is set
 * (then the watcher is gone); NULL fn clears it (the connection is idle
 * again). One watcher at a time. */
void http_conn_watch(struct http_conn *conn,
                     void (*fn)(struct evhttp_connection *, void *), void *arg);

/* Counters for the server's stats (http_server_stats). */
void http_conns_stats(const struct http_conns *c,
                      struct http_server_stats *out);

#endif
