// The pages. Each is a function (root, route, ctx) that fills root and
// returns {update(), unmount()}: update() runs after store changes (at most
// once per animation frame), unmount() when the user navigates away.

import {h, SCALARS, sums, isReserved, isRevocable, fmtRes, resText, attrText,
  fmtTime, fmtNanos, fmtDuration, operatorCall} from './util.js';
import {TERMINAL} from './store.js';
import {VTable} from './table.js';

const fwName = (store, id) => {
  const f = store.frameworks.get(id);
  return f ? f.framework_info.name : id;
};
const agentHost = (store, id) => {
  const a = store.agents.get(id);
  return a ? a.agent_info.hostname : id;
};
const lastTime = (t) => {
  const s = t.statuses;
  return s.length ? s[s.length - 1].timestamp || 0 : 0;
};
const enc = encodeURIComponent;

function kv(rows) {
  return h('table', {class: 'kv'}, rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))));
}

// Redraw a container's children with fresh ones.
function fill(el, ...children) { el.replaceChildren(...children.flat()); }

// A search box and selects bound to the route's query (kept in the URL).
function toolbar(route, controls) {
  const bar = h('div', {class: 'toolbar'});
  for (const c of controls) {
    if (c.options) {
      const sel = h('select', {name: c.key, onchange: () => route.set(c.key, sel.value)},
          c.options.map(([v, label]) => h('option', {value: v}, label)));
      sel.value = route.get(c.key) || '';
      bar.append(h('label', {}, c.label + ' ', sel));
    } else {
      let timer = null;
      const input = h('input', {type: 'search', name: c.key, placeholder: c.label,
        value: route.get(c.key) || '', oninput: () => {
          clearTimeout(timer);
          timer = setTimeout(() => route.set(c.key, input.value), 150);
        }});
      bar.append(input);
    }
  }
  return bar;
}

// A table page: toolbar, count and a VTable over rows(route) re-filtered
// after changes.
function tablePage(root, route, ctx, {title, controls, columns, rows, sort, desc}) {
  const count = h('span', {class: 'muted'});
  const table = new VTable(columns, {
    sort: route.get('sort') || sort,
    desc: route.get('sort') ? route.get('desc') === '1' : !!desc,
    onSort: (k, d) => { route.set('sort', k, true); route.set('desc', d ? '1' : '', true); },
  });
  fill(root, h('div', {class: 'toolbar'}, h('h1', {}, title), count),
      toolbar(route, controls), table.el);
  const refresh = () => {
    const list = rows();
    count.textContent = `${list.length} shown`;
    table.setRows(list);
  };
  refresh();
  return {update: refresh, unmount() { table.destroy(); }};
}

// ---- Overview ------------------------------------------------------------

export function overview(root, route, ctx) {
  const {store} = ctx;
  const body = h('div', {class: 'cards'});
  const res = h('div', {class: 'card'});
  fill(root, h('h1', {}, ctx.cluster ? `Cluster ${ctx.cluster}` : 'Overview'), body, res);
  // Offered resources are not in the event stream: read with GET_AGENTS
  // on arrival and, after changes, at most every 10 s.
  let offered = null;
  let fetched = 0;
  let fetching = false;
  const fetchOffered = async () => {
    if (fetching) return;
    fetching = true;
    fetched = performance.now();
    try {
      const r = await operatorCall('GET_AGENTS');
      const o = sums([]);
      for (const a of (r.get_agents && r.get_agents.agents) || []) sums(a.offered_resources, undefined, o);
      offered = o;
      draw();
    } catch (e) { offered = null; } finally { fetching = false; }
  };
  const draw = () => {
    const u = store.usage();
    let active = 0, deact = 0, draining = 0;
    const total = sums([]), reserved = sums([]), revocable = sums([]);
    for (const a of store.agents.values()) {
      if (a.active) active++;
      if (a.deactivated) deact++;
      if (a.drain_info) draining++;
      sums(a.total_resources, undefined, total);
      sums(a.total_resources, isReserved, reserved);
      sums(a.total_resources, isRevocable, revocable);
    }
    const allocated = sums([]);
    for (const s of u.agents.values()) for (const k of SCALARS) allocated[k] += s[k];
    let fwActive = 0, fwInactive = 0, fwDone = 0;
    for (const f of store.frameworks.values()) {
      if (f.completed) fwDone++;
      else if (f.active) fwActive++;
      else fwInactive++;
    }
    const states = [...u.byState.entries()].sort();
    fill(body,
        h('div', {class: 'card', id: 'card-agents'}, h('h2', {}, 'Agents'),
            h('div', {class: 'big'}, String(store.agents.size)),
            h('div', {class: 'muted'}, `${active} active · ${deact} deactivated · ${draining} draining`),
            h('a', {href: '#/agents'}, 'all agents')),
        h('div', {class: 'card', id: 'card-frameworks'}, h('h2', {}, 'Frameworks'),
            h('div', {class: 'big'}, String(fwActive)),
            h('div', {class: 'muted'}, `active · ${fwInactive} inactive · ${fwDone} completed`),
            h('a', {href: '#/frameworks'}, 'all frameworks')),
        h('div', {class: 'card', id: 'card-tasks'}, h('h2', {}, 'Tasks by state'),
            states.length ? h('table', {class: 'kv'}, states.map(([s, n]) => h('tr', {},
                h('td', {}, h('a', {href: '#/tasks?state=' + enc(s), class: 'state state-' + s}, s)),
                h('td', {class: 'num'}, String(n)))))
              : h('div', {class: 'muted'}, 'No tasks.')));
    const cell = (o, k) => h('td', {class: 'num'}, o ? fmtRes(k, o[k]) : '…');
    fill(res, h('h2', {}, 'Resources'), h('table', {class: 'kv', id: 'totals'},
        h('tr', {}, h('th', {}, ''), ['total', 'offered', 'allocated', 'reserved', 'revocable', 'idle']
            .map((t) => h('th', {class: 'num'}, t))),
        SCALARS.map((k) => h('tr', {}, h('th', {}, k), cell(total, k), cell(offered, k),
            cell(allocated, k), cell(reserved, k), cell(revocable, k),
            cell({[k]: Math.max(0, total[k] - allocated[k] - (offered ? offered[k] : 0))}, k)))));
  };
  draw();
  fetchOffered();
  let timer = null;
  return {
    update() {
      draw();
      if (!timer) {
        timer = setTimeout(() => { timer = null; fetchOffered(); },
            Math.max(0, 10000 - (performance.now() - fetched)));
      }
    },
    unmount() { clearTimeout(timer); },
  };
}

// ---- Agents --------------------------------------------------------------

// Maintenance modes by hostname (and "hostname ip"), from
// GET_MAINTENANCE_STATUS, refreshed when a page that shows them opens.
async function maintenanceModes() {
  const modes = new Map();
  try {
    const r = await operatorCall('GET_MAINTENANCE_STATUS');
    const st = (r.get_maintenance_status && r.get_maintenance_status.status) || {};
    for (const d of st.draining_machines || []) modes.set(d.id.hostname || d.id.ip, 'DRAINING');
    for (const m of st.down_machines || []) modes.set(m.hostname || m.ip, 'DOWN');
  } catch (e) { /* shown as unknown */ }
  return modes;
}

function agentState(a, modes) {
  if (modes && modes.has(a.agent_info.hostname)) return modes.get(a.agent_info.hostname);
  if (a.drain_info) return a.drain_info.state || 'DRAINING';
  if (a.deactivated) return 'DEACTIVATED';
  return a.active ? 'ACTIVE' : 'INACTIVE';
}

export function agents(root, route, ctx) {
  const {store} = ctx;
  let modes = null;
  const use = (a, k) => {
    const u = store.usage().agents.get(a.agent_info.id.value);
    return fmtRes(k, u ? u[k] : 0) + ' / ' + fmtRes(k, sums(a.total_resources)[k]);
  };
  let perAgent = null;
  const tasksOn = (a) => {
    if (!perAgent || perAgent.v !== store.version) {
      perAgent = {v: store.version, m: new Map()};
      for (const t of store.tasks.values()) {
        if (!TERMINAL.has(t.state) && t.agent_id)
          perAgent.m.set(t.agent_id.value, (perAgent.m.get(t.agent_id.value) || 0) + 1);
      }
    }
    return perAgent.m.get(a.agent_info.id.value) || 0;
  };
  const page = tablePage(root, route, ctx, {
    title: 'Agents',
    sort: 'hostname',
    controls: [{key: 'q', label: 'Search hostname, id, attributes'},
      {key: 'state', label: 'State', options: [['', 'any'], ['ACTIVE', 'active'],
        ['DEACTIVATED', 'deactivated'], ['DRAINING', 'draining'], ['DRAINED', 'drained'],
        ['DOWN', 'down']]}],
    columns: [
      {key: 'hostname', title: 'Host', width: '1.2fr', value: (a) => a.agent_info.hostname,
        href: (a) => '#/agents/' + enc(a.agent_info.id.value)},
      {key: 'id', title: 'ID', width: '2fr', value: (a) => a.agent_info.id.value},
      {key: 'state', title: 'State', width: '110px', value: (a) => agentState(a, modes),
        cls: (a) => 'state state-' + agentState(a, modes)},
      {key: 'cpus', title: 'CPUs (used / total)', width: '150px', value: (a) => sums(a.total_resources).cpus,
        text: (a) => use(a, 'cpus')},
      {key: 'mem', title: 'Mem (used / total)', width: '180px', value: (a) => sums(a.total_resources).mem,
        text: (a) => use(a, 'mem')},
      {key: 'tasks', title: 'Tasks', width: '70px', value: (a) => tasksOn(a)},
      {key: 'attrs', title: 'Attributes', width: '1.5fr', value: (a) => attrText(a.agent_info.attributes)},
    ],
    rows: () => {
      const q = (route.get('q') || '').toLowerCase();
      const st = route.get('state');
      const out = [];
      for (const a of store.agents.values()) {
        if (st && agentState(a, modes) !== st) continue;
        if (q && !(a.agent_info.hostname + ' ' + a.agent_info.id.value + ' ' +
            attrText(a.agent_info.attributes)).toLowerCase().includes(q)) continue;
        out.push(a);
      }
      return out;
    },
  });
  maintenanceModes().then((m) => { modes = m; page.update(); });
  return page;
}

export function agent(root, route, ctx) {
  const {store} = ctx;
  const id = route.path[1];
  let modes = null;
  const draw = () => {
    const a = store.agents.get(id);
    if (!a) { fill(root, h('h1', {}, 'Agent ' + id), h('p', {class: 'muted'}, 'Not registered.')); return; }
    const u = store.usage().agents.get(id) || sums([]);
    fill(root, h('h1', {}, 'Agent ' + a.agent_info.hostname), kv([
      ['ID', id],
      ['Address', a.pid || ''],
      ['State', h('span', {class: 'state state-' + agentState(a, modes)}, agentState(a, modes))],
      ['Version', a.version || ''],
      ['Registered', fmtNanos(a.registered_time && a.registered_time.nanoseconds)],
      ['Resources', resText(a.total_resources)],
      ['Reserved', resText((a.total_resources || []).filter(isReserved)) || '—'],
      ['Revocable', resText((a.total_resources || []).filter(isRevocable)) || '—'],
      ['Used by tasks', SCALARS.map((k) => k + ': ' + fmtRes(k, u[k])).join('; ')],
      ['Attributes', attrText(a.agent_info.attributes) || '—'],
      ['Drain', a.drain_info ? JSON.stringify(a.drain_info) : '—'],
      ['Tasks', h('a', {href: '#/tasks?agent=' + enc(id)}, 'tasks on this agent')],
    ]));
  };
  draw();
  maintenanceModes().then((m) => { modes = m; draw(); });
  return {update: draw, unmount() {}};
}

// ---- Frameworks ----------------------------------------------------------

const fwState = (f) => (f.completed ? 'COMPLETED' : f.active ? 'ACTIVE' : 'INACTIVE');

export function frameworks(root, route, ctx) {
  const {store} = ctx;
  const fwUse = (f, k) => {
    const u = store.usage().frameworks.get(f.framework_info.id.value);
    return u ? u[k] : 0;
  };
  const roles = (f) => (f.framework_info.roles || [f.framework_info.role || '*']).join(', ');
  return tablePage(root, route, ctx, {
    title: 'Frameworks',
    sort: 'name',
    controls: [{key: 'q', label: 'Search name, id, role'},
      {key: 'state', label: 'State', options: [['', 'any'], ['ACTIVE', 'active'],
        ['INACTIVE', 'inactive'], ['COMPLETED', 'completed']]}],
    columns: [
      {key: 'name', title: 'Name', width: '1.2fr', value: (f) => f.framework_info.name,
        href: (f) => '#/frameworks/' + enc(f.framework_info.id.value)},
      {key: 'id', title: 'ID', width: '2fr', value: (f) => f.framework_info.id.value},
      {key: 'roles', title: 'Roles', width: '1fr', value: roles},
      {key: 'state', title: 'State', width: '110px', value: fwState, cls: (f) => 'state state-' + fwState(f)},
      {key: 'tasks', title: 'Active tasks', width: '100px',
        value: (f) => (store.usage().counts.get(f.framework_info.id.value) || {active: 0}).active},
      {key: 'cpus', title: 'CPUs', width: '80px', value: (f) => fwUse(f, 'cpus'), text: (f) => fmtRes('cpus', fwUse(f, 'cpus'))},
      {key: 'mem', title: 'Mem', width: '100px', value: (f) => fwUse(f, 'mem'), text: (f) => fmtRes('mem', fwUse(f, 'mem'))},
      {key: 'registered', title: 'Registered', width: '170px',
        value: (f) => Number((f.registered_time || {}).nanoseconds || 0),
        text: (f) => fmtNanos((f.registered_time || {}).nanoseconds)},
    ],
    rows: () => {
      const q = (route.get('q') || '').toLowerCase();
      const st = route.get('state');
      return [...store.frameworks.values()].filter((f) =>
        (!st || fwState(f) === st) &&
        (!q || (f.framework_info.name + ' ' + f.framework_info.id.value + ' ' + roles(f)).toLowerCase().includes(q)));
    },
  });
}

export function framework(root, route, ctx) {
  const {store} = ctx;
  const id = route.path[1];
  const draw = () => {
    const f = store.frameworks.get(id);
    if (!f) { fill(root, h('h1', {}, 'Framework ' + id), h('p', {class: 'muted'}, 'Unknown.')); return; }
    const fi = f.framework_info;
    const u = store.usage();
    const c = u.counts.get(id) || {active: 0, total: 0};
    const use = u.frameworks.get(id) || sums([]);
    fill(root, h('h1', {}, 'Framework ' + fi.name), kv([
      ['ID', id],
      ['State', h('span', {class: 'state state-' + fwState(f)}, fwState(f))],
      ['User', fi.user || ''],
      ['Principal', fi.principal || '—'],
      ['Roles', (fi.roles || [fi.role || '*']).join(', ')],
      ['Capabilities', (fi.capabilities || []).map((x) => x.type).join(', ') || '—'],
      ['Registered', fmtNanos((f.registered_time || {}).nanoseconds)],
      ['Allocated (tasks)', SCALARS.map((k) => k + ': ' + fmtRes(k, use[k])).join('; ')],
      ['Tasks', h('a', {href: '#/tasks?framework=' + enc(id)}, `${c.active} active, ${c.total} in all`)],
    ]));
  };
  draw();
  return {update: draw, unmount() {}};
}

// ---- Tasks ---------------------------------------------------------------

export const taskHref = (t) => '#/tasks/' + enc(t.framework_id.value) + '/' + enc(t.task_id.value);

export function tasks(root, route, ctx) {
  const {store} = ctx;
  const states = ['TASK_STAGING', 'TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING',
    'TASK_FINISHED', 'TASK_FAILED', 'TASK_KILLED', 'TASK_LOST', 'TASK_ERROR',
    'TASK_DROPPED', 'TASK_UNREACHABLE', 'TASK_GONE'];
  const res = (t, k) => sums(t.resources)[k];
  return tablePage(root, route, ctx, {
    title: 'Tasks',
    sort: 'updated',
    desc: true,
    controls: [{key: 'q', label: 'Search id, name, state, framework, agent'},
      {key: 'state', label: 'State', options: [['', 'any'], ['active', 'not terminal'],
        ['terminal', 'terminal'], ...states.map((s) => [s, s])]}],
    columns: [
      {key: 'id', title: 'ID', width: '1.4fr', value: (t) => t.task_id.value, href: taskHref},
      {key: 'name', title: 'Name', width: '1fr', value: (t) => t.name},
      {key: 'state', title: 'State', width: '150px', value: (t) => t.state, cls: (t) => 'state state-' + t.state},
      {key: 'framework', title: 'Framework', width: '1fr', value: (t) => fwName(store, t.framework_id.value)},
      {key: 'agent', title: 'Agent', width: '1fr', value: (t) => (t.agent_id ? agentHost(store, t.agent_id.value) : '')},
      {key: 'cpus', title: 'CPUs', width: '70px', value: (t) => res(t, 'cpus'), text: (t) => fmtRes('cpus', res(t, 'cpus'))},
      {key: 'mem', title: 'Mem', width: '90px', value: (t) => res(t, 'mem'), text: (t) => fmtRes('mem', res(t, 'mem'))},
      {key: 'updated', title: 'Updated', width: '190px', value: lastTime, text: (t) => fmtTime(lastTime(t))},
    ],
    rows: () => {
      const q = (route.get('q') || '').toLowerCase();
      const st = route.get('state');
      const fw = route.get('framework');
      const ag = route.get('agent');
      const out = [];
      for (const t of store.tasks.values()) {
        if (st === 'active' ? TERMINAL.has(t.state) : st === 'terminal' ? !TERMINAL.has(t.state) : st && t.state !== st) continue;
        if (fw && t.framework_id.value !== fw) continue;
        if (ag && (!t.agent_id || t.agent_id.value !== ag)) continue;
        if (q && !t.search.includes(q)) continue;
        out.push(t);
      }
      return out;
    },
  });
}

export function task(root, route, ctx) {
  const {store} = ctx;
  const [, fw, id] = route.path;
  const draw = () => {
    const t = store.task(fw, id);
    if (!t) { fill(root, h('h1', {}, 'Task ' + id), h('p', {class: 'muted'}, 'Unknown.')); return; }
    const ag = t.agent_id ? t.agent_id.value : null;
    fill(root, h('h1', {}, 'Task ' + id), kv([
      ['Name', t.name],
      ['State', h('span', {class: 'state state-' + t.state}, t.state)],
      ['Framework', h('a', {href: '#/frameworks/' + enc(fw)}, fwName(store, fw))],
      ['Agent', ag ? h('a', {href: '#/agents/' + enc(ag)}, agentHost(store, ag)) : '—'],
      ['Resources', resText(t.resources)],
      ['Sandbox', ag ? h('a', {id: 'sandbox-link', href: `#/sandbox/${enc(ag)}/${enc(fw)}/${enc(id)}`}, 'browse the sandbox') : '—'],
    ]), h('h2', {}, 'State history'), h('table', {class: 'kv', id: 'history'},
        h('tr', {}, h('th', {}, 'Time'), h('th', {}, 'State'), h('th', {}, 'Source'), h('th', {}, 'Reason'), h('th', {}, 'Message')),
        t.statuses.map((s) => h('tr', {}, h('td', {}, fmtTime(s.timestamp)),
            h('td', {class: 'state state-' + s.state}, s.state), h('td', {}, s.source || ''),
            h('td', {}, s.reason || ''), h('td', {}, s.message || '')))));
  };
  draw();
  return {update: draw, unmount() {}};
}

// ---- Roles ---------------------------------------------------------------

function quotaText(q) {
  return Object.entries(q || {}).map(([k, v]) => k + ':' + fmtRes(k, v.value)).join('; ') || '—';
}

export function roles(root, route, ctx) {
  const box = h('div');
  fill(root, h('div', {class: 'toolbar'}, h('h1', {}, 'Roles'),
      h('button', {onclick: () => load()}, 'Refresh')), box);
  const load = async () => {
    try {
      const [r, q] = await Promise.all([operatorCall('GET_ROLES'), operatorCall('GET_QUOTA')]);
      const configs = new Map();
      const st = (q.get_quota && q.get_quota.status) || {};
      for (const c of st.configs || []) configs.set(c.role, c);
      const list = (r.get_roles && r.get_roles.roles) || [];
      for (const role of configs.keys()) if (!list.some((x) => x.name === role)) list.push({name: role});
      list.sort((a, b) => (a.name < b.name ? -1 : 1));
      fill(box, list.length ? h('table', {class: 'kv', id: 'roles'},
          h('tr', {}, ['Role', 'Weight', 'Frameworks', 'Allocated', 'Quota guarantees', 'Quota limits']
              .map((x) => h('th', {}, x))),
          list.map((x) => {
            const c = configs.get(x.name) || {};
            return h('tr', {}, h('td', {}, x.name), h('td', {class: 'num'}, String(x.weight ?? 1)),
                h('td', {}, ((x.frameworks || []).map((f) => fwName(ctx.store, f.value))).join(', ') || '—'),
                h('td', {}, resText(x.allocated || x.resources) || '—'),
                h('td', {}, quotaText(c.guarantees)), h('td', {}, quotaText(c.limits)));
          })) : h('p', {class: 'muted'}, 'No roles with weights, quota or frameworks.'));
    } catch (e) { fill(box, h('p', {class: 'error'}, e.message)); }
  };
  load();
  return {update() {}, unmount() {}};
}

// ---- Maintenance ---------------------------------------------------------

export function maintenance(root, route, ctx) {
  const box = h('div');
  fill(root, h('div', {class: 'toolbar'}, h('h1', {}, 'Maintenance'),
      h('button', {onclick: () => load()}, 'Refresh')), box);
  const machine = (m) => [m.hostname, m.ip].filter(Boolean).join(' / ');
  const load = async () => {
    try {
      const [s, st] = await Promise.all([operatorCall('GET_MAINTENANCE_SCHEDULE'),
        operatorCall('GET_MAINTENANCE_STATUS')]);
      const windows = ((s.get_maintenance_schedule || {}).schedule || {}).windows || [];
      const status = (st.get_maintenance_status || {}).status || {};
      const modes = [
        ...(status.draining_machines || []).map((d) => [machine(d.id), 'DRAINING',
          (d.statuses || []).map((x) => `${x.framework_id.value}: ${x.status}`).join('; ')]),
        ...(status.down_machines || []).map((m) => [machine(m), 'DOWN', '']),
      ];
      fill(box, h('h2', {}, 'Schedule'), windows.length ? h('table', {class: 'kv', id: 'windows'},
          h('tr', {}, ['Machines', 'Start', 'Duration'].map((x) => h('th', {}, x))),
          windows.map((w) => {
            const u = w.unavailability || {};
            return h('tr', {}, h('td', {}, (w.machine_ids || []).map(machine).join(', ')),
                h('td', {}, fmtNanos(u.start && u.start.nanoseconds)),
                h('td', {}, u.duration ? fmtDuration(u.duration.nanoseconds) : 'indefinite'));
          })) : h('p', {class: 'muted'}, 'No maintenance scheduled.'),
      h('h2', {}, 'Machines'), modes.length ? h('table', {class: 'kv', id: 'machines'},
          h('tr', {}, ['Machine', 'Mode', 'Inverse offers'].map((x) => h('th', {}, x))),
          modes.map(([m, mode, inv]) => h('tr', {}, h('td', {}, m),
              h('td', {class: 'state state-' + mode}, mode), h('td', {}, inv || '—'))))
        : h('p', {class: 'muted'}, 'No machine is draining or down.'));
    } catch (e) { fill(box, h('p', {class: 'error'}, e.message)); }
  };
  load();
  return {update() {}, unmount() {}};
}
