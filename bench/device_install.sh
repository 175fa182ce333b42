#!/usr/bin/env bash
# device_install.sh — sourced by the bench/h200_*.sh scripts on a lent GPU
# machine: installs what its image lacks from .devcarry/ (an aka binary built
# on the development machine, Debian's bwrap, jansson's header and libraries;
# the native harness links jansson inside the sandbox) and puts aka on PATH.
# Run from the repository root. Never touches clocks, power or compute mode.
cp .devcarry/include/*.h /usr/include/
cp -a .devcarry/lib/lib*.so* /usr/lib/x86_64-linux-gnu/ && ldconfig
cp .devcarry/bin/bwrap /usr/local/bin/bwrap
export ATREX_AKA_HOME=$PWD PATH=$PWD/.devcarry/bin:$PATH
