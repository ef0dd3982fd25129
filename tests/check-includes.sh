#!/usr/bin/env bash
# Keeps the include graph of shared/DESIGN.md, header by header:
#   common <- allocator <- master;  common <- agent;  common <- sched <- cli
# and what tests may see ("zk/..." is tests/zk, the test ZooKeeper servers). Only quoted includes are ours: "common/x.h" names
# module common by its first path component; generated protobuf headers
# ("mesos/v1/mesos.pb-c.h", "offerd/agent.pb-c.h") are module pb; an include
# without a '/' is the file's own folder. Run: tests/check-includes.sh [top].
#
# What may include what is data, in the tables right below; a quoted
# include must pass all four rules:
#
# 1. LAYER: the modules each folder may include at all (tests/unit and
#    tests/fuzz: every module; tests/e2e: common/, the public offerd/
#    headers, the generated protobuf headers and its own harness).
#    EXCEPTIONS lets one file include one more header, and says why.
#
# 2. TEST_ONLY headers (*_private.h, *_fake.h ... of any module M) are for
#    src/M itself and the unit tests of M. A unit test's module is the first
#    word of its name (tests/unit/test_<word>[_*].c: agent, master, cli,
#    sched ..., with the aliases alloc = allocator, registry = master,
#    offer = sched; any other word is common). Common's test-only headers
#    (e.g. a fake HTTP request that drives handlers) serve the unit tests of
#    every module, and the fuzz targets.
#
# 3. COMMON_RULES: common headers by name pattern (the first match wins)
#    and the folders that may include them. A common header that no
#    pattern names is open to every folder that may include common/, but
#    for rule 4; so a new common header needs no edit here unless it must
#    be kept from someone.
#
# 4. The allocator is pure (DESIGN.md): it includes no common header that
#    brings in libevent, protobuf-c, jansson or a generated protobuf header,
#    directly or through another common header (worked out from the headers
#    themselves), nor any of those libraries itself. And only
#    src/common/http* include <event2/http*.h> (STYLE.md: wrap the library
#    at the edge).
#
# New headers of a module (say src/master/tasks.h) need no edit either:
# rule 1 already lets src/master, src/bench and the unit tests include
# master/*, and rule 2 keeps master/*_private.h to src/master and
# tests/unit/test_master*.c.
set -u
top=${1:-$(git rev-parse --show-toplevel)}
cd "$top" || exit 2

# 1. Layers (folder: modules it may include).
MODULES="common allocator master agent sched cli bench offerd"
declare -A LAYER=(
    [src/common]="common pb"
    [src/allocator]="common allocator"
    [src/master]="common allocator master pb"
    [src/agent]="common agent pb"
    [src/sched]="common sched offerd pb"
    [src/cli]="common sched cli offerd pb"
    [src/bench]="common allocator master agent bench offerd pb zk"
    [include/offerd]="offerd"
    [tests/unit]="$MODULES pb zk"
    [tests/fuzz]="$MODULES pb"
    [tests/e2e]="common offerd pb zk"
    [tests/zk]="common"
)

# One more header for one file (file header: reason).
EXCEPTIONS=(
    "tests/e2e/e2e_agent.c agent/checkpoint.h: crafts the checkpoint of its recovery test with the agent's own writer"
    "tests/e2e/harness_fw.c sched/fit.h: the test frameworks fit tasks into offers as offerd-execute and the offer pool do"
)

# 2. Test-only headers (basename patterns).
TEST_ONLY="*_private.h *_fake.h *_mock.h *_test.h *_testing.h"

# 3. Common headers (pattern: folders that may include it: why). Folders
# as in 1.; "tests" is every folder under tests/; "* -X" is every folder
# but X.
COMMON_RULES=(
    "common/http.h: src/common src/master src/agent src/sched src/bench tests: the HTTP server edge, for the daemons (and src/bench, which drives a master's handlers) (src/sched uses only its encoding and method types)"
    "common/http_client.h: src/common src/master src/agent src/sched src/cli src/bench tests: the HTTP client edge, for the agent, libofferd, offerctl, offerd-loadgen and the master's proxy of agents' /files (master/files_proxy.c)"
    "common/http*.h: src/common tests/unit: the HTTP edge's own parts and test seams"
    "common/clock.h: * -src/allocator: reads the clock; the allocator takes now as an argument"
    "common/fs.h: * -src/allocator: file I/O; the allocator does none"
    "common/recordio.h: * -src/allocator: a wire format; the allocator has none"
)

fail=0
report() {
    echo "$1"
    fail=1
}

# Which module a unit test tests (see 2.).
unit_module() {
    local w=${1##*/}
    w=${w#test_}
    w=${w%%[_.]*}
    case "$w" in
    alloc) echo allocator ;;
    registry) echo master ;;
    offer) echo sched ;;
    *) [[ " $MODULES " == *" $w "* ]] && echo "$w" || echo common ;;
    esac
}

# The unit tests of a module (see 2.), for messages.
unit_tests_of() {
    case "$1" in
    allocator) echo "tests/unit/test_alloc*.c" ;;
    master) echo "tests/unit/test_master*.c, test_registry*.c" ;;
    sched) echo "tests/unit/test_sched*.c, test_offer*.c" ;;
    *) echo "tests/unit/test_$1*.c" ;;
    esac
}

# 4. Common headers that bring in an I/O or codec library ("heavy"),
# directly or through other common headers: iterate to a fixed point.
declare -A heavy=()
changed=1
while [ $changed -eq 1 ]; do
    changed=0
    for h in src/common/*.h; do
        [ -e "$h" ] || continue
        name=common/${h##*/}
        [ -n "${heavy[$name]:-}" ] && continue
        why=""
        while IFS= read -r line; do
            if [[ $line =~ \<((event2/|protobuf-c/|jansson)[^\>]*)\> ]]; then
                why="it includes <${BASH_REMATCH[1]}>"
            elif [[ $line =~ \"([^\"]+\.pb-c\.h)\" ]]; then
                why="it includes \"${BASH_REMATCH[1]}\""
            elif [[ $line =~ \"(common/[^\"]+)\" ]] &&
                [ -n "${heavy[${BASH_REMATCH[1]}]:-}" ]; then
                why="it includes \"${BASH_REMATCH[1]}\" (${heavy[${BASH_REMATCH[1]}]})"
            fi
            [ -n "$why" ] && break
        done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$h")
        if [ -n "$why" ]; then
            heavy[$name]=$why
            changed=1
        fi
    done
done

# Whether the folders of a COMMON_RULES entry (" a b ", " * -c ") hold
# layer.
rule_allows() {
    local allowed=$1 layer=$2
    if [[ $allowed == " * "* ]]; then
        [[ $allowed != *" -$layer "* ]]
    else
        [[ $allowed == *" $layer "* ]] ||
            { [[ $layer == tests/* ]] && [[ $allowed == *" tests "* ]]; }
    fi
}

# Report include inc of file f (line n) unless f's folder may include it.
check_include() {
    local f=$1 n=$2 inc=$3 layer=${1%/*} mod allowed base e rule pat rest who
    if [[ $inc == *.pb-c.h ]]; then
        mod=pb
    elif [[ $inc == */* ]]; then
        mod=${inc%%/*}
    else
        return 0 # same folder
    fi
    # 1. The layer's modules, or an exception for this file.
    allowed=" ${LAYER[$layer]:-} "
    if [[ $allowed != *" $mod "* ]]; then
        for e in "${EXCEPTIONS[@]}"; do
            [[ $e == "$f $inc:"* ]] && return 0
        done
        report "$f:$n: may not include \"$inc\": $layer includes only its own folder's headers and modules:$allowed(tests/check-includes.sh, table 1)"
        return
    fi
    # 2. Test-only headers.
    base=${inc##*/}
    for pat in $TEST_ONLY; do
        # shellcheck disable=SC2053 # pat is a glob on purpose
        [[ $base == $pat ]] || continue
        if [ "$layer" = "src/$mod" ]; then
            return 0
        elif [ "$layer" = tests/unit ] &&
            { [ "$mod" = common ] || [ "$(unit_module "$f")" = "$mod" ]; }; then
            return 0
        elif [ "$layer" = tests/fuzz ] && [ "$mod" = common ]; then
            return 0 # fuzz targets drive handlers as unit tests do
        elif [ "$layer" = src/bench ] && [ "$inc" = common/http_fake.h ]; then
            return 0 # benchmarks fill a master through its handlers too
        fi
        if [ "$mod" = common ]; then
            report "$f:$n: may not include \"$inc\": a test-only header of common, for src/common and the unit tests (tests/check-includes.sh, table 2)"
        else
            report "$f:$n: may not include \"$inc\": a test-only header of $mod, for src/$mod and its unit tests ($(unit_tests_of "$mod"); tests/check-includes.sh, table 2)"
        fi
        return
    done
    [ "$mod" = common ] || return 0
    # 3. Common headers by name.
    for rule in "${COMMON_RULES[@]}"; do
        pat=${rule%%:*}
        # shellcheck disable=SC2053
        [[ $inc == $pat ]] || continue
        rest=${rule#*: }
        allowed=" ${rest%%:*} "
        if ! rule_allows "$allowed" "$layer"; then
            who="for:${allowed% }"
            if [[ $allowed == " * "* ]]; then
                who="kept from:${allowed#" *"}"
                who=${who// -/ }
                who=${who% }
            fi
            report "$f:$n: may not include \"$inc\": ${rest#*: }; it is $who (tests/check-includes.sh, table 3)"
            return
        fi
        break
    done
    # 4. The allocator stays pure.
    if [ "$layer" = src/allocator ] && [ -n "${heavy[$inc]:-}" ]; then
        report "$f:$n: may not include \"$inc\": the allocator is pure and $inc is not: ${heavy[$inc]} (tests/check-includes.sh, rule 4)"
    fi
    return 0
}

files=()
for d in $(printf '%s\n' "${!LAYER[@]}" | sort); do
    for f in "$d"/*.[ch]; do
        [ -e "$f" ] && files+=("$f")
    done
done

# Every include line of every file, in one pass.
while IFS= read -r hit; do
    f=${hit%%:*}
    rest=${hit#*:}
    n=${rest%%:*}
    line=${rest#*:}
    if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
        check_include "$f" "$n" "${BASH_REMATCH[1]}"
    elif [[ $line =~ \<event2/http ]] && [[ $f != src/common/http* ]]; then
        report "$f:$n: only src/common/http* may include <event2/http*.h> (tests/check-includes.sh, rule 4)"
    elif [[ $f == src/allocator/* ]] &&
        [[ $line =~ \<((event2/|protobuf-c/|jansson)[^\>]*)\> ]]; then
        report "$f:$n: the allocator includes no I/O or codec library: <${BASH_REMATCH[1]}> (tests/check-includes.sh, rule 4)"
    fi
done < <(grep -HnE '^[[:space:]]*#[[:space:]]*include' "${files[@]}")

[ $fail -eq 0 ] && echo "include graph ok (${#files[@]} files)"
exit $fail
