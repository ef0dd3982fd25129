// The operator event stream: POST /api/v1 {"type":"SUBSCRIBE"} answered by
// a chunked RecordIO stream of JSON events ("<length>\n<json>", the length
// in bytes). The first event, SUBSCRIBED, carries the whole state; later
// ones are applied to the store one by one. When the stream ends, fails or
// stays silent for three heartbeat intervals, it is reopened after a
// backoff (1 s doubling to 30 s, with jitter), and the new SUBSCRIBED
// replaces the state.

// Largest record accepted: a SUBSCRIBED of a very large cluster is big,
// but a length beyond this means the stream is not RecordIO.
const MAX_RECORD = 1 << 30;

// An incremental RecordIO decoder over bytes fed in any chunking.
export class RecordIO {
  constructor() {
    this.buf = new Uint8Array(64 * 1024);
    this.start = 0; // first unread byte
    this.end = 0;   // one past the last byte
    this.decoder = new TextDecoder();
  }

  // Feed a Uint8Array; returns the complete records (strings). Throws on
  // a malformed length.
  feed(bytes) {
    this.append(bytes);
    const out = [];
    for (;;) {
      let nl = -1;
      for (let i = this.start; i < this.end && i - this.start <= 12; i++) {
        if (this.buf[i] === 10) { nl = i; break; }
      }
      if (nl < 0) {
        if (this.end - this.start > 12) throw new Error('bad RecordIO length');
        break;
      }
      const lenText = this.decoder.decode(this.buf.subarray(this.start, nl));
      if (!/^[0-9]+$/.test(lenText)) throw new Error('bad RecordIO length');
      const len = Number(lenText);
      if (len > MAX_RECORD) throw new Error('RecordIO record too large');
      if (this.end - (nl + 1) < len) break;
      out.push(this.decoder.decode(this.buf.subarray(nl + 1, nl + 1 + len)));
      this.start = nl + 1 + len;
    }
    return out;
  }

  append(bytes) {
    const have = this.end - this.start;
    if (this.end + bytes.length > this.buf.length) {
      let cap = this.buf.length;
      while (cap < have + bytes.length) cap *= 2;
      const next = cap === this.buf.length ? this.buf : new Uint8Array(cap);
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
      this.start = 0;
      this.end = have;
    }
    this.buf.set(bytes, this.end);
    this.end += bytes.length;
  }
}

// Follow the stream forever, feeding store.subscribed(ev) and
// store.apply(ev); onStatus(state, text) reports "connecting", "live" or
// "down".
export function follow(store, onStatus) {
  let backoff = 1000;

  async function once() {
    const ctrl = new AbortController();
    let silence = null;
    let heartbeatMs = 15000;
    const arm = () => {
      clearTimeout(silence);
      silence = setTimeout(() => ctrl.abort(), 3 * heartbeatMs + 5000);
    };
    try {
      onStatus('connecting', 'connecting…');
      arm();
      const resp = await fetch('/api/v1', {
        method: 'POST',
        headers: {'Content-Type': 'application/json', 'Accept': 'application/json'},
        body: '{"type":"SUBSCRIBE"}',
        signal: ctrl.signal,
        cache: 'no-store',
      });
      if (!resp.ok) throw new Error(`${resp.status} ${(await resp.text()).trim()}`);
      const reader = resp.body.getReader();
      const rio = new RecordIO();
      for (;;) {
        const {value, done} = await reader.read();
        if (done) throw new Error('the master ended the stream');
        arm();
        for (const rec of rio.feed(value)) {
          const ev = JSON.parse(rec);
          if (ev.type === 'SUBSCRIBED') {
            const s = ev.subscribed || {};
            if (s.heartbeat_interval_seconds)
              heartbeatMs = s.heartbeat_interval_seconds * 1000;
            arm();
            store.subscribed(s);
            backoff = 1000;
            onStatus('live', 'live');
          } else {
            store.apply(ev);
          }
        }
      }
    } catch (e) {
      const why = e.name === 'AbortError' ? 'no heartbeat' : e.message;
      const wait = Math.round(backoff * (0.75 + Math.random() / 2));
      onStatus('down', `disconnected (${why}); retrying in ${Math.ceil(wait / 1000)} s`);
      clearTimeout(silence);
      setTimeout(once, wait);
      backoff = Math.min(backoff * 2, 30000);
      return;
    }
  }
  once();
}
