#!/bin/sh
# install-deps.sh -- installs the Debian packages hetplan needs, only those missing.
# Run as root on Debian 12 (or with sudo). Packages: the C toolchain, pkg-config, cJSON,
# GLPK and CBC (libraries and command-line solvers), Open MPI, librsvg2-bin (SVG
# rendering in tests), chromium (the HTML report shown in a headless browser in tests;
# they skip that check without it) and python3 (the independent reference evaluator the
# tests compare with, scripts/ref_eval12.py). The CUDA toolkit is optional, never installed here.
set -eu
PKGS="make gcc libc6-dev pkg-config libcjson-dev libglpk-dev glpk-utils coinor-libcbc-dev \
coinor-cbc libopenmpi-dev openmpi-bin librsvg2-bin chromium python3"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: run as root (missing:$missing)" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
# shellcheck disable=SC2086
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
