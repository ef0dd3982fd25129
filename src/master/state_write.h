/*
 * /state's entities written as JSON text (common/json_out.h) straight from
 * the master's structs: the same bytes as the jansson models of
 * state_models.h dumped compact (tests/unit/test_master_state_write.c
 * compares them), without a tree per entity. state_stream.c writes /state
 * with them, state_endpoints.c /state-summary.
 *
 * Each function appends one value (an object), with the comma it needs;
 * the _fields variants append an object's members only, so that the
 * caller can add members of its own before closing it.
 */
#ifndef OFFERD_MASTER_STATE_WRITE_H
#define OFFERD_MASTER_STATE_WRITE_H

#include <stdbool.h>

#include "master/master_types.h"

struct jout;

/* The members of one element of /state's "slaves". */
void master_write_agent_fields(struct jout *w, const struct master *m,
                               const struct agent *ag);

/* The members of one element of /state-summary's "slaves" before its task
 * counts: those of master_write_agent_fields but the ones Mesos's
 * /state-summary does not write (master_summary_omits_agent_key). */
void master_write_agent_summary_fields(struct jout *w, const struct master *m,
                                       const struct agent *ag);
/* Whether /state-summary leaves out key of /state's agent (framework):
 * the *_full lists and revocable summaries of an agent; a framework's
 * fields beyond Mesos's Summary<Framework>. */
bool master_summary_omits_agent_key(const char *key);
bool master_summary_omits_framework_key(const char *key);

/* The same for a reader from whom view_roles hides some roles (roles:
 * its approver, master/role_view.h): written from the filtering model
 * (state_endpoints.c), which drops the resources naming those roles. */
struct acl_approver;
/* With summary, the members master_write_agent_summary_fields writes. */
void master_write_agent_fields_as(struct jout *w, const struct master *m,
                                  const struct agent *ag,
                                  const struct acl_approver *roles,
                                  bool summary);

/* The members of one element of "frameworks" that come before "tasks"
 * (and before "labels", which master_write_framework_labels writes). */
void master_write_framework_fields(struct jout *w, const struct framework *fw);
/* The members of one element of /state-summary's "frameworks" before its
 * task counts: those of master_write_framework_fields but the ones
 * master_summary_omits_framework_key names. */
void master_write_framework_summary_fields(struct jout *w,
                                           const struct framework *fw);
/* fw's "labels" member, when its FrameworkInfo has labels. */
void master_write_framework_labels(struct jout *w, const struct framework *fw);

/* One element of a framework's "tasks", "completed_tasks", "offers". */
void master_write_task(struct jout *w, const struct task *t);
void master_write_record(struct jout *w, const struct framework *fw,
                         const struct task_record *r);
void master_write_offer(struct jout *w, const struct offer *of);

#endif
