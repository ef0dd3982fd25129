#!/usr/bin/env bash
# Build offerd's Debian package with CPack (packaging/CMakeLists.txt): a
# Release build installed under /usr, in build-package/, building only what
# the package holds (no tests or benchmarks), then check its contents
# (tests/check-deb.sh). Prints the .deb's path on its last line.
#   scripts/package.sh [build dir]     (default: build-package/)
# Install it with: sudo apt install ./build-package/offerd_<version>_<arch>.deb
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build-package}
# A packager's build: no -Werror (OFFERD_WERROR stays off).
cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
cmake --build "$dir" -j "$(nproc)" --target offerd_dist >&2
rm -f "$dir"/offerd_*.deb
(cd "$dir" && cpack -G DEB >&2)
deb=$(ls "$dir"/offerd_*.deb)
bash "$top/tests/check-deb.sh" "$deb" >&2
echo "$deb"
