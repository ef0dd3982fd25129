#!/usr/bin/env bash
# Make the web UI's screenshots in docs/screenshots/ (or the directory given):
# build offerd, run a master and an agent on free loopback ports in a
# temporary directory, give them a role weight, a quota and a maintenance
# window, and let tests/e2e/webui_driver.py (headless Chromium) visit every
# page, launch a task and follow its sandbox, then load 10,000 agents and
# 100,000 synthetic tasks for the large-table shot. Everything it started is
# stopped and removed on exit.
#   scripts/webui-screenshots.sh [output dir]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/docs/screenshots}")
dir=$("$top/scripts/build.sh")
tmp=$(mktemp -d /tmp/offerd-screenshots-XXXXXX)
mkdir -p "$out"
free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(free_port)
agent_port=$(free_port)
master= agent=
cleanup() {
    [ -n "$agent" ] && kill -USR1 "$agent" 2>/dev/null && wait "$agent" || true
    [ -n "$master" ] && kill "$master" 2>/dev/null && wait "$master" || true
    rm -rf "$tmp"
}
trap cleanup EXIT

"$dir/src/master/offerd" --ip=127.0.0.1 --port="$port" --work_dir="$tmp/master" \
    --registry=in_memory --webui_dir="$top/webui" --cluster=demo \
    >"$tmp/master.log" 2>&1 &
master=$!
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
    kill -0 "$master" || { cat "$tmp/master.log"; exit 1; }
    sleep 0.1
done
"$dir/src/agent/offerd-agent" --master="127.0.0.1:$port" --ip=127.0.0.1 \
    --port="$agent_port" --work_dir="$tmp/agent" --hostname=agent-1.demo \
    --attributes='rack:r1;zone:z9' --resources='cpus:8;mem:16384;disk:65536' \
    >"$tmp/agent.log" 2>&1 &
agent=$!
until curl -s "http://127.0.0.1:$port/metrics/snapshot" |
    grep -q '"master/slaves_active":1'; do
    kill -0 "$agent" || { cat "$tmp/agent.log"; exit 1; }
    sleep 0.1
done
api() { curl -sf -X "$1" "http://127.0.0.1:$port$2" -H 'Content-Type: application/json' -d "$3" >/dev/null; }
api PUT /weights '[{"role":"eng","weight":2.5},{"role":"ops","weight":1}]'
api POST /api/v1 '{"type":"UPDATE_QUOTA","update_quota":{"quota_configs":[{"role":"eng","guarantees":{"cpus":{"value":2},"mem":{"value":4096}},"limits":{"cpus":{"value":4}}}]}}'
start=$(( ($(date +%s) + 86400) * 1000000000 ))
api POST /maintenance/schedule "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"agent-1.demo\",\"ip\":\"127.0.0.1\"}],\"unavailability\":{\"start\":{\"nanoseconds\":$start},\"duration\":{\"nanoseconds\":7200000000000}}}]}"

/usr/bin/python3 "$top/tests/e2e/webui_driver.py" --master="127.0.0.1:$port" \
    --execute="$dir/src/cli/offerd-execute" --hostname=agent-1.demo \
    --attribute=zone:z9 --role=eng --weight=2.5 --task_name=web \
    --marker='serving on :8080' --screenshots="$out" --scale \
    --profile_parent="$tmp"
echo "screenshots in $out"
