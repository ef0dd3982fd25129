#!/usr/bin/env bash
# `cmake --install` into a temporary DESTDIR, then check what a user gets:
# the layout (daemons, tools, libofferd shared and static with headers and
# libofferd.pc, units, environment files, empty flag directories; no tests,
# benchmarks or examples), the units pointing at installed files, the
# installed daemons running, the shared library exporting only its API, and
# the example framework building against the installed copy with
# `pkg-config --cflags --libs libofferd` (shared) and --static.
#   tests/check-install.sh <build dir> <source dir> <cc> <prefix> <libdir>
#       <includedir> <sbindir> <bindir> <sysconfdir> [compiler flags...]
# (the directories are the build's absolute install paths; the compiler
# flags are the build's sanitizer flags, which its objects need to link).
set -euo pipefail
build=$1 src=$2 cc=$3 prefix=$4 libdir=$5 includedir=$6 sbindir=$7
bindir=$8 sysconfdir=$9
shift 9
cflags=("$@")

D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

DESTDIR=$D cmake --install "$build" >"$D.log" 2>&1 ||
    { cat "$D.log" >&2; rm -f "$D.log"; fail "cmake --install"; }
rm -f "$D.log"

# ---- Layout ----
for f in \
    "$sbindir/offerd" "$sbindir/offerd-agent" "$bindir/offerd-execute" \
    "$bindir/offerctl" "$prefix/share/man/man1/offerctl.1" \
    "$prefix/share/bash-completion/completions/offerctl" \
    "$libdir/libofferd.so" "$libdir/libofferd.so.0" "$libdir/libofferd.a" \
    "$libdir/pkgconfig/libofferd.pc" \
    "$includedir/offerd/scheduler.h" "$includedir/offerd/offer_pool.h" \
    "$includedir/offerd/placement.h" \
    "$includedir/offerd/proto/mesos/v1/scheduler.pb-c.h" \
    "$includedir/offerd/proto/mesos/v1/mesos.pb-c.h" \
    "$prefix/lib/systemd/system/offerd-master.service" \
    "$prefix/lib/systemd/system/offerd-agent.service" \
    "$sysconfdir/default/offerd-master" "$sysconfdir/default/offerd-agent"; do
    [ -e "$D$f" ] || fail "not installed: $f"
done
for x in "$sbindir/offerd" "$sbindir/offerd-agent" "$bindir/offerd-execute" \
    "$bindir/offerctl"; do
    [ -x "$D$x" ] || fail "not executable: $x"
done
for d in offerd-master offerd-agent; do
    [ -d "$D$sysconfdir/$d" ] || fail "no flag directory $sysconfdir/$d"
    # Every file in it would be read as a flag.
    [ -z "$(ls -A "$D$sysconfdir/$d")" ] || fail "$sysconfdir/$d is not empty"
done
stray=$(find "$D" \( -name '*bench*' -o -name 'test_*' -o -name 'e2e_*' \
    -o -name 'fuzz_*' -o -name '*example*' \) -print)
[ -z "$stray" ] || fail "installed what is not for users: $stray"

# ---- Units point at installed files ----
for u in offerd-master offerd-agent; do
    unit=$D$prefix/lib/systemd/system/$u.service
    exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
    [ -x "$D$exe" ] || fail "$u.service: ExecStart $exe is not installed"
    grep -qx "EnvironmentFile=-$sysconfdir/default/$u" "$unit" ||
        fail "$u.service does not read $sysconfdir/default/$u"
    grep -q -- "--flags_dir=.*:$sysconfdir/$u\$" "$unit" ||
        fail "$u.service does not read the flag directory $sysconfdir/$u"
    grep -qx "Type=notify" "$unit" || fail "$u.service is not Type=notify"
done

# ---- The installed daemons run ----
export LD_LIBRARY_PATH=$D$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Whole outputs are captured before grep reads them: `cmd | grep -q` fails
# under pipefail whenever cmd is still writing when grep exits (SIGPIPE).
help=$("$D$sbindir/offerd" --help)
grep -q -- '--flags_dir' <<<"$help" ||
    fail "installed offerd --help does not run"
"$D$sbindir/offerd-agent" --help >/dev/null || fail "installed offerd-agent"

# ---- libofferd.so exports its API only ----
others=$(nm -D --defined-only "$D$libdir/libofferd.so.0" |
    awk '{print $3}' | grep -v -E '^(offerd_[a-z]|mesos__|google__)' || true)
[ -z "$others" ] || fail "libofferd.so exports internals: $(echo "$others" | tr "\n" " " | head -c 300)"
syms=$(nm -D --defined-only "$D$libdir/libofferd.so.0")
grep -q ' offerd_sched_new$' <<<"$syms" ||
    fail "libofferd.so lacks offerd_sched_new"

# ---- Build the example framework against the installed copy ----
# PKG_CONFIG_SYSROOT_DIR maps the .pc file's paths into DESTDIR.
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D$libdir/pkgconfig
read -r -a pc <<<"$(pkg-config --cflags --libs libofferd)"
"$cc" "${cflags[@]}" -o "$D/example" "$src/examples/pool_framework.c" "${pc[@]}" ||
    fail "the example does not build with pkg-config --cflags --libs libofferd"
dyn=$(readelf -d "$D/example")
grep -q 'NEEDED.*\[libofferd\.so\.0\]' <<<"$dyn" ||
    fail "the example is not linked with libofferd.so.0"
# (Checked in the files, not with ldd: ldd runs the loader on the program,
# which a sanitizer build's runtime can make fail now and then.)
dyn=$(readelf -d "$D$libdir/libofferd.so.0")
grep -q 'SONAME.*\[libofferd\.so\.0\]' <<<"$dyn" ||
    fail "libofferd.so.0 has another SONAME"
# libofferd.a, then the private dependencies without -lofferd again (a
# sanitizer build links --no-as-needed, which would keep libofferd.so).
read -r -a pcs <<<"$(pkg-config --cflags --static --libs libofferd |
    sed 's/-lofferd\b//')"
"$cc" "${cflags[@]}" -static-libgcc -o "$D/example-static" \
    "$src/examples/pool_framework.c" -Wl,-Bstatic -lofferd -Wl,-Bdynamic \
    "${pcs[@]}" || fail "the example does not build with libofferd.a"
dyn=$(readelf -d "$D/example-static")
if grep -q 'libofferd' <<<"$dyn"; then
    fail "the static example still needs libofferd.so"
fi

echo "ok: install layout, units, libofferd.so exports, example built against it (shared and static)"
