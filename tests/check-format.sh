#!/usr/bin/env bash
# Fails when any C file of offerd differs from what clang-format makes of it
# with the project's .clang-format.
set -u
top=${1:-$(git rev-parse --show-toplevel)}
cd "$top" || exit 2
command -v clang-format >/dev/null || {
    echo "clang-format not installed (scripts/install-deps.sh installs it)"
    exit 1
}
mapfile -t files < <(find src include tests examples -name '*.[ch]' | sort)
bad=0
for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f (run: clang-format -i $f)"
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "${#files[@]} files formatted"
exit $bad
