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
# One clang-format run for all files (one process per file took over a
# minute on a busy machine); its diagnostics name the files that differ.
out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1)
rc=$?
mapfile -t bad < <(sed -n 's/^\(.*\.[ch]\):[0-9]*:[0-9]*: error: .*clang-format-violations.*/\1/p' <<<"$out" | sort -u)
for f in "${bad[@]}"; do
    echo "not formatted: $f (run: clang-format -i $f)"
done
if [ $rc -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
    echo "clang-format failed:"
    echo "$out" | head -20
    exit 1
fi
[ ${#bad[@]} -eq 0 ] || exit 1
echo "${#files[@]} files formatted"
