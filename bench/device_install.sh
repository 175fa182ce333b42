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
# The lent GPU as aka names it: the bench scripts pass $AKA_PLATFORM and $AKA_CHIP (an H100
# when no H200 could be started; every summary then says which card gave its numbers).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case $gpu in
*H100*) AKA_PLATFORM=nvidia/h100 AKA_CHIP=H100 ;;
*) AKA_PLATFORM=nvidia/h200 AKA_CHIP=H200 ;;
esac
export AKA_PLATFORM AKA_CHIP AKA_GPU_PLATFORM=${AKA_GPU_PLATFORM:-$AKA_PLATFORM}
echo "device: ${gpu:-no GPU name}; aka --platform $AKA_PLATFORM, --chip $AKA_CHIP" >&2
