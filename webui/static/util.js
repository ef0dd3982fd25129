// Small helpers shared by the pages: element building, formatting and
// resource arithmetic over Mesos v1 JSON Resource objects.

// h('div', {class: 'x', onclick: f}, child, 'text', ...): an element whose
// text children are set as text (never parsed as HTML).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const SCALARS = ['cpus', 'mem', 'disk', 'gpus'];

export function isReserved(r) {
  return (Array.isArray(r.reservations) && r.reservations.length > 0) ||
      (r.role !== undefined && r.role !== '*');
}

export function isRevocable(r) { return r.revocable !== undefined; }

// Sums of the scalar resources in list that pass keep: {cpus, mem, ...}.
export function sums(list, keep = () => true, into = null) {
  const out = into || {cpus: 0, mem: 0, disk: 0, gpus: 0};
  for (const r of list || []) {
    if (r.type !== 'SCALAR' || !r.scalar || !keep(r)) continue;
    if (r.name in out) out[r.name] += r.scalar.value;
  }
  return out;
}

export function fmtRes(name, v) {
  if (!v) return '0';
  if (name === 'mem' || name === 'disk') {
    if (v >= 1024 * 1024) return (v / 1024 / 1024).toFixed(1) + ' TB';
    if (v >= 1024) return (v / 1024).toFixed(1) + ' GB';
    return Math.round(v) + ' MB';
  }
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

// Resources as text, e.g. "cpus:0.5; mem:128 MB; ports:[31000-31005]".
export function resText(list) {
  const parts = [];
  for (const r of list || []) {
    let v;
    if (r.type === 'SCALAR') v = fmtRes(r.name, r.scalar && r.scalar.value);
    else if (r.type === 'RANGES')
      v = '[' + ((r.ranges && r.ranges.range) || [])
          .map((x) => x.begin + '-' + x.end).join(',') + ']';
    else if (r.type === 'SET') v = '{' + ((r.set && r.set.item) || []).join(',') + '}';
    let tag = '';
    if (isReserved(r)) {
      const rs = r.reservations || [];
      tag = '(' + (rs.length ? rs[rs.length - 1].role : r.role) + ')';
    }
    if (isRevocable(r)) tag += '{REV}';
    parts.push(r.name + tag + ':' + v);
  }
  return parts.join('; ');
}

export function attrText(list) {
  return (list || []).map((a) => {
    let v = '';
    if (a.type === 'SCALAR') v = a.scalar && a.scalar.value;
    else if (a.type === 'TEXT') v = a.text && a.text.value;
    else if (a.type === 'RANGES')
      v = '[' + ((a.ranges && a.ranges.range) || [])
          .map((x) => x.begin + '-' + x.end).join(',') + ']';
    else if (a.type === 'SET') v = '{' + ((a.set && a.set.item) || []).join(',') + '}';
    return a.name + ':' + v;
  }).join('; ');
}

// Seconds since the epoch (a float) as local date and time.
export function fmtTime(secs) {
  if (!secs) return '';
  const d = new Date(secs * 1000);
  return d.toLocaleString();
}

export function fmtNanos(ns) { return ns ? fmtTime(Number(ns) / 1e9) : ''; }

export function fmtDuration(ns) {
  let s = Math.round(Number(ns) / 1e9);
  const parts = [];
  for (const [u, n] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= n) { parts.push(Math.floor(s / n) + u); s %= n; }
  }
  if (s || !parts.length) parts.push(s + 's');
  return parts.join(' ');
}

export function fmtBytes(n) {
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + ' GiB';
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}

// POST an operator call (/api/v1, JSON); resolves to the response object,
// or rejects with the master's one-line reason.
export async function operatorCall(type, fields = {}) {
  const resp = await fetch('/api/v1', {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'Accept': 'application/json'},
    body: JSON.stringify({type, ...fields}),
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${type}: ${resp.status} ${text.trim()}`);
  return text ? JSON.parse(text) : {};
}
