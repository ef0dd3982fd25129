/* TEMPORARY stand-in until the lead's common/zk_url lands on main. */
#ifndef OFFERD_COMMON_ZK_URL_H
#define OFFERD_COMMON_ZK_URL_H

#include <stddef.h>

struct zk_url {
    char hosts[1024];
    char path[1024];
    char creds[256];
};

int zk_url_parse(const char *text, struct zk_url *u, char *err, size_t errlen);
const char *zk_url_credentials(const struct zk_url *u);
void zk_url_fini(struct zk_url *u);

#endif
