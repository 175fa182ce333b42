#!/usr/bin/env bash
# deps.sh — install what aka needs on a fresh Debian machine (idempotent).
#
# Only packages that are missing are installed, so a warm machine pays nothing.
# Run as root (or with sudo available). Used by setup.sh and test.sh.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git clang clang-format clang-tidy
  libjansson-dev libsqlite3-dev libcurl4-openssl-dev libmicrohttpd-dev
  libssl-dev libarchive-dev libcmocka-dev
  bubblewrap openssh-client openssh-server python3 python3-torch
  chromium
  slurmctld slurmd slurm-client
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "deps: all ${#packages[@]} packages present"
fi
