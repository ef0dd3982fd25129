// The sandbox browser: the files of a task's latest run, and a live tail
// of one of them (stdout by default). The agent's /files/browse and
// /files/read are reached through the master's proxy,
// /agent/<agent_id>/files/..., since the page may not talk to the agent's
// own origin. The tail reads from the end (the last 64 KiB) and then
// follows the file: at once while it grows by whole chunks, otherwise once
// a second.

import {h, fmtBytes, fmtTime} from './util.js';

const CHUNK = 64 * 1024;
const KEEP = 1 << 20; // characters kept in the tail view

async function files(agent, op, params) {
  const q = new URLSearchParams(params).toString();
  const resp = await fetch(`/agent/${encodeURIComponent(agent)}/files/${op}?${q}`, {cache: 'no-store'});
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${op}: ${resp.status} ${text.trim()}`);
  return JSON.parse(text);
}

export function sandbox(root, route, ctx) {
  const [, agent, fw, taskId] = route.path;
  const file = route.get('file') || 'stdout';
  const list = h('div');
  const tail = h('pre', {class: 'tail', id: 'tail'});
  const note = h('span', {class: 'muted'});
  root.replaceChildren(
      h('div', {class: 'toolbar'}, h('h1', {}, 'Sandbox of ' + taskId),
          h('a', {href: `#/tasks/${encodeURIComponent(fw)}/${encodeURIComponent(taskId)}`}, 'task'), note),
      list,
      h('div', {class: 'tabs'}, ['stdout', 'stderr'].map((f) =>
        h('a', {href: '#', class: f === file ? 'active' : '', onclick: (e) => { e.preventDefault(); route.set('file', f); }}, f))),
      tail);
  let stopped = false;
  let timer = null;
  const encoder = new TextEncoder();

  const follow = async (path) => {
    let pos;
    try {
      const end = await files(agent, 'read', {path, offset: -1});
      pos = Math.max(0, end.offset - CHUNK);
    } catch (e) { tail.textContent = e.message; return; }
    const step = async () => {
      if (stopped) return;
      let more = false;
      try {
        const r = await files(agent, 'read', {path, offset: pos, length: CHUNK});
        if (stopped) return;
        if (r.data) {
          const atBottom = tail.scrollTop + tail.clientHeight >= tail.scrollHeight - 4;
          let text = tail.textContent + r.data;
          if (text.length > KEEP) text = text.slice(text.length - KEEP);
          tail.textContent = text;
          if (atBottom) tail.scrollTop = tail.scrollHeight;
          const n = encoder.encode(r.data).length;
          pos = r.offset + n;
          more = n >= CHUNK;
        }
        note.textContent = `following ${file}, ${fmtBytes(pos)}`;
      } catch (e) {
        note.textContent = e.message + ' (retrying)';
      }
      timer = setTimeout(step, more ? 0 : 1000);
    };
    step();
  };

  (async () => {
    try {
      // The task's runs, newest last: the latest is the one shown.
      const runs = await files(agent, 'browse', {path: `${fw}/${taskId}`});
      if (!runs.length) throw new Error('the task has no sandbox on its agent');
      runs.sort((a, b) => a.mtime - b.mtime);
      const run = runs[runs.length - 1].path;
      const entries = await files(agent, 'browse', {path: run});
      if (stopped) return;
      list.replaceChildren(h('table', {class: 'kv', id: 'files'},
          h('tr', {}, ['Name', 'Mode', 'Size', 'Modified'].map((x) => h('th', {}, x))),
          entries.filter((e) => !e.path.split('/').pop().startsWith('.')).map((e) => {
            const name = e.path.split('/').pop();
            const isFile = e.mode && e.mode[0] === '-';
            return h('tr', {}, h('td', {}, isFile ? h('a', {href: '#', onclick: (ev) => {
              ev.preventDefault(); route.set('file', name);
            }}, name) : name + '/'), h('td', {}, e.mode), h('td', {class: 'num'}, fmtBytes(e.size)),
            h('td', {}, fmtTime(e.mtime)));
          })));
      follow(run + '/' + file);
    } catch (e) {
      list.replaceChildren(h('p', {class: 'error'}, e.message));
    }
  })();
  return {update() {}, unmount() { stopped = true; clearTimeout(timer); }};
}
