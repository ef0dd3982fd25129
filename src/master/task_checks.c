/*
 * TaskInfo.health_check and TaskInfo.check validation (task_checks.h).
 * Messages are Mesos's, so that frameworks matching on them keep working.
 */
#include "master/task_checks.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), err)

/* Mesos's validateEnvironment: every variable's type and value agree. */
static const char *check_environment(const Mesos__V1__Environment *env,
                                     char *err, size_t errlen)
{
    for (size_t i = 0; env != NULL && i < env->n_variables; i++) {
        const Mesos__V1__Environment__Variable *v = env->variables[i];
        const char *name = v->name != NULL ? v->name : "";
        Mesos__V1__Environment__Variable__Type type =
            v->has_type ? v->type
                        : MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__VALUE;
        switch (type) {
        case MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__VALUE:
            if (v->value == NULL)
                return ERR("Environment variable '%s' of type 'VALUE' must "
                           "have a value set",
                           name);
            if (v->secret != NULL)
                return ERR("Environment variable '%s' of type 'VALUE' must "
                           "not have a secret set",
                           name);
            break;
        case MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__SECRET:
            if (v->secret == NULL)
                return ERR("Environment variable '%s' of type 'SECRET' must "
                           "have a secret set",
                           name);
            if (v->value != NULL)
                return ERR("Environment variable '%s' of type 'SECRET' must "
                           "not have a value set",
                           name);
            break;
        default:
            return ERR("Environment variable of type 'UNKNOWN' is not allowed");
        }
    }
    return NULL;
}

/* A command of a COMMAND check; what names the check in messages:
 * "health check" or "check". */
static const char *check_command(const Mesos__V1__CommandInfo *c,
                                 const char *what, const char *whats, char *err,
                                 size_t errlen)
{
    if (c->value == NULL) {
        bool shell = !c->has_shell || c->shell;
        return ERR("Command %s must contain %s", what,
                   shell ? "'shell command'" : "'executable path'");
    }
    char envmsg[512];
    if (check_environment(c->environment, envmsg, sizeof(envmsg)) != NULL)
        return ERR("%s `CommandInfo` is invalid: %s", whats, envmsg);
    return NULL;
}

static const char *check_port(uint32_t port, char *err, size_t errlen)
{
    if (port < 1 || port > 65535)
        return ERR("Expecting 'port' to be in [1, 65535], got %u", port);
    return NULL;
}

/* A duration field: absent, or a number not below zero. */
static bool bad_secs(bool has, double v)
{
    return has && !(v >= 0.0);
}

static const char *check_health(const Mesos__V1__HealthCheck *hc, char *err,
                                size_t errlen)
{
    if (!hc->has_type)
        return ERR("HealthCheck must specify 'type'");
    const char *e;
    switch (hc->type) {
    case MESOS__V1__HEALTH_CHECK__TYPE__COMMAND:
        if (hc->command == NULL)
            return ERR("Expecting 'command' to be set for COMMAND health "
                       "check");
        if ((e = check_command(hc->command, "health check", "Health check's",
                               err, errlen)) != NULL)
            return e;
        break;
    case MESOS__V1__HEALTH_CHECK__TYPE__HTTP:
        if (hc->http == NULL)
            return ERR("Expecting 'http' to be set for HTTP health check");
        if (hc->http->scheme != NULL && strcmp(hc->http->scheme, "http") != 0 &&
            strcmp(hc->http->scheme, "https") != 0)
            return ERR("Unsupported HTTP health check scheme: '%s'",
                       hc->http->scheme);
        if (hc->http->path != NULL && hc->http->path[0] != '/')
            return ERR("The path '%s' of HTTP health check must start with "
                       "'/'",
                       hc->http->path);
        if ((e = check_port(hc->http->port, err, errlen)) != NULL)
            return e;
        break;
    case MESOS__V1__HEALTH_CHECK__TYPE__TCP:
        if (hc->tcp == NULL)
            return ERR("Expecting 'tcp' to be set for TCP health check");
        if ((e = check_port(hc->tcp->port, err, errlen)) != NULL)
            return e;
        break;
    default:
        return ERR("'UNKNOWN' is not a valid health check type");
    }
    if (bad_secs(hc->has_delay_seconds, hc->delay_seconds))
        return ERR("Expecting 'delay_seconds' to be non-negative");
    if (bad_secs(hc->has_grace_period_seconds, hc->grace_period_seconds))
        return ERR("Expecting 'grace_period_seconds' to be non-negative");
    if (bad_secs(hc->has_interval_seconds, hc->interval_seconds))
        return ERR("Expecting 'interval_seconds' to be non-negative");
    if (bad_secs(hc->has_timeout_seconds, hc->timeout_seconds))
        return ERR("Expecting 'timeout_seconds' to be non-negative");
    return NULL;
}

static const char *check_check(const Mesos__V1__CheckInfo *ci, char *err,
                               size_t errlen)
{
    if (!ci->has_type)
        return ERR("CheckInfo must specify 'type'");
    const char *e;
    switch (ci->type) {
    case MESOS__V1__CHECK_INFO__TYPE__COMMAND:
        if (ci->command == NULL || ci->command->command == NULL)
            return ERR("Expecting 'command' to be set for COMMAND check");
        if ((e = check_command(ci->command->command, "check", "Check's", err,
                               errlen)) != NULL)
            return e;
        break;
    case MESOS__V1__CHECK_INFO__TYPE__HTTP:
        if (ci->http == NULL)
            return ERR("Expecting 'http' to be set for HTTP check");
        if (ci->http->path != NULL && ci->http->path[0] != '/')
            return ERR("The path '%s' of HTTP check must start with '/'",
                       ci->http->path);
        if ((e = check_port(ci->http->port, err, errlen)) != NULL)
            return e;
        break;
    case MESOS__V1__CHECK_INFO__TYPE__TCP:
        if (ci->tcp == NULL)
            return ERR("Expecting 'tcp' to be set for TCP check");
        if ((e = check_port(ci->tcp->port, err, errlen)) != NULL)
            return e;
        break;
    default:
        return ERR("'UNKNOWN' is not a valid check type");
    }
    if (bad_secs(ci->has_delay_seconds, ci->delay_seconds))
        return ERR("Expecting 'delay_seconds' to be non-negative");
    if (bad_secs(ci->has_interval_seconds, ci->interval_seconds))
        return ERR("Expecting 'interval_seconds' to be non-negative");
    if (bad_secs(ci->has_timeout_seconds, ci->timeout_seconds))
        return ERR("Expecting 'timeout_seconds' to be non-negative");
    return NULL;
}

const char *master_task_checks_validate(const Mesos__V1__TaskInfo *ti,
                                        char *err, size_t errlen)
{
    /* Mesos validates the check before the health check. */
    char why[768];
    if (ti->check != NULL && check_check(ti->check, why, sizeof(why)) != NULL)
        return ERR("Task uses invalid check: %s", why);
    if (ti->health_check != NULL &&
        check_health(ti->health_check, why, sizeof(why)) != NULL)
        return ERR("Task uses invalid health check: %s", why);
    return NULL;
}
