#!/usr/bin/env bash
# Build offerd and run every test (unit, end-to-end, include and format
# checks, fuzz corpus replay) with ctest.
#   scripts/test.sh [--sanitize] [ctest arguments...]
# --sanitize builds and runs under AddressSanitizer and UBSan in build-asan/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build_args=()
if [ "${1:-}" = --sanitize ]; then
    build_args+=(--sanitize)
    shift
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
dir=$("$top/scripts/build.sh" "${build_args[@]}")
cd "$dir"
ctest --output-on-failure -j "$(nproc)" "$@"
