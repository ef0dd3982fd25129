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

#include "master/master_types.h"

struct jout;

/* The members of one element of /state's "slaves". */
void master_write_agent_fields(struct jout *w, const struct master *m,
                               const struct agent *ag);

/* The same for a reader from whom view_roles hides some roles (roles:
 * its approver, master/role_view.h): written from the filtering model
 * (state_endpoints.c), which drops the resources naming those roles. */
struct acl_approver;
void master_write_agent_fields_as(struct jout *w, const struct master *m,
                                  const struct agent *ag,
                                  const struct acl_approver *roles);

/* The members of one element of "frameworks" that come before "tasks"
 * (and before "labels", which master_write_framework_labels writes). */
void master_write_framework_fields(struct jout *w, const struct framework *fw);
/* fw's "labels" member, when its FrameworkInfo has labels. */
void master_write_framework_labels(struct jout *w, const struct framework *fw);

/* One element of a framework's "tasks", "completed_tasks", "offers". */
void master_write_task(struct jout *w, const struct task *t);
void master_write_record(struct jout *w, const struct framework *fw,
                         const struct task_record *r);
void master_write_offer(struct jout *w, const struct offer *of);

#endif
