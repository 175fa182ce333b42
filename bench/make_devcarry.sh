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
cp /usr/bin/bwrap .devcarry/bin/bwrap
cp /usr/include/jansson.h /usr/include/jansson_config.h .devcarry/include/
cp -a /usr/lib/x86_64-linux-gnu/libjansson.so* .devcarry/lib/
du -sh .devcarry
