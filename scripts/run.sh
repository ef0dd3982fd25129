#!/usr/bin/env bash
# Build offerd and run a master on 127.0.0.1:5050 in the foreground, with its
# work_dir in ./.offerd/. Ctrl-C stops it.
#   scripts/run.sh [extra master flags...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$("$top/scripts/build.sh")
mkdir -p "$top/.offerd/master"
exec "$dir/src/master/offerd" --ip=127.0.0.1 --port=5050 \
    --work_dir="$top/.offerd/master" "$@"
