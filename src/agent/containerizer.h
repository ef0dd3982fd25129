/*
 * What this agent's only containerizer, "mesos" without images, can run: a
 * task or executor with no ContainerInfo, or with a MESOS one that names no
 * image (its volumes are honoured, volumes.h). Anything else (DOCKER, or
 * MESOS with an image) would run as a plain process on the host with its
 * image ignored; it is refused instead, with the message Mesos's agent
 * gives when no enabled containerizer can create the container.
 */
#ifndef OFFERD_AGENT_CONTAINERIZER_H
#define OFFERD_AGENT_CONTAINERIZER_H

#include "mesos/v1/mesos.pb-c.h"

#include <stddef.h>

/* Returns 0 when ci (NULL: none) can run; else -1 with "None of the
 * enabled containerizers (<containerizers>) could create a container for
 * the provided TaskInfo/ExecutorInfo message" and what was asked for in
 * err. containerizers is the --containerizers text. */
int agent_container_check(const Mesos__V1__ContainerInfo *ci,
                          const char *containerizers, char *err, size_t errlen);

#endif
