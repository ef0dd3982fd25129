/*
 * cli_auth: see cli_auth.h.
 */
#include "cli/cli_auth.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/fs.h"
#include "common/mem.h"

int cli_credentials(const char *principal, const char *secret,
                    const char *secret_file, const char **principal_out,
                    char **secret_out, char *err, size_t errlen)
{
    *principal_out = NULL;
    *secret_out = NULL;
    if (principal == NULL)
        principal = getenv(CLI_PRINCIPAL_ENV);
    if (principal != NULL && principal[0] == '\0')
        principal = NULL;
    if (principal == NULL) {
        if (secret != NULL || secret_file != NULL) {
            snprintf(err, errlen, "--secret needs --principal (or $%s)",
                     CLI_PRINCIPAL_ENV);
            return -1;
        }
        return 0;
    }
    char *s = NULL;
    if (secret != NULL) {
        s = xstrdup(secret);
    } else if (secret_file != NULL) {
        uint8_t *data = NULL;
        size_t len;
        int rc = fs_read(secret_file, AUTH_MAX_SECRET + 2, &data, &len);
        if (rc != 1) {
            snprintf(err, errlen, "--secret_file: %s: %s", secret_file,
                     rc == 0 ? "no such file" : strerror(errno));
            return -1;
        }
        while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
            data[--len] = '\0';
        s = (char *)data;
    } else {
        const char *env = getenv(CLI_SECRET_ENV);
        s = xstrdup(env != NULL ? env : "");
    }
    *principal_out = principal;
    *secret_out = s;
    return 0;
}

int cli_authorization(const char *principal, const char *secret,
                      const char *secret_file, char **out, char *err,
                      size_t errlen)
{
    const char *p;
    char *s;
    *out = NULL;
    if (cli_credentials(principal, secret, secret_file, &p, &s, err, errlen) !=
        0)
        return -1;
    if (p != NULL)
        *out = auth_basic_header(p, s);
    if (s != NULL) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
    return 0;
}
