#!/usr/bin/env bash
# agents_guard.sh — the process guard. A fake agent that installs a package,
# runs a profiler or a "CUDA program" on the host, loads the CUDA driver or
# the ROCm runtime (HIP, HSA), runs a HIP program or a ROCm profiler, or
# edits the shared gateway's configuration is killed within one second
# (measured from the offending process's start to `aka agent-session`
# returning), the result records the policy violation with its reason and
# exit code 126, the episode is not resumed, and nothing it started survives.
# Then the shell layer (BASH_ENV) on its own, and things that must NOT be
# refused.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
tmp=$(mktemp -d)
tag="akaguard$$"
cleanup() {
  local pid
  for pid in $(pgrep -f "$tag-marker" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
FAKES="$AKA_SOURCE_DIR/tests/fakes"
GUARD="$AKA_SOURCE_DIR/runtime/guard/session_guard.sh"

# Harmless stand-ins named like the real tools. Each records when it started,
# leaves a uniquely named child (the marker that must not survive) and waits.
mkdir -p "$tmp/bin" "$tmp/gw"
for tool in pip ncu test_kernel rocprofv3 rocm-smi; do
  cat >"$tmp/bin/$tool" <<EOF
#!/bin/bash
date +%s%N >"$tmp/started.$tool"
(exec -a "$tag-marker-$tool" sleep 300) &
wait
EOF
  chmod +x "$tmp/bin/$tool"
done
printf '#!/bin/bash\necho "nvcc: release 12.4"\n' >"$tmp/bin/nvcc"
chmod +x "$tmp/bin/nvcc"
printf '{"listen": "127.0.0.1:8765"}\n' >"$tmp/gw/gateway.json"
printf 'jobs\n' >"$tmp/gw/jobs.db"
export PATH="$tmp/bin:$PATH"
export ATREX_PROTECTED_GATEWAY_STATE_DIR="$tmp/gw"
export CODEX_HOME="$tmp/codex-home"
mkdir -p "$CODEX_HOME"

. "$AKA_SOURCE_DIR/tests/lib/guard_fixture.sh" # new_case NAME

# session BACKEND SCENARIO: run it with recovery on; $c/out.json, $c/ended (ns).
session() {
  printf '%s\n' "$2" >"$c/scenario.json"
  AKA_FAKE_SCENARIO="$c/scenario.json" AKA_FAKE_LOG="$c/log.jsonl" AKA_FAKE_STATE="$c" \
    "$AKA_BIN" agent-session --repo-root "$AKA_SOURCE_DIR" --backend "$1" \
    --cli "$FAKES/fake-$1" --worktree "$c/wt" --brief "$c/brief.md" --capture "$c/cap" \
    --handoff-file "$c/wt/handoff.json" --handoff-resumes 2 >"$c/out.json" 2>"$c/err.txt" ||
    { cat "$c/err.txt"; fail "aka agent-session failed"; }
  date +%s%N >"$c/ended"
}

check() {
  python3 - "$c" "$@" <<'PY' || fail "$(basename "$c"): assertion failed"
import json, os, sys
c = sys.argv[1]
out = json.load(open(os.path.join(c, "out.json")))
t = out["turns"][0]
for expr in sys.argv[2:]:
    if not eval(expr):
        print("assertion failed:", expr, file=sys.stderr)
        print(json.dumps(out, indent=1), file=sys.stderr)
        sys.exit(1)
PY
}

# Before misbehaving, the fake leaves two markers: one in its own process
# group, one in a new session of its own (setsid). Neither may survive.
PRE='{"spawn":["bash","-c","exec -a '"$tag"'-marker-group sleep 300"]},{"spawn":["setsid","bash","-c","exec -a '"$tag"'-marker-session sleep 300"]},{"sleep":0.3}'

# expect_kill NAME BACKEND REASON SCENARIO
expect_kill() {
  local name=$1 backend=$2 reason=$3 scenario=$4
  new_case "$name"
  session "$backend" "$scenario"
  check 'out["policy_violation"] and t["policy_violation"] and t["exit_code"] == 126' \
    'out["invocations"] == 1 and out["resume_count"] == 0 and not out["complete"]' \
    "\"$reason\" in t[\"violation\"]" \
    '"policy violation" in out["diagnosis"]' \
    't["violation_latency_ms"] is not None and t["violation_latency_ms"] < 1000'
  grep -q "dependency policy violation" "$c/cap/invocation-1/stderr.txt" ||
    fail "$name: no policy line in the captured stderr"
  local ms=$(( ($(cat "$c/ended") - $(cat "$c/spawned")) / 1000000 ))
  [ "$ms" -lt 1000 ] || fail "$name: the session ended $ms ms after the offending process started"
  echo "guard latency $name: ${ms} ms end to end, $(python3 -c "import json;print(round(json.load(open('$c/out.json'))['turns'][0]['violation_latency_ms']))") ms reported"
  sleep 0.2
  if pgrep -f "$tag-marker" >/dev/null; then
    pgrep -af "$tag-marker" >&2
    fail "$name: a process the agent started survived"
  fi
}

HANG='{"sleep":30}'
expect_kill pip claude "third-party package installation" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["pip","install","x"]},'"$HANG"']}]}'
expect_kill ncu codex "GPU profiler executed directly on the host" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["ncu","--set","full","./bench"]},'"$HANG"']}]}'
expect_kill cuda-program pi "kernel/evaluator executed directly on the host" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["test_kernel","--shape","0"]},'"$HANG"']}]}'
expect_kill pip-in-shell qodercli "third-party package installation" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["bash","-c","command pip install x; sleep 30"]},'"$HANG"']}]}'
expect_kill gateway-config claude "shared gateway configuration modified" \
  '{"turns":[{"actions":['"$PRE"',{"write":"'"$tmp"'/gw/gateway.json","content":"{\"listen\": \"0.0.0.0:1\"}"},'"$HANG"']}]}'
expect_kill gateway-rm claude "shared localhost gateway" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["bash","-c","sleep 0.3; rm -rf '"$tmp"'/gw/jobs.db; sleep 30"]},'"$HANG"']}]}'
expect_kill torch-cuda claude "CUDA used from Python" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["python3","-c","import time; time.sleep(30); import torch; torch.cuda.synchronize()"]},'"$HANG"']}]}'

# Real binaries, found by what they are rather than their names: an ELF with
# an embedded CUDA fat binary, and a process that mapped the CUDA driver.
if command -v cc >/dev/null; then
  printf '%s\n' '#include <unistd.h>' \
    '__attribute__((used, section(".nv_fatbin"))) static const char fatbin[16] = "stand-in";' \
    'int main(void) { sleep(30); return 0; }' >"$tmp/cudaprog.c"
  cc -o "$tmp/bin/bench-$tag" "$tmp/cudaprog.c"
  expect_kill fatbin claude "CUDA program executed directly on the host" \
    '{"turns":[{"actions":['"$PRE"',{"spawn":["bench-'"$tag"'"]},'"$HANG"']}]}'
  printf 'int cuInit(unsigned flags) { return flags ? 1 : 0; }\n' >"$tmp/cuda.c"
  mkdir -p "$tmp/lib"
  cc -shared -fPIC -o "$tmp/lib/libcuda.so.1" "$tmp/cuda.c"
  expect_kill cuda-driver claude "CUDA driver loaded" \
    '{"turns":[{"actions":['"$PRE"',{"spawn":["env","LD_PRELOAD='"$tmp"'/lib/libcuda.so.1","sleep","30"]},'"$HANG"']}]}'

  # ROCm: a hipcc-built program carries its GPU code in .hip_fatbin; any HIP
  # program (and the ROCm build of torch) maps libamdhip64 and ROCr.
  printf '%s\n' '#include <unistd.h>' \
    '__attribute__((used, section(".hip_fatbin"))) static const char fatbin[16] = "stand-in";' \
    'int main(void) { sleep(30); return 0; }' >"$tmp/hipprog.c"
  cc -o "$tmp/bin/hipbench-$tag" "$tmp/hipprog.c"
  expect_kill hip-fatbin claude "HIP program executed directly on the host" \
    '{"turns":[{"actions":['"$PRE"',{"spawn":["hipbench-'"$tag"'"]},'"$HANG"']}]}'
  printf 'int hipInit(unsigned flags) { return flags ? 1 : 0; }\n' >"$tmp/hip.c"
  cc -shared -fPIC -o "$tmp/lib/libamdhip64.so.6" "$tmp/hip.c"
  expect_kill hip-runtime codex "ROCm runtime (HIP/HSA) loaded" \
    '{"turns":[{"actions":['"$PRE"',{"spawn":["env","LD_PRELOAD='"$tmp"'/lib/libamdhip64.so.6","sleep","30"]},'"$HANG"']}]}'
  printf 'int hsa_init(void) { return 0; }\n' >"$tmp/hsa.c"
  cc -shared -fPIC -o "$tmp/lib/libhsa-runtime64.so.1" "$tmp/hsa.c"
  expect_kill hsa-runtime claude "ROCm runtime (HIP/HSA) loaded" \
    '{"turns":[{"actions":['"$PRE"',{"spawn":["env","LD_PRELOAD='"$tmp"'/lib/libhsa-runtime64.so.1","sleep","30"]},'"$HANG"']}]}'
  # rocminfo only lists devices: it may bring up ROCr without being killed.
  ln -sf "$(command -v sleep)" "$tmp/bin/rocminfo"
  new_case rocminfo
  session claude '{"turns":[{"actions":[{"run":["env","LD_PRELOAD='"$tmp"'/lib/libhsa-runtime64.so.1","rocminfo","0.3"]},{"handoff":"pivot","path":"handoff.json"}]}]}'
  check 'out["complete"] and not out["policy_violation"] and t["exit_code"] == 0'
fi
expect_kill rocprofv3 pi "GPU profiler executed directly on the host" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["rocprofv3","--kernel-trace","--","./bench"]},'"$HANG"']}]}'
expect_kill rocm-smi claude "GPU state changed through rocm-smi" \
  '{"turns":[{"actions":['"$PRE"',{"spawn":["rocm-smi","--setperfdeterminism","1900"]},'"$HANG"']}]}'

# ---- not violations ------------------------------------------------------------
new_case allowed
session claude '{"turns":[{"actions":[{"run":["nvcc","--version"]},{"run":["python3","-c","print(\"import kernel; pip install x\")"]},{"run":["git","status"]},{"sh":"echo pip install x is refused here"},{"handoff":"pivot","path":"handoff.json"}]}]}'
check 'out["complete"] and not out["policy_violation"] and t["exit_code"] == 0'

# ---- the shell layer on its own (BASH_ENV, no poller) -------------------------
printf '#!/bin/bash\necho "rocm-smi stand-in"\n' >"$tmp/bin/rocm-smi" # queries pass through
new_case shell
cd "$c/wt"
expect_126() {
  set +e
  out=$(BASH_ENV="$GUARD" bash -c "$1" 2>&1)
  rc=$?
  set -e
  [ "$rc" = 126 ] || fail "shell guard: '$1' exited $rc: $out"
  grep -q "aka policy: refused" <<<"$out" || fail "shell guard: '$1' printed: $out"
}
expect_126 'pip install x'
expect_126 'python3 -m pip install x'
expect_126 'conda install numpy'
expect_126 'ncu --set full ./a.out'
expect_126 'nvcc -O3 kernel.cu'
expect_126 'nvidia-smi -pl 200'
expect_126 'python3 kernel.py'
expect_126 'python3 -c "import kernel"'
expect_126 'python3 -c "import torch; torch.cuda.synchronize()"'
expect_126 'rm kernel.c'
expect_126 "rm -rf $tmp/gw"
expect_126 "cp /dev/null $tmp/gw/gateway.json"
expect_126 'aka gateway serve'
expect_126 'rocprofv3 --kernel-trace -- ./a.out'
expect_126 'omniperf profile -n x -- ./a.out'
expect_126 'rocm-smi --setsclk 7'
expect_126 'amd-smi set -g 0 --perf-determinism 1900'
expect_126 'python3 -c "from hip import hip; hip.hipInit(0)"'
[ -f kernel.c ] || fail "shell guard: the tracked file was removed"
[ -f "$tmp/gw/gateway.json" ] || fail "shell guard: the gateway config was removed"
for ok in 'nvcc --version' 'python3 -c "print(\"import kernel\")"' 'rm -f scratch.txt' \
  'nvidia-smi -L >/dev/null 2>&1 || true' 'rocm-smi --showuse' \
  'amd-smi list >/dev/null 2>&1 || true' 'python3 -c "print(\"from hip import hip\")"'; do
  BASH_ENV="$GUARD" bash -c "touch scratch.txt; $ok" >/dev/null 2>&1 || fail "shell guard refused: $ok"
done
# The functions cannot be redefined by the agent.
if BASH_ENV="$GUARD" bash -c 'pip() { :; }' 2>/dev/null; then fail "shell guard: pip was redefined"; fi
cd "$tmp"

echo "agents_guard: ok"
