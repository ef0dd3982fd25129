#!/usr/bin/env bash
# Check a built offerd .deb (scripts/package.sh runs this on what it
# builds): its control fields (Depends on the runtime libraries, adduser),
# its maintainer scripts and conffiles, and its files.
#   tests/check-deb.sh <offerd_*.deb>
set -euo pipefail
deb=${1:?usage: $0 <offerd_*.deb>}
fail() {
    echo "FAIL: $deb: $*" >&2
    exit 1
}
info=$(dpkg-deb -I "$deb")
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libevent-core libevent-extra libprotobuf-c libjansson libsqlite3 \
    libc6 adduser; do
    grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
for s in postinst prerm postrm conffiles; do
    grep -q " $s\$\| $s " <<<"$info" || fail "no $s"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -e "$deb" "$tmp/control"
for s in postinst prerm postrm; do
    [ -x "$tmp/control/$s" ] || fail "$s is not executable"
    sh -n "$tmp/control/$s" || fail "$s: shell syntax"
done
grep -qx /etc/default/offerd-master "$tmp/control/conffiles" || fail "conffiles"
grep -qx /etc/default/offerd-agent "$tmp/control/conffiles" || fail "conffiles"
files=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||')
for f in /usr/sbin/offerd /usr/sbin/offerd-agent /usr/bin/offerd-execute \
    /usr/bin/offerctl /usr/share/man/man1/offerctl.1 \
    /usr/share/bash-completion/completions/offerctl \
    /usr/lib/systemd/system/offerd-master.service \
    /usr/lib/systemd/system/offerd-agent.service \
    /etc/default/offerd-master /etc/default/offerd-agent \
    /etc/offerd-master /etc/offerd-agent \
    /usr/include/offerd/scheduler.h \
    /usr/include/offerd/proto/mesos/v1/scheduler.pb-c.h \
    /usr/share/doc/offerd/install.md; do
    grep -qx "$f" <<<"$files" || fail "lacks $f"
done
grep -q '^/usr/lib/.*/libofferd\.so\.0$' <<<"$files" || fail "lacks libofferd.so.0"
grep -q '^/usr/lib/.*/libofferd\.a$' <<<"$files" || fail "lacks libofferd.a"
grep -q '^/usr/lib/.*/pkgconfig/libofferd\.pc$' <<<"$files" || fail "lacks libofferd.pc"
unit=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/lib/systemd/system/offerd-master.service)
grep -q '^ExecStart=/usr/sbin/offerd --flags_dir=/etc/mesos-master:/etc/offerd-master$' <<<"$unit" ||
    fail "offerd-master.service does not run /usr/sbin/offerd with /etc's flag directories"
echo "ok: $deb: $(echo "$files" | grep -vc '/$') entries, Depends: $depends"
