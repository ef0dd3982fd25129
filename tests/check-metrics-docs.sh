#!/usr/bin/env bash
# Fails when the Prometheus scrape configuration or the alert rules that
# docs/metrics.md shows do not pass promtool (Debian's prometheus package,
# installed by scripts/install-deps.sh): the first ```yaml block starting
# with "scrape_configs:" is checked as a configuration, the one starting
# with "groups:" as a rules file. Exit 77 (skipped) without promtool.
set -u
top=${1:-$(git rev-parse --show-toplevel)}
doc="$top/docs/metrics.md"
command -v promtool >/dev/null || {
    echo "promtool not found: install Debian's prometheus package"
    exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The yaml block whose first line is $1, without its fences.
block() {
    awk -v first="$1" '
        /^```yaml$/ { start = 1; next }
        start { start = 0; if ($0 == first) inside = 1 }
        inside && /^```$/ { exit }
        inside { print }' "$doc"
}
block "scrape_configs:" >"$tmp/prometheus.yml"
block "groups:" >"$tmp/rules.yml"
for f in prometheus.yml rules.yml; do
    [ -s "$tmp/$f" ] || {
        echo "$doc: no $f block found"
        exit 1
    }
done
promtool check config "$tmp/prometheus.yml" || exit 1
promtool check rules "$tmp/rules.yml" || exit 1
