/*
 * Cleanup of the cgroups an offerd-agent made (docs/isolation.md) when a
 * test stops it without letting it clean up (SIGKILL, SIGTERM while tasks
 * run): e2e_proc_cleanup calls it after killing what ran under the
 * agent's directory, so that no test leaves cgroups on the machine.
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_CGROUPS_H
#define OFFERD_TESTS_E2E_HARNESS_CGROUPS_H

/* Remove every cgroup <mount>/<root>/<id> of any mounted hierarchy whose
 * <id> the agent recorded under <work_dir>/meta/cgroups/ (processes left in
 * one are killed first; a busy one is retried for about a second). No-op
 * when the agent recorded none. */
void e2e_remove_agent_cgroups(const char *work_dir);

#endif
