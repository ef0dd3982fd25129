/*
 * cli_auth: the credentials offerctl and offerd-execute present to a master
 * that authenticates (HTTP Basic; docs/security.md): --principal, --secret
 * or --secret_file, else the OFFERD_PRINCIPAL and OFFERD_SECRET variables.
 */
#ifndef OFFERD_CLI_CLI_AUTH_H
#define OFFERD_CLI_CLI_AUTH_H

#include <stddef.h>

#define CLI_PRINCIPAL_ENV "OFFERD_PRINCIPAL"
#define CLI_SECRET_ENV    "OFFERD_SECRET"

/* Work out the principal (principal, else $OFFERD_PRINCIPAL) and its secret
 * (secret, else the contents of secret_file without trailing newlines,
 * else $OFFERD_SECRET, else empty); each argument may be NULL. Returns 0
 * with *principal_out (borrowed from the arguments or the environment; NULL
 * when there is none) and *secret_out (a new string, caller frees; NULL
 * without a principal), or -1 with a one-line reason in err (an unreadable
 * secret file, a secret without a principal). */
int cli_credentials(const char *principal, const char *secret,
                    const char *secret_file, const char **principal_out,
                    char **secret_out, char *err, size_t errlen);

/* The Authorization header for the same arguments: 0 with *out a new
 * string (caller frees) or NULL without a principal, or -1 as above. */
int cli_authorization(const char *principal, const char *secret,
                      const char *secret_file, char **out, char *err,
                      size_t errlen);

#endif
