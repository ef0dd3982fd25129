#!/usr/bin/env bash
# -Werror is a developer's option (OFFERD_WERROR), never a default: configure
# a throw-away build the way a user or packager would (no options, then the
# Release build type) and check that no compile command carries -Werror, and
# that OFFERD_WERROR=ON does add it.
#   tests/check-werror.sh <source dir>
set -euo pipefail
src=${1:?usage: $0 <source dir>}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
configure() { # <dir> <cmake args...>
    local dir=$1
    shift
    cmake -S "$src" -B "$tmp/$dir" "$@" >/dev/null
}
configure plain
configure release -DCMAKE_BUILD_TYPE=Release
configure dev -DOFFERD_WERROR=ON
for d in plain release; do
    if grep -q -- '-Werror' "$tmp/$d/compile_commands.json"; then
        echo "FAIL: a $d build compiles with -Werror; it must be OFFERD_WERROR's" >&2
        status=1
    fi
done
if ! grep -q -- '-Werror' "$tmp/dev/compile_commands.json"; then
    echo "FAIL: OFFERD_WERROR=ON does not add -Werror" >&2
    status=1
fi
[ $status -eq 0 ] && echo "ok: -Werror only with OFFERD_WERROR=ON"
exit $status
