// A virtualized table: only the rows in view (plus a few) exist in the
// DOM, absolutely placed in a spacer as tall as all rows, so 100,000 rows
// scroll as smoothly as 100. Sorting is by a column's value(); the caller
// filters and hands over the rows.

import {h} from './util.js';

const ROW = 28;    // px, as --row in app.css
const EXTRA = 8;   // rows rendered above and below the view

export class VTable {
  // columns: [{key, title, width, value(row), text(row)?, href(row)?,
  // cls(row)?}]; onSort(key, desc) when a header is clicked.
  constructor(columns, {sort, desc, onSort, empty = 'Nothing to show.'} = {}) {
    this.columns = columns;
    this.sortKey = sort || columns[0].key;
    this.desc = !!desc;
    this.onSort = onSort;
    this.emptyText = empty;
    this.rows = [];
    const grid = columns.map((c) => c.width || '1fr').join(' ');
    this.head = h('div', {class: 'vt-head', role: 'row'});
    this.head.style.gridTemplateColumns = grid;
    for (const c of columns) {
      const cell = h('div', {role: 'columnheader', 'data-key': c.key,
        onclick: () => this.clickSort(c.key)}, c.title);
      this.head.append(cell);
    }
    this.spacer = h('div', {class: 'vt-spacer'});
    this.body = h('div', {class: 'vt-body'}, this.spacer);
    this.empty = h('div', {class: 'vt-empty'}, empty);
    this.el = h('div', {class: 'vt', role: 'table'}, this.head, this.body);
    this.grid = grid;
    this.pool = [];
    this.frame = false;
    this.body.addEventListener('scroll', () => this.schedule());
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(this.body);
    this.markSort();
  }

  clickSort(key) {
    if (this.sortKey === key) this.desc = !this.desc;
    else { this.sortKey = key; this.desc = false; }
    this.markSort();
    if (this.onSort) this.onSort(this.sortKey, this.desc);
    this.setRows(this.rows);
  }

  markSort() {
    for (const cell of this.head.children)
      cell.dataset.sort = cell.dataset.key === this.sortKey ? (this.desc ? 'desc' : 'asc') : '';
  }

  // Replace the rows (sorted here) and render the visible part.
  setRows(rows) {
    const col = this.columns.find((c) => c.key === this.sortKey) || this.columns[0];
    const dir = this.desc ? -1 : 1;
    const keyed = rows.map((r) => [col.value(r), r]);
    keyed.sort((a, b) => (a[0] < b[0] ? -dir : a[0] > b[0] ? dir : 0));
    this.rows = keyed.map((x) => x[1]);
    this.spacer.style.height = this.rows.length * ROW + 'px';
    if (!this.rows.length) this.spacer.append(this.empty);
    else this.empty.remove();
    this.render();
  }

  schedule() {
    if (this.frame) return;
    this.frame = true;
    requestAnimationFrame(() => { this.frame = false; this.render(); });
  }

  render() {
    const top = this.body.scrollTop;
    const height = this.body.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW) - EXTRA);
    const last = Math.min(this.rows.length, Math.ceil((top + height) / ROW) + EXTRA);
    const need = Math.max(0, last - first);
    while (this.pool.length < need) {
      const row = h('div', {class: 'vt-row', role: 'row'});
      row.style.gridTemplateColumns = this.grid;
      for (let i = 0; i < this.columns.length; i++) row.append(h('div', {role: 'cell'}));
      this.spacer.append(row);
      this.pool.push(row);
    }
    for (let i = 0; i < this.pool.length; i++) {
      const row = this.pool[i];
      if (i >= need) { row.style.display = 'none'; continue; }
      const data = this.rows[first + i];
      row.style.display = '';
      row.style.top = (first + i) * ROW + 'px';
      this.columns.forEach((c, j) => {
        const cell = row.children[j];
        const text = String(c.text ? c.text(data) : c.value(data) ?? '');
        const href = c.href ? c.href(data) : null;
        cell.className = c.cls ? c.cls(data) : '';
        cell.title = text;
        if (href) {
          let a = cell.firstChild;
          if (!a || a.nodeName !== 'A') { cell.textContent = ''; a = cell.appendChild(h('a')); }
          a.href = href;
          a.textContent = text;
        } else if (cell.textContent !== text || cell.firstChild?.nodeName === 'A') {
          cell.textContent = text;
        }
      });
    }
  }

  destroy() { this.resize.disconnect(); }
}
