// The offerd web UI: a hash router over the pages, fed by the operator
// event stream (stream.js) through one store (store.js). Page state that a
// user sets (search, filters, sort) lives in the hash's query, so a URL
// reopens the same view.

import {Store} from './store.js';
import {follow} from './stream.js';
import * as pages from './pages.js';
import {sandbox} from './sandbox.js';

const store = new Store();
const ctx = {store};
const main = document.getElementById('main');
const conn = document.getElementById('conn');

// The route of the current hash: path segments and query, with set() that
// rewrites the query in place (no new history entry, no reload).
function parseRoute() {
  const raw = location.hash.replace(/^#\/?/, '');
  const qi = raw.indexOf('?');
  const path = (qi < 0 ? raw : raw.slice(0, qi)).split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(qi < 0 ? '' : raw.slice(qi + 1));
  return {
    path,
    get: (k) => params.get(k),
    set(k, v, quiet) {
      if (v) params.set(k, v); else params.delete(k);
      const q = params.toString();
      const hash = '#/' + path.map(encodeURIComponent).join('/') + (q ? '?' + q : '');
      history.replaceState(null, '', hash);
      if (!quiet) render();
    },
  };
}

// Page by the hash's first segment (and whether it has an id).
const table = {
  '': () => pages.overview,
  agents: (r) => (r.path[1] ? pages.agent : pages.agents),
  frameworks: (r) => (r.path[1] ? pages.framework : pages.frameworks),
  tasks: (r) => (r.path[2] ? pages.task : pages.tasks),
  sandbox: () => sandbox,
  roles: () => pages.roles,
  maintenance: () => pages.maintenance,
};
// Pages drawn from operator calls alone, without waiting for SUBSCRIBED.
const standalone = new Set(['roles', 'maintenance', 'sandbox']);

let current = null;

function render() {
  clearTimeout(pendingUpdate);
  pendingUpdate = null;
  if (current) current.unmount();
  current = null;
  const route = parseRoute();
  const name = route.path[0] || '';
  for (const a of document.querySelectorAll('#nav a'))
    a.classList.toggle('active', (a.dataset.page === 'overview' ? '' : a.dataset.page) === name);
  const page = table[name] ? table[name](route) : null;
  main.replaceChildren();
  main.dataset.page = name || 'overview';
  if (!page) {
    main.textContent = 'No such page.';
    return;
  }
  if (!store.loaded && !standalone.has(name)) {
    main.textContent = 'Waiting for the master…';
    main.dataset.ready = '';
    return;
  }
  current = page(main, route, ctx);
  main.dataset.ready = '1';
}

// Large clusters: a page's update (filter, sort, totals over every task)
// runs at most every BIG_GAP_MS, the last change always drawn.
const BIG = 5000;
const BIG_GAP_MS = 250;
let lastUpdate = 0;
let pendingUpdate = null;
function update() {
  pendingUpdate = null;
  lastUpdate = performance.now();
  if (current) current.update();
}

let wasLoaded = false;
store.listen(() => {
  // The first SUBSCRIBED (and each after a reconnection) draws the page
  // afresh; other changes update it in place.
  if (!wasLoaded || !current) { wasLoaded = store.loaded; render(); return; }
  const wait = BIG_GAP_MS - (performance.now() - lastUpdate);
  if (store.tasks.size + store.agents.size < BIG || wait <= 0) update();
  else if (!pendingUpdate) pendingUpdate = setTimeout(update, wait);
});

window.addEventListener('hashchange', render);
follow(store, (state, text) => {
  conn.dataset.state = state;
  conn.textContent = text;
  if (state !== 'live') wasLoaded = false;
});
render();

// For tests and the curious: the store behind the page.
window.offerd = {store};
