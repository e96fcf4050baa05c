#!/bin/sh
# install-deps.sh [interop] - installs the Debian 12 packages stepcast builds
# and tests with, when they are missing. As root it runs apt-get; otherwise
# it prints the exact command to run (python3-torch: tests/test_benchgen.c
# runs a generated benchmark on the CPU). With `interop` (make interop), also
# those ASTRA-sim builds with (cmake, protobuf, yaml-cpp: about 15 s to
# install, and the build then takes about 3 minutes on 2 cores).
# chromium: test_html renders `stepcast report`'s page in it, headless.
set -eu
PKGS="build-essential clang libclang-rt-14-dev zlib1g-dev libisal-dev libcmocka-dev libyajl-dev valgrind python3 protobuf-compiler pkgconf groff-base chromium python3-torch"
[ "${1:-}" = interop ] && PKGS="$PKGS cmake libprotobuf-dev libyaml-cpp-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "install-deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "install-deps: missing packages:$missing" >&2
    echo "run: sudo apt-get install -y$missing" >&2
    exit 1
fi
