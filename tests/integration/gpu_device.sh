#!/usr/bin/env bash
# gpu_device.sh — what only a real NVIDIA GPU can show; skipped (exit 0 with
# "SKIP: ...") on a machine without one, which is what CI is.
#   1. The process guard against real GPU work on the host: a fake agent that
#      starts a real CUDA program (built here with nvcc, it launches kernels in
#      a loop) or a Python process that runs torch.cuda work is killed within
#      one second with exit 126, and nothing it started survives.
#   2. Short built-in-agent campaigns on the GPU examples, one per layout:
#      native CUDA row_sum_cuda (Cuda), Atrex-Bench rmsnorm (Triton) and
#      SOL-ExecBench rope (Triton): V0, V1 from the seed kernel, one episode;
#      each ends with its stop reason and the committed versions v0..v2, and
#      the SOL campaign leaves a solution.json submission; the episode's agent must have
#      evaluated (v2 not blocked for want of a verdict).
#   3. An agent's `aka profile` in a GPU campaign (rmsnorm, Triton; a fake agent whose
#      sandbox holds no GPU): handed to the supervisor, which profiles under its own ncu
#      (--clock-control none) and returns the export; the agent's summary names the
#      kernel with a duration. Needs ncu (an install under /opt/nvidia/nsight-compute is
#      put first on PATH); skipped, saying so, without it. AKA_GPU_PROFILE=0 skips it.
# Environment: AKA_BIN, AKA_SOURCE_DIR; AKA_GPU_PLATFORM (default nvidia/h200);
# AKA_GPU_OUT: if set, campaign statuses are copied there.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
if [ ! -e /dev/nvidiactl ] || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU on this machine (the device runs this test for real)"
  exit 0
fi
PLATFORM=${AKA_GPU_PLATFORM:-nvidia/h200}
tmp=$(mktemp -d)
tag="akagpu$$"
cleanup() {
  local pid
  for pid in $(pgrep -f "$tag" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
FAKES="$AKA_SOURCE_DIR/tests/fakes"

# ---- 1. the guard against real GPU work --------------------------------------------------------
. "$AKA_SOURCE_DIR/tests/lib/guard_fixture.sh" # new_case NAME

# expect_kill NAME REASON ACTION: the fake runs ACTION (a JSON spawn action), then hangs.
expect_kill() {
  new_case "$1"
  printf '{"turns":[{"actions":[%s,{"sleep":30}]}]}\n' "$3" >"$c/scenario.json"
  local t0 t1
  t0=$(date +%s%N)
  AKA_FAKE_SCENARIO="$c/scenario.json" AKA_FAKE_LOG="$c/log.jsonl" AKA_FAKE_STATE="$c" \
    "$AKA_BIN" agent-session --repo-root "$AKA_SOURCE_DIR" --backend claude \
    --cli "$FAKES/fake-claude" --worktree "$c/wt" --brief "$c/brief.md" --capture "$c/cap" \
    --handoff-file "$c/wt/handoff.json" --handoff-resumes 2 >"$c/out.json" 2>"$c/err.txt" ||
    { cat "$c/err.txt"; fail "$1: aka agent-session failed"; }
  t1=$(date +%s%N)
  python3 - "$c/out.json" "$2" <<'PY' || fail "$1: not killed as a policy violation"
import json, sys
out = json.load(open(sys.argv[1]))
t = out["turns"][0]
assert out["policy_violation"] and t["exit_code"] == 126, out
assert sys.argv[2] in t["violation"], t["violation"]
assert t["violation_latency_ms"] is not None and t["violation_latency_ms"] < 1000, t
print("guard %s: %s (%.0f ms from the offending process to all dead)"
      % (sys.argv[1].split("/")[-2], t["violation"], t["violation_latency_ms"]))
PY
  sleep 0.2
  # Zombies are dead: a container's PID 1 may not reap orphans promptly.
  local p alive=""
  for p in $(pgrep -f "$tag" 2>/dev/null); do
    [ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" = Z ] || alive="$alive $p"
  done
  [ -z "$alive" ] || { ps -o pid,stat,args -p "${alive# }" >&2; fail "$1: a process the agent started survived"; }
  echo "guard $1: session over $(( (t1 - t0) / 1000000 )) ms after it started"
}

if command -v nvcc >/dev/null; then
  cat >"$tmp/spin.cu" <<'EOF'
#include <cuda_runtime.h>
__global__ void spin(float *x) { x[threadIdx.x] += 1.0f; }
int main(void)
{
    float *x;
    cudaMalloc(&x, 1024 * sizeof(float));
    for (long i = 0; i < 100000000L; i++) { spin<<<1, 256>>>(x); cudaDeviceSynchronize(); }
    return 0;
}
EOF
  nvcc -o "$tmp/$tag-spin" "$tmp/spin.cu"
  expect_kill cuda-program "executed directly on the host" '{"spawn":["'"$tmp/$tag-spin"'"]}'
else
  echo "SKIP (part): nvcc is not installed; the real CUDA program case did not run"
fi
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  expect_kill torch-cuda "CUDA" \
    '{"spawn":["python3","-c","import sys, torch; sys.argv[0] = \"'"$tag"'\"; x = torch.ones(1 << 20, device=\"cuda\"); [x.add_(1) for _ in range(10**9)]"]}'
fi

# ---- 2. short built-in campaigns, one per layout -----------------------------------------------
campaign() { # OP FRAMEWORK
  local op=$1 fw=$2 ws
  echo "campaign $op ($fw) on $PLATFORM ..."
  "$AKA_BIN" optimize --repo-root "$AKA_SOURCE_DIR" --op-dir "$AKA_SOURCE_DIR/examples/ops/$op" \
    --platform "$PLATFORM" --framework "$fw" --agent-cli builtin --max-iters 2 \
    --workspace "$tmp/camp" >"$tmp/$op.out" 2>"$tmp/$op.err" || {
    tail -20 "$tmp/$op.err"
    for f in "$tmp/camp"/kernel_opt_*/memory/v*.failed.json; do
      [ -f "$f" ] && { echo "== $f"; head -c 4000 "$f"; echo; }
    done
    fail "campaign $op exited non-zero"
  }
  cat "$tmp/$op.err" "$tmp/$op.out"
  ws=$(sed -n 's/^aka optimize: workspace //p' "$tmp/$op.err" | head -1)
  [ -d "$ws" ] || fail "campaign $op: no workspace"
  "$AKA_BIN" status "$ws"
  "$AKA_BIN" status "$ws" --json >"$tmp/$op.status.json"
  for v in 0 1 2; do
    git -C "$ws" ls-files --error-unmatch "memory/v$v.json" >/dev/null 2>&1 ||
      fail "campaign $op: memory/v$v.json is not committed"
  done
  grep -q "campaign stopped: budget: max-iters" "$tmp/$op.out" || fail "campaign $op: stop reason"
  # The episode's agent evaluated its candidates: an episode blocked because the agent's own
  # `aka eval` had no verdict (the 2026-12-06/07 device campaigns: bwrap, then the GPU, out
  # of the agent's reach) tuned nothing, whatever the stop reason says.
  python3 - "$ws/memory/v2.json" "$op" "$ws/.aka/episodes/e0001/agent/invocation-1/command.json" <<'PY' ||
    fail "campaign $op: the agent could not evaluate, or held the GPU"
import json, sys
v = json.load(open(sys.argv[1]))
# ... and held no GPU itself: its sandbox binds no device node.
argv = json.load(open(sys.argv[3]))["argv"]
assert not any(a.startswith("/dev/nvidia") for a in argv), [a for a in argv if "nvidia" in a]
why = (v.get("quality_gate") or {}).get("failure_reason") or ""
assert not (v["status"] == "blocked" and "no verdict" in why), f"{sys.argv[2]}: v2 {v['status']}: {why}"
# A GPU campaign's agent evaluates through the supervisor (--agent-eval auto): a job nested
# in the agent sandbox got CUDA error 304 on the H100 of 2026-12-07.
assert v["episode"]["agent_eval"] == "broker", v["episode"]
print(f"{sys.argv[2]}: v2 {v['status']}, agent evaluations {v['episode']['agent_eval']}")
PY
  if [ -n "${AKA_GPU_OUT:-}" ]; then
    mkdir -p "$AKA_GPU_OUT/$op"
    cp "$tmp/$op.out" "$tmp/$op.err" "$tmp/$op.status.json" "$ws"/memory/v*.json "$AKA_GPU_OUT/$op/"
    [ -f "$ws/solution.json" ] && cp "$ws/solution.json" "$AKA_GPU_OUT/$op/"
  fi
  last_ws=$ws
}
# AKA_GPU_CAMPAIGNS picks a subset (by operator name) for a quicker run.
for spec in row_sum_cuda:Cuda rmsnorm:Triton rope:Triton; do
  case " ${AKA_GPU_CAMPAIGNS:-row_sum_cuda rmsnorm rope} " in
  *" ${spec%%:*} "*) campaign "${spec%%:*}" "${spec#*:}" ;;
  esac
done
if [[ "${last_ws:-}" == *rope* ]]; then
  python3 - "$last_ws/solution.json" <<'PY' || fail "rope: no valid SOL submission"
import json, sys
s = json.load(open(sys.argv[1]))
srcs = s.get("sources") or []
assert srcs and all(x.get("content") for x in srcs), s
print("rope: solution.json with", len(srcs), "inlined source(s)")
PY
  # Finalization evaluates the submission as submitted (the official tool when the runtime
  # has it, else aka's judge, which says so): it must pass.
  grep -E "^aka optimize: final: .*; checked by [^:]+: PASS \(" "$tmp/rope.err" ||
    fail "rope: the submission was not evaluated as submitted, or did not pass"
  "$AKA_BIN" status "$last_ws" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["submission"]
assert s and s["check"] == "passed" and s["path"].endswith("solution.json"), s' ||
    fail "rope: aka status does not show the passed submission check"
fi

# ---- 3. an agent's profile, served by the supervisor -------------------------------------------
agent_profile() {
  local f=$tmp/profile-agent ws
  mkdir -p "$f"
  cat >"$f/ep.sh" <<SH
#!/bin/bash
aka profile --level survey --shape-id 3 --json >"$f/profile.json" 2>"$f/profile.err"
echo "rc=\$?" >>"$f/profile.err"
cd /
aka journal finalize --state pivot --outcome-json '{"summary": "profiled", "next_directions": []}'
aka handoff --status pivot
SH
  printf '{"turns":[{"actions":[{"sh":"bash %s"}]}]}\n' "$f/ep.sh" >"$f/scenario.json"
  echo "agent profile: a fake agent's aka profile in a GPU campaign ..."
  AKA_FAKE_SCENARIO="$f/scenario.json" AKA_FAKE_LOG="$f/fake.log" AKA_FAKE_STATE="$f" \
    "$AKA_BIN" optimize --repo-root "$AKA_SOURCE_DIR" --op-dir "$AKA_SOURCE_DIR/examples/ops/rmsnorm" \
    --platform "$PLATFORM" --framework Triton --agent-cli claude \
    --agent-cli-path "$FAKES/fake-claude" --agent-writable-path "$f" --max-iters 2 \
    --workspace "$tmp/prof" >"$f/out" 2>"$f/err" || { tail -20 "$f/err"; fail "agent profile: campaign"; }
  cat "$f/profile.err"
  grep -q "handed to the supervisor" "$f/profile.err" || fail "agent profile: not brokered"
  grep -q "^rc=0$" "$f/profile.err" || fail "agent profile: exit status"
  grep -E "agent profile [0-9a-f]{16}: PASS" "$f/err" || fail "agent profile: no progress line"
  python3 - "$f/profile.json" <<'PY' || fail "agent profile: the summary has no kernel duration"
import json, sys
s = json.load(open(sys.argv[1]))
ks = s["kernels"]
assert ks and all((k["duration_ns"] or 0) > 0 for k in ks), ks
print("agent profile:", [(k["name"][:60], k["duration_ns"]) for k in ks[:3]])
PY
  if [ -n "${AKA_GPU_OUT:-}" ]; then
    mkdir -p "$AKA_GPU_OUT/agent_profile"
    cp "$f/profile.json" "$f/profile.err" "$f/err" "$AKA_GPU_OUT/agent_profile/"
  fi
}
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=${d%/}:$PATH; done
if [ "${AKA_GPU_PROFILE:-1}" = 0 ]; then
  echo "SKIP (part): AKA_GPU_PROFILE=0; the agent profile case did not run"
elif ! command -v ncu >/dev/null; then
  echo "SKIP (part): no ncu on PATH; the agent profile case did not run"
else
  agent_profile
fi
echo "gpu_device: ok"
