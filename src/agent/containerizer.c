/*
 * The containerizer check (see containerizer.h).
 */
#include "agent/containerizer.h"

#include <stdio.h>

int agent_container_check(const Mesos__V1__ContainerInfo *ci,
                          const char *containerizers, char *err, size_t errlen)
{
    if (ci == NULL)
        return 0;
    const char *what = NULL;
    if (ci->type == MESOS__V1__CONTAINER_INFO__TYPE__DOCKER)
        what = "a DOCKER container";
    else if (ci->type != MESOS__V1__CONTAINER_INFO__TYPE__MESOS)
        what = "an unknown container type";
    else if (ci->mesos != NULL && ci->mesos->image != NULL)
        what = "a MESOS container with an image";
    if (what == NULL)
        return 0;
    snprintf(err, errlen,
             "None of the enabled containerizers (%s) could create a "
             "container for the provided TaskInfo/ExecutorInfo message (it "
             "asks for %s)",
             containerizers, what);
    return -1;
}
