#!/usr/bin/env bash
# Fails when a program the documentation shows differs from the copy under
# examples/ that the build compiles (and tests/e2e runs). In a page, the line
#     <!-- example: examples/<file>.c -->
# announces that the next ```c block is that file, whole.
set -u
top=${1:-$(git rev-parse --show-toplevel)}
cd "$top" || exit 2
bad=0
checked=0
for doc in docs/*.md; do
    while IFS= read -r src; do
        checked=$((checked + 1))
        if [ ! -f "$src" ]; then
            echo "$doc: announces $src, which does not exist"
            bad=1
            continue
        fi
        shown=$(awk -v want="<!-- example: $src -->" '
            $0 == want { armed = 1; next }
            armed && /^```c$/ { inside = 1; next }
            inside && /^```$/ { exit }
            inside { print }' "$doc")
        if [ "$shown" != "$(cat "$src")" ]; then
            echo "$doc: the program shown differs from $src:"
            diff <(printf '%s\n' "$shown") "$src" | head -20
            bad=1
        fi
    done < <(sed -n 's/^<!-- example: \(.*\) -->$/\1/p' "$doc")
done
if [ $checked -eq 0 ]; then
    echo "no page announces an example (the markers are gone?)"
    bad=1
fi
[ $bad -eq 0 ] && echo "$checked documented examples match"
exit $bad
