/* TEMPORARY stand-in until the lead's common/zk_url lands on main. */
#include "common/zk_url.h"

#include <stdio.h>
#include <string.h>

#include "common/errbuf.h"

int zk_url_parse(const char *text, struct zk_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof(*u));
    if (strncmp(text, "zk://", 5) != 0) {
        errbuf_set(err, errlen, "'%s': not a zk:// URL", text);
        return -1;
    }
    const char *p = text + 5;
    const char *slash = strchr(p, '/');
    const char *at = strchr(p, '@');
    if (slash == NULL || slash[1] == '\0') {
        errbuf_set(err, errlen, "'%s': no path", text);
        return -1;
    }
    if (at != NULL && at < slash) {
        snprintf(u->creds, sizeof(u->creds), "%.*s", (int)(at - p), p);
        p = at + 1;
    }
    snprintf(u->hosts, sizeof(u->hosts), "%.*s", (int)(slash - p), p);
    snprintf(u->path, sizeof(u->path), "%s", slash);
    size_t n = strlen(u->path);
    while (n > 1 && u->path[n - 1] == '/')
        u->path[--n] = '\0';
    return 0;
}

const char *zk_url_credentials(const struct zk_url *u)
{
    return u->creds[0] ? u->creds : NULL;
}

void zk_url_fini(struct zk_url *u)
{
    (void)u;
}
