// The cluster as the event stream describes it: agents, frameworks and
// tasks in maps, replaced by each SUBSCRIBED and changed by each event.
// Changes only bump a version and schedule one notification per animation
// frame, so a burst of events costs one render, not one per event.

import {sums} from './util.js';

export const TERMINAL = new Set(['TASK_FINISHED', 'TASK_FAILED', 'TASK_KILLED',
  'TASK_LOST', 'TASK_ERROR', 'TASK_DROPPED', 'TASK_GONE',
  'TASK_GONE_BY_OPERATOR']);

const taskKey = (fw, id) => fw + '\u0000' + id;

export class Store {
  constructor() {
    this.listeners = new Set();
    this.scheduled = false;
    this.clear();
  }

  clear() {
    this.agents = new Map();     // id -> GetAgents.Agent
    this.frameworks = new Map(); // id -> GetFrameworks.Framework (+ completed flag)
    this.tasks = new Map();      // fw\0task -> Task (+ search text)
    this.version = 0;
    this.loaded = false;
  }

  // Call fn() after changes, at most once per animation frame.
  listen(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }

  changed() {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const fn of this.listeners) fn();
    });
  }

  subscribed(s) {
    this.clear();
    const st = s.get_state || {};
    const ga = st.get_agents || {};
    for (const a of ga.agents || []) this.putAgent(a);
    const gf = st.get_frameworks || {};
    for (const f of gf.frameworks || []) this.putFramework(f, false);
    for (const f of gf.completed_frameworks || []) this.putFramework(f, true);
    const gt = st.get_tasks || {};
    for (const list of [gt.tasks, gt.completed_tasks, gt.unreachable_tasks,
      gt.orphan_tasks]) {
      for (const t of list || []) this.putTask(t);
    }
    this.loaded = true;
    this.changed();
  }

  apply(ev) {
    switch (ev.type) {
      case 'TASK_ADDED': this.putTask(ev.task_added.task); break;
      case 'TASK_UPDATED': this.updateTask(ev.task_updated); break;
      case 'AGENT_ADDED': this.putAgent(ev.agent_added.agent); break;
      case 'AGENT_REMOVED': this.agents.delete(ev.agent_removed.agent_id.value); break;
      case 'FRAMEWORK_ADDED': this.putFramework(ev.framework_added.framework, false); break;
      case 'FRAMEWORK_UPDATED': this.putFramework(ev.framework_updated.framework, false); break;
      case 'FRAMEWORK_REMOVED': {
        const f = this.frameworks.get(ev.framework_removed.framework_info.id.value);
        if (f) { f.completed = true; f.active = false; f.connected = false; }
        break;
      }
      default: return; // HEARTBEAT and what this page does not show
    }
    this.changed();
  }

  putAgent(a) { this.agents.set(a.agent_info.id.value, a); }

  putFramework(f, completed) {
    f.completed = completed;
    this.frameworks.set(f.framework_info.id.value, f);
  }

  putTask(t) {
    t.statuses = t.statuses || [];
    t.search = [t.task_id.value, t.name, t.state, t.framework_id.value,
      t.agent_id ? t.agent_id.value : ''].join(' ').toLowerCase();
    this.tasks.set(taskKey(t.framework_id.value, t.task_id.value), t);
  }

  updateTask(u) {
    const t = this.tasks.get(taskKey(u.framework_id.value, u.status.task_id.value));
    if (!t) return;
    t.state = u.state;
    t.statuses.push(u.status);
    if (u.status.agent_id && !t.agent_id) t.agent_id = u.status.agent_id;
    t.search = [t.task_id.value, t.name, t.state, t.framework_id.value,
      t.agent_id ? t.agent_id.value : ''].join(' ').toLowerCase();
  }

  task(fw, id) { return this.tasks.get(taskKey(fw, id)); }

  // Resources held by tasks that are not terminal, per agent and per
  // framework: {agents: Map id -> sums, frameworks: Map id -> sums, tasks:
  // Map fw -> {active, total}}. Cached per version.
  usage() {
    if (this.usageCache && this.usageCache.version === this.version)
      return this.usageCache;
    const agents = new Map();
    const frameworks = new Map();
    const counts = new Map();
    const byState = new Map();
    for (const t of this.tasks.values()) {
      byState.set(t.state, (byState.get(t.state) || 0) + 1);
      const fw = t.framework_id.value;
      let c = counts.get(fw);
      if (!c) counts.set(fw, c = {active: 0, total: 0});
      c.total++;
      if (TERMINAL.has(t.state)) continue;
      c.active++;
      if (!frameworks.has(fw)) frameworks.set(fw, sums([]));
      sums(t.resources, undefined, frameworks.get(fw));
      if (t.agent_id) {
        const ag = t.agent_id.value;
        if (!agents.has(ag)) agents.set(ag, sums([]));
        sums(t.resources, undefined, agents.get(ag));
      }
    }
    this.usageCache = {version: this.version, agents, frameworks, counts, byState};
    return this.usageCache;
  }
}
