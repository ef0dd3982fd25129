#!/usr/bin/env bash
# Build the Debian package from scratch in a temporary folder with
# scripts/package.sh (a Release build under /usr, about 30 s on two cores)
# and check it with tests/check-deb.sh, which package.sh runs. Exits 77
# (skipped) without dpkg-deb or file (CPack's DEB generator needs both).
#   tests/check-package.sh <source dir>
set -euo pipefail
src=${1:?usage: $0 <source dir>}
for tool in dpkg-deb dpkg-shlibdeps file cpack; do
    command -v "$tool" >/dev/null || {
        echo "skip: no $tool"
        exit 77
    }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
deb=$(bash "$src/scripts/package.sh" "$tmp/build" 2>"$tmp/log") || {
    tail -n 40 "$tmp/log" >&2
    echo "FAIL: scripts/package.sh" >&2
    exit 1
}
grep '^ok: ' "$tmp/log"
echo "ok: built $(basename "$deb")"
