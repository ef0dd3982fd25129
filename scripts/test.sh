#!/usr/bin/env bash
# Build offerd and run every test (unit, end-to-end, include and format
# checks, fuzz corpus replay) with ctest.
#   scripts/test.sh [--sanitize | --tsan] [ctest arguments...]
# --sanitize builds and runs under AddressSanitizer and UBSan in build-asan/;
# --tsan under ThreadSanitizer in build-tsan/ (a data race fails the test).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build_args=()
case "${1:-}" in
--sanitize)
    build_args+=(--sanitize)
    shift
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    ;;
--tsan)
    build_args+=(--tsan)
    shift
    # tests/tsan.supp: the ZooKeeper C client's races (its logging, fd reuse).
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$top/tests/tsan.supp}
    ;;
esac
dir=$("$top/scripts/build.sh" "${build_args[@]}")
cd "$dir"
ctest --output-on-failure -j "$(nproc)" "$@"
