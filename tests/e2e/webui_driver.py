#!/usr/bin/python3
"""Drive the offerd web UI in headless Chromium over the DevTools protocol.

Started by e2e_webui (tests/e2e/e2e_webui.c) against a cluster it runs, or
by scripts/webui-screenshots.sh. It opens the UI once and then only changes
the location hash, checking that every page renders the cluster's data;
launches a task with offerd-execute while the page is open and waits for
it to appear without a reload; opens the task's sandbox and waits for the
line the task printed in the live tail. With --screenshots DIR it saves a
PNG of each page there.

Every wait has a deadline; Chromium runs in its own process group with a
temporary profile, both removed on every exit path. Exits 0 when all checks
pass, 1 with a one-line reason otherwise.
"""
import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # Debian: python3-websocket


class Failure(Exception):
    pass


class Browser:
    def __init__(self, chromium, deadline, parent):
        self.deadline = deadline
        self.profile = tempfile.mkdtemp(prefix="offerd-webui-chromium-",
                                        dir=parent)
        args = [chromium, "--headless=new", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking",
                "--remote-debugging-port=0", "--remote-allow-origins=*",
                "--user-data-dir=" + self.profile, "--window-size=1366,860",
                "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        self.ws = None
        self.next_id = 0

    def connect(self):
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        port = self.wait(lambda: _read_port(port_file), "Chromium's port")
        def page():
            with urllib.request.urlopen(
                    "http://127.0.0.1:%d/json/list" % port, timeout=5) as r:
                for t in json.load(r):
                    if t.get("type") == "page":
                        return t["webSocketDebuggerUrl"]
            return None
        url = self.wait(page, "a page target")
        self.ws = websocket.create_connection(url, timeout=10,
                                              suppress_origin=True)
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method,
                                 "params": params}))
        while True:
            if time.monotonic() > self.deadline:
                raise Failure("deadline passed waiting for " + method)
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise Failure("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr,
                      returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            return None
        return r.get("result", {}).get("value")

    def wait(self, fn, what, timeout=None):
        log("waiting for " + what)
        end = self.deadline if timeout is None else min(
            self.deadline, time.monotonic() + timeout)
        while True:
            try:
                v = fn()
            except (OSError, ValueError):
                v = None
            if v:
                return v
            if time.monotonic() > end:
                raise Failure("timed out waiting for " + what)
            time.sleep(0.1)

    def wait_js(self, expr, what, timeout=None):
        return self.wait(lambda: self.eval(expr), what, timeout)

    def screenshot(self, path):
        r = self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        try:
            if self.ws is not None:
                self.ws.close()
        except OSError:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def log(text):
    print("webui_driver: %.1f s: %s" % (time.monotonic() - START, text),
          file=sys.stderr, flush=True)


START = time.monotonic()


def _read_port(path):
    with open(path) as f:
        line = f.readline().strip()
    return int(line) if line else None


def text_of(sel):
    return ("(() => { const e = document.querySelector(%s);"
            " return e ? e.textContent : ''; })()" % json.dumps(sel))


def page_has(b, hash_, sel, needles, what):
    """Go to hash_ (without reloading) and wait until sel holds needles."""
    b.eval("location.hash = %s" % json.dumps(hash_))
    cond = ("(() => { if (document.getElementById('main').dataset.ready"
            " !== '1' && !document.querySelector(%s)) return false;"
            " const t = %s; return %s.every((n) => t.includes(n)); })()" %
            (json.dumps(sel), text_of(sel), json.dumps(needles)))
    b.wait_js(cond, what)


SCALE_JS = """(async () => {
  const s = window.offerd.store;
  const agents = [], tasks = [];
  const res = (c, m) => [{name: 'cpus', type: 'SCALAR', scalar: {value: c}},
                         {name: 'mem', type: 'SCALAR', scalar: {value: m}}];
  for (let i = 0; i < %(agents)d; i++)
    agents.push({agent_info: {id: {value: 'scale-S' + i}, hostname: 'host-' + i,
      attributes: [{name: 'rack', type: 'TEXT', text: {value: 'r' + (i %% 40)}}]},
      active: true, deactivated: false, total_resources: res(32, 131072)});
  for (let i = 0; i < %(tasks)d; i++)
    tasks.push({task_id: {value: 't-' + i}, name: 'job-' + (i %% 500),
      framework_id: {value: 'scale-fw'}, agent_id: {value: 'scale-S' + (i %% %(agents)d)},
      state: 'TASK_RUNNING', resources: res(0.1, 64),
      statuses: [{state: 'TASK_RUNNING', timestamp: 1.7e9 + i}]});
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const out = {};
  let t0 = performance.now();
  s.subscribed({get_state: {get_agents: {agents}, get_frameworks: {frameworks: [
    {framework_info: {id: {value: 'scale-fw'}, name: 'scale', user: 'u', roles: ['*']},
     active: true}]}, get_tasks: {tasks}}});
  await frame();
  out.subscribed_ms = performance.now() - t0;
  t0 = performance.now();
  location.hash = '#/tasks?sort=updated&desc=1';
  await new Promise((r) => addEventListener('hashchange', r, {once: true}));
  await frame();
  out.tasks_page_ms = performance.now() - t0;
  out.shown = document.querySelector('#main .toolbar .muted').textContent;
  out.rows_in_dom = document.querySelectorAll('.vt-row').length;
  t0 = performance.now();
  for (let i = 0; i < 1000; i++)
    s.apply({type: 'TASK_UPDATED', task_updated: {framework_id: {value: 'scale-fw'},
      state: 'TASK_FINISHED', status: {task_id: {value: 't-' + i}, state: 'TASK_FINISHED',
      timestamp: 1.8e9 + i}}});
  await frame();
  await new Promise((r) => setTimeout(r, 300));
  await frame();
  out.updates_1000_ms = performance.now() - t0 - 300;
  out.top_row = document.querySelector('.vt-row').textContent;
  t0 = performance.now();
  const body = document.querySelector('.vt-body');
  body.scrollTop = body.scrollHeight;
  await frame();
  out.scroll_ms = performance.now() - t0;
  out.rows_in_dom_after_scroll = document.querySelectorAll('.vt-row').length;
  t0 = performance.now();
  location.hash = '#/tasks?q=job-7&state=TASK_FINISHED';
  await new Promise((r) => addEventListener('hashchange', r, {once: true}));
  await frame();
  out.filter_ms = performance.now() - t0;
  out.filtered = document.querySelector('#main .toolbar .muted').textContent;
  t0 = performance.now();
  location.hash = '#/agents?q=host-99';
  await new Promise((r) => addEventListener('hashchange', r, {once: true}));
  await frame();
  out.agents_page_ms = performance.now() - t0;
  out.agents_shown = document.querySelector('#main .toolbar .muted').textContent;
  return JSON.stringify(out);
})()"""


def scale_check(b, shots, agents=10000, tasks=100000):
    """Load a synthetic cluster of agents and tasks into the page's store
    and check that tables stay virtualized; print the timings."""
    log("scale check: %d agents, %d tasks" % (agents, tasks))
    r = json.loads(b.eval(SCALE_JS % {"agents": agents, "tasks": tasks}))
    log("scale figures: " + json.dumps(r, sort_keys=True))
    if r["shown"] != "%d shown" % tasks:
        raise Failure("scale: tasks page shows %r" % r["shown"])
    if r["rows_in_dom"] > 200 or r["rows_in_dom_after_scroll"] > 200:
        raise Failure("scale: %d rows in the DOM" % r["rows_in_dom"])
    # 1000 finished (t-0..t-999), named job-0..job-499 twice: job-7 and
    # job-70..job-79 match "job-7".
    if r["filtered"] != "22 shown":
        raise Failure("scale: filter shows %r" % r["filtered"])
    if "TASK_FINISHED" not in r["top_row"]:
        raise Failure("scale: updates not applied: %r" % r["top_row"])
    if r["agents_shown"] != "111 shown":
        raise Failure("scale: agents filter shows %r" % r["agents_shown"])
    if shots:
        b.eval("location.hash = '#/tasks'")
        b.wait_js(text_of("#main") + ".includes('%d shown')" % tasks,
                  "the large tasks table")
        b.screenshot(os.path.join(shots, "tasks-100k.png"))


RECORDIO_JS = """(async () => {
  const {RecordIO} = await import('/static/stream.js');
  const enc = new TextEncoder();
  const rec = (s) => enc.encode(enc.encode(s).length + '\\n' + s);
  const cat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let k = 0;
    for (const p of parts) { out.set(p, k); k += p.length; }
    return out;
  };
  const fail = [];
  const stream = cat(rec('{"a":1}'), rec('{"b":"\u00e9t\u00e9 \u2603"}'), rec(''),
                     rec('x'.repeat(200000)));
  const want = ['{"a":1}', '{"b":"\u00e9t\u00e9 \u2603"}', '', 'x'.repeat(200000)];
  // Whole, byte by byte, and in chunks of 7: the same records.
  for (const size of [stream.length, 1, 7]) {
    const r = new RecordIO();
    const got = [];
    for (let i = 0; i < stream.length; i += size)
      got.push(...r.feed(stream.subarray(i, i + size)));
    if (JSON.stringify(got) !== JSON.stringify(want)) fail.push('chunks of ' + size);
  }
  for (const bad of ['x\\n{}', '12345678901234567890\\n', '-1\\n']) {
    let threw = false;
    try { new RecordIO().feed(enc.encode(bad)); } catch (e) { threw = true; }
    if (!threw) fail.push('accepted ' + JSON.stringify(bad));
  }
  return fail.length ? fail.join('; ') : 'ok';
})()"""


def restart_check(b, a, task_id):
    """Ask the test to restart the master (by creating a.restart_file)
    and check that the page notices, subscribes again by itself and shows
    the cluster as the agent and the framework come back."""
    page_has(b, "#/tasks", ".vt-body", [task_id], "the tasks page")
    with open(a.restart_file, "w") as f:
        f.write("restart\n")
    b.wait_js("document.getElementById('conn').dataset.state === 'down'",
              "the page to see the stream drop", timeout=30)
    b.wait_js("document.getElementById('conn').dataset.state === 'live'",
              "the page to subscribe again", timeout=30)
    b.wait_js("document.querySelector('.vt-body') && document.querySelector("
              "'.vt-body').textContent.includes(%s)" % json.dumps(task_id),
              "the task back after the master's restart")
    page_has(b, "#/agents", ".vt-body", [a.hostname],
             "the agent back after the master's restart")
    if b.eval("window.__sameDocument") != "yes":
        raise Failure("the page reloaded")


def run(a):
    deadline = time.monotonic() + a.timeout
    b = Browser(a.chromium, deadline, a.profile_parent)
    execute = None
    shots = a.screenshots
    try:
        b.connect()
        base = "http://%s/" % a.master
        b.call("Page.navigate", url=base + "#/")
        b.wait_js("document.getElementById('conn') &&"
                  " document.getElementById('conn').dataset.state === 'live'",
                  "the event stream")
        # The RecordIO decoder, fed records split at every byte.
        r = b.eval(RECORDIO_JS)
        if r != "ok":
            raise Failure("RecordIO decoder: %s" % r)
        # Set once: still there at the end means the page never reloaded.
        b.eval("window.__sameDocument = 'yes'")
        page_has(b, "#/", "#card-agents", ["Agents", "1"],
                 "the overview's agents")
        b.wait_js("(() => { const t = document.getElementById('totals');"
                  " return t && !t.textContent.includes('…'); })()",
                  "the overview's resource totals")
        page_has(b, "#/agents", ".vt-body", [a.hostname, a.attribute],
                 "the agents table")
        if shots:
            b.screenshot(os.path.join(shots, "agents.png"))
        page_has(b, "#/roles", "#roles", [a.role, a.weight],
                 "the roles table")
        if shots:
            b.screenshot(os.path.join(shots, "roles.png"))
        page_has(b, "#/maintenance", "#windows", [a.hostname],
                 "the maintenance schedule")
        if shots:
            b.screenshot(os.path.join(shots, "maintenance.png"))

        # A task launched now must show up in the open page.
        page_has(b, "#/tasks", ".vt-head", ["Updated"], "the tasks page")
        execute = subprocess.Popen(
            [a.execute, "--master=" + a.master, "--name=" + a.task_name,
             "--framework_name=webui-e2e", "--resources=cpus:0.1;mem:32",
             "--command=echo %s; echo to-stderr >&2; sleep 120" % a.marker],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        task_id = a.task_name + "-0"
        b.wait_js("document.querySelector('.vt-body').textContent"
                  ".includes(%s) && document.querySelector('.vt-body')"
                  ".textContent.includes('TASK_RUNNING')" %
                  json.dumps(task_id), "the launched task, live")
        if b.eval("window.__sameDocument") != "yes":
            raise Failure("the page reloaded")
        if shots:
            b.screenshot(os.path.join(shots, "tasks.png"))
        page_has(b, "#/frameworks", ".vt-body", ["webui-e2e", "ACTIVE"],
                 "the frameworks table")
        if shots:
            b.screenshot(os.path.join(shots, "frameworks.png"))
        page_has(b, "#/", "#card-tasks", ["TASK_RUNNING"],
                 "the overview's task states")
        if shots:
            b.screenshot(os.path.join(shots, "overview.png"))
        fw = b.wait_js("(() => { for (const t of window.offerd.store.tasks"
                       ".values()) if (t.task_id.value === %s) return"
                       " t.framework_id.value; })()" % json.dumps(task_id),
                       "the task's framework id")
        page_has(b, "#/tasks/%s/%s" % (fw, task_id), "#history",
                 ["TASK_STAGING", "TASK_RUNNING"], "the task's history")
        if shots:
            b.screenshot(os.path.join(shots, "task.png"))
        b.eval("document.getElementById('sandbox-link').click()")
        b.wait_js(text_of("#tail") + ".includes(%s)" % json.dumps(a.marker),
                  "the task's line in the sandbox tail")
        b.wait_js(text_of("#files") + ".includes('stdout')",
                  "the sandbox's file list")
        if shots:
            b.screenshot(os.path.join(shots, "sandbox.png"))
        if b.eval("window.__sameDocument") != "yes":
            raise Failure("the page reloaded")
        if a.restart_file:
            restart_check(b, a, task_id)
        if a.scale:
            scale_check(b, shots)
        return 0
    except Failure:
        # Say what the page showed, then fail.
        try:
            b.deadline = time.monotonic() + 5
            log("page: %s" % (b.eval("location.hash + ' | ' + document."
                                     "body.innerText.slice(0, 600)"),))
        except (Failure, OSError, websocket.WebSocketException):
            pass
        raise
    finally:
        if execute is not None:
            try:
                os.killpg(execute.pid, signal.SIGTERM)
                execute.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(execute.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                execute.wait()
        b.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--master", required=True, help="HOST:PORT")
    p.add_argument("--execute", required=True, help="offerd-execute binary")
    p.add_argument("--chromium", default="chromium")
    p.add_argument("--hostname", required=True, help="the agent's hostname")
    p.add_argument("--attribute", default="", help="an agent attribute text")
    p.add_argument("--role", default="", help="a role with a weight")
    p.add_argument("--weight", default="", help="that role's weight")
    p.add_argument("--task_name", default="webui")
    p.add_argument("--marker", default="offerd-webui-marker")
    p.add_argument("--profile_parent", default=None,
                   help="where Chromium's temporary profile goes")
    p.add_argument("--screenshots", default=None, help="save PNGs here")
    p.add_argument("--restart_file", default=None,
                   help="create it and expect the master to restart")
    p.add_argument("--scale", action="store_true",
                   help="also load 10,000 agents and 100,000 tasks")
    p.add_argument("--timeout", type=float, default=75.0)
    a = p.parse_args()
    try:
        return run(a)
    except (Failure, OSError, websocket.WebSocketException) as e:
        print("webui_driver: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
