#!/usr/bin/env bash
# Configure and build offerd.
#   scripts/build.sh [--sanitize] [--tsan] [--fuzz] [--debug] [--release] [--clang]
# Build trees: build/ (normal), build-asan/ (ASan+UBSan), build-tsan/
# (ThreadSanitizer), build-fuzz/ (clang libFuzzer), build-release/ (the
# Release build type, -O3); --clang builds with clang in a folder of its own
# (build-clang/, build-release-clang/). Warnings are errors in all of them
# (OFFERD_WERROR). Prints the build folder on its last line.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/build
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOFFERD_WERROR=ON)
for a in "$@"; do
    case $a in
    --sanitize) dir=$top/build-asan; args+=(-DOFFERD_SANITIZE=ON) ;;
    --tsan) dir=$top/build-tsan; args+=(-DOFFERD_TSAN=ON) ;;
    --fuzz) dir=$top/build-fuzz
        args+=(-DOFFERD_FUZZ=ON -DCMAKE_C_COMPILER=clang) ;;
    --debug) args+=(-DCMAKE_BUILD_TYPE=Debug) ;;
    --release) dir=$top/build-release; args+=(-DCMAKE_BUILD_TYPE=Release) ;;
    --clang) clang=1; args+=(-DCMAKE_C_COMPILER=clang) ;;
    *) echo "usage: $0 [--sanitize] [--tsan] [--fuzz] [--debug] [--release] [--clang]" >&2; exit 2 ;;
    esac
done
if [ -n "${clang:-}" ] && [ "$dir" != "$top/build-fuzz" ]; then
    dir=$dir-clang
fi
cmake -S "$top" -B "$dir" "${args[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" >&2
echo "$dir"
