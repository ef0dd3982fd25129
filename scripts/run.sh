#!/usr/bin/env bash
# Build offerd and run a small cluster in the foreground: a master on
# 127.0.0.1:5050 and a local agent on 127.0.0.1:5051 offering this machine's
# cpus, mem and disk (detected; see docs/agent.md). State lives in
# ./.offerd/{master,agent}. Ctrl-C stops both (tasks the agent started are
# killed with them). The daemons run in their own sessions so that Ctrl-C
# reaches this script only, which stops them in order.
#   scripts/run.sh [extra master flags...]
# Environment: OFFERD_PORT (default 5050), OFFERD_AGENT_PORT (default 5051),
# OFFERD_AGENT_FLAGS (extra agent flags, split on spaces).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$("$top/scripts/build.sh")
port=${OFFERD_PORT:-5050}
agent_port=${OFFERD_AGENT_PORT:-5051}
mkdir -p "$top/.offerd/master" "$top/.offerd/agent"

setsid "$dir/src/master/offerd" --ip=127.0.0.1 --port="$port" \
    --work_dir="$top/.offerd/master" "$@" &
master=$!
agent=
stopping=
stop() {
    stopping=1
    trap - INT TERM EXIT
    # SIGUSR1 makes the agent kill its tasks before it exits.
    [ -n "$agent" ] && kill -USR1 "$agent" 2>/dev/null && wait "$agent" || true
    kill "$master" 2>/dev/null && wait "$master" || true
}
trap stop INT TERM EXIT

# Wait for the master to answer before starting the agent.
for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    kill -0 "$master" 2>/dev/null || { echo "offerd did not start" >&2; exit 1; }
    sleep 0.1
done

# shellcheck disable=SC2086
setsid "$dir/src/agent/offerd-agent" --master="127.0.0.1:$port" --ip=127.0.0.1 \
    --port="$agent_port" --work_dir="$top/.offerd/agent" \
    ${OFFERD_AGENT_FLAGS:-} &
agent=$!

cat >&2 <<MSG

offerd is running: master http://127.0.0.1:$port, agent http://127.0.0.1:$agent_port
Try, from another terminal:
  $dir/src/cli/offerd-execute --master=127.0.0.1:$port --name=hello --command='echo hello from offerd'
  curl -s http://127.0.0.1:$port/state | python3 -m json.tool | head -40
Ctrl-C stops the cluster.

MSG
wait -n "$master" "$agent" || true
[ -n "$stopping" ] || echo "a daemon exited; stopping the cluster" >&2
