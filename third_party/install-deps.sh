#!/usr/bin/env bash
# Installs every native library psdlearn binds through cgo, from Debian/Ubuntu packages.
# Idempotent; needs root (or sudo). See third_party/README.md for versions, licences and ABI notes.
set -euo pipefail
PKGS=(libopenblas-dev liblapacke-dev libarpack2-dev liblbfgsb-dev coinor-libclp-dev gfortran pkg-config libopenmpi-dev openmpi-bin libparpack2-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all native packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
