#!/usr/bin/env bash
# ncu_sandbox_probe.sh — the native profile's ~300 s stall (issue 15), one layer past
# bench/ncu_fd_probe.cu. On 2026-12-06 (H100) that probe ran under Nsight Compute without
# a stall in every variant (plain, runnerlike, fd3, closeall, pinned), so the runners'
# descriptors and pinning are not the cause. `aka profile` runs ncu inside the bwrap
# sandbox (every namespace unshared, no network, capabilities dropped), which the probe
# did not. This runs the same probe binary three ways, each cut after PROBE_S seconds
# (default 90) and timed: under ncu outside any sandbox (the control), under ncu inside
# `aka sandbox run --kind profile --gpus 1` (ncu's directory bound read-only, as `aka
# profile` binds it), and inside the sandbox without ncu (CUDA alone there). A variant
# that stalls shows as a child reported STALLED or as the time limit. Lines go to
# $OUT/summary.txt, each run's whole output to $OUT/<variant>.txt. Needs .devcarry
# (bench/make_devcarry.sh) on a lent GPU; clocks are never touched.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
. bench/lib_episode.sh
ncu_on_path
out=${OUT:-/tmp/aka-ncu-sandbox-probe} limit=${PROBE_S:-90}
mkdir -p "$out"
nvcc -O2 -o /tmp/ncu_fd_probe bench/ncu_fd_probe.cu 2>"$out/nvcc.err" ||
  { tail -5 "$out/nvcc.err"; exit 1; }
ncu=$(readlink -f "$(command -v ncu)")
flags=(--target-processes all --clock-control none --kernel-name regex:probe_kernel
  --launch-count 1)
box=(aka sandbox run --kind profile --gpus 1 --timeout "$limit" --runtime-bind "$(dirname "$ncu")"
  --ro-input /tmp/ncu_fd_probe=ncu_fd_probe --)

# timed NAME CMD...: one variant, its wall time and the probe's own verdict lines.
timed() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s%N)
  timeout "$((limit + 15))" "$@" >"$out/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc after $((($(date +%s%N) - t0) / 1000000)) ms" | tee -a "$out/summary.txt"
  grep -E '^== |STALLED|cudaGetDeviceCount|==ERROR==' "$out/$name.txt" | sed 's/^/  /' |
    tee -a "$out/summary.txt"
}

timed outside timeout "$limit" ncu "${flags[@]}" /tmp/ncu_fd_probe runnerlike plain
timed sandbox "${box[@]}" "$ncu" "${flags[@]}" ./ncu_fd_probe runnerlike plain
timed sandbox-no-ncu "${box[@]}" ./ncu_fd_probe runnerlike plain
