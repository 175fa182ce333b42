#!/usr/bin/env bash
# dsl_wheels.sh — the wheels the lent H200 needs for issue 16's CuteDSL and TileLang seeds
# (bench/h200_official.sh, part dsl), downloaded here for the device's Python 3.12 (the
# device reaches no package index). The versions are the ones that compiled both seeds
# for sm_90a on the development machine in session 12. --no-deps: the list is the whole
# closure the device lacks (it has torch, numpy and typing-extensions); the CUDA 13 build
# of the DSL's libraries only (nvidia-cutlass-dsl names the CUDA 12 one as a dependency,
# but finds either under nvidia_cutlass_dsl/cu12 or cu13).
#
#   bench/dsl_wheels.sh DIR     then: bench/carry_parts.sh split DIR
#
# 15 wheels, 180 MB (2026-12-05): nvidia-cutlass-dsl-libs-cu13 92 MB, tilelang 50 MB,
# z3-solver 29 MB, cuda-bindings 8 MB, the rest under 4 MB each.
set -euo pipefail
dir=${1:?usage: bench/dsl_wheels.sh DIR}
mkdir -p "$dir"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$dir" \
  nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 \
  nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 cuda-bindings \
  cuda-pathfinder protobuf tilelang==0.1.15 "apache-tvm-ffi>=0.1.11,<0.1.13" \
  "z3-solver>=4.13,<4.15.5" torch-c-dlpack-ext ml-dtypes cloudpickle psutil tqdm
ls -l "$dir"
du -sh "$dir"
