#!/usr/bin/env bash
# `systemd-analyze verify` of the installed systemd units
# (offerd-master.service, offerd-agent.service): syntax, known keys and
# values, an executable ExecStart. Needs systemd-analyze (Debian's systemd
# package), not a running systemd: CI machines without systemd as PID 1
# verify here what they cannot start. Exits 77 (skipped) without the tool.
#   tests/check-units.sh <build dir> <prefix>
set -euo pipefail
build=$1 prefix=$2
command -v systemd-analyze >/dev/null || {
    echo "skip: no systemd-analyze"
    exit 77
}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
DESTDIR=$D cmake --install "$build" >/dev/null
# Point the units' paths into DESTDIR (systemd-analyze checks that
# ExecStart exists), keeping their names: verify wants the unit file name.
mkdir "$D/verify"
for u in offerd-master offerd-agent; do
    sed "s|=$prefix/|=$D$prefix/|g" "$D$prefix/lib/systemd/system/$u.service" \
        >"$D/verify/$u.service"
    grep -q "^ExecStart=$D" "$D/verify/$u.service" || {
        echo "FAIL: $u.service: ExecStart is not under $prefix" >&2
        exit 1
    }
done
out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify \
    "$D/verify/offerd-master.service" "$D/verify/offerd-agent.service" 2>&1) ||
    {
        echo "$out" >&2
        echo "FAIL: systemd-analyze verify" >&2
        exit 1
    }
# verify warns (unknown keys, bad values) but still exits 0: any line about
# our units fails the test.
if grep -q 'offerd-' <<<"$out"; then
    echo "$out" >&2
    echo "FAIL: systemd-analyze verify warns about the units" >&2
    exit 1
fi
echo "ok: systemd-analyze verify offerd-master.service offerd-agent.service"
