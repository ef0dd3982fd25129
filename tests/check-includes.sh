#!/usr/bin/env bash
# Keeps the include graph of shared/DESIGN.md:
#   common <- allocator <- master;  common <- agent;  common <- sched <- cli
# A quoted include names a module by its first path component ("common/x.h");
# generated protobuf headers end in ".pb-c.h". Each folder lists what it may
# include; anything else is reported and the check fails.
set -u
top=${1:-$(git rev-parse --show-toplevel)}
cd "$top" || exit 2
fail=0

allowed_for() {
    case "$1" in
    src/common) echo "common pb" ;;
    src/allocator) echo "common allocator" ;;
    src/master) echo "common allocator master pb" ;;
    src/agent) echo "common agent pb" ;;
    src/sched) echo "common sched offerd pb" ;;
    src/cli) echo "common sched cli offerd pb" ;;
    src/bench) echo "common allocator master bench offerd pb" ;;
    include/offerd) echo "offerd" ;;
    *) echo "" ;;
    esac
}

check_dir() {
    local dir=$1 allowed
    allowed=" $(allowed_for "$dir") "
    local f line inc mod
    for f in "$dir"/*.[ch]; do
        [ -e "$f" ] || continue
        while IFS= read -r line; do
            inc=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$line")
            if [[ $inc == *.pb-c.h ]]; then
                mod=pb
            elif [[ $inc == */* ]]; then
                mod=${inc%%/*}
            else
                mod=local # same-folder include
            fi
            if [ "$mod" != local ] && [[ $allowed != *" $mod "* ]]; then
                echo "$f: may not include \"$inc\" (allowed:$allowed)"
                fail=1
            fi
        done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
        # Only the HTTP edge in common names libevent's HTTP layer.
        if grep -qE '#[[:space:]]*include[[:space:]]*<event2/http' "$f" &&
            [[ $f != src/common/http* ]]; then
            echo "$f: only src/common/http* may include <event2/http*.h>"
            fail=1
        fi
    done
    # The allocator is pure: no libevent, no protobuf runtime, no JSON.
    if [ "$dir" = src/allocator ] &&
        grep -nE '#[[:space:]]*include[[:space:]]*<(event2/|protobuf-c/|jansson)' \
            "$dir"/*.[ch] 2>/dev/null; then
        echo "src/allocator: includes an I/O or codec library"
        fail=1
    fi
}

for d in src/common src/allocator src/master src/agent src/sched src/cli \
    src/bench include/offerd; do
    [ -d "$d" ] && check_dir "$d"
done
[ $fail -eq 0 ] && echo "include graph ok"
exit $fail
