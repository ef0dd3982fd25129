#!/usr/bin/env bash
# Install every Debian 12 package offerd's build, tests and tools need.
# Idempotent; run as root, or as a user with sudo.
set -euo pipefail

packages=(
    build-essential cmake pkg-config git
    libevent-dev                     # event loop, HTTP server and client
    libprotobuf-c-dev protobuf-c-compiler # protobuf-c runtime and protoc-c
    libjansson-dev                   # JSON
    check                            # unit-test framework
    libsqlite3-dev                   # registry store
    libcurl4-openssl-dev             # agent fetcher: http(s)/ftp downloads
    libarchive-dev                   # agent fetcher: tar/zip extraction
    clang clang-format               # fuzz targets, format check
    curl procps                      # README examples, test helpers
    systemd                          # systemd-analyze verify of the units (check_units)
    file                             # CPack's DEB generator (scripts/package.sh)
    chromium python3-websocket       # the web UI's browser test (e2e_webui)
    prometheus                       # promtool checks /metrics (e2e_metrics); on a
                                     # machine run by systemd this also starts a
                                     # Prometheus server on :9090 (systemctl
                                     # disable --now prometheus if unwanted)
    libzookeeper-mt-dev              # ZooKeeper C client: --zk, --registry=zk
    zookeeper                        # the real ZooKeeper servers of the HA
                                     # tests (tests/zk; runs on java)
    golang-go golang-github-mesos-mesos-go-dev # e2e_executors' go_executor,
                                     # built with mesos-go's executor library
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "install-deps: run as root or install sudo" >&2
        exit 1
    }
    sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
