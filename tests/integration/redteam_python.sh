#!/usr/bin/env bash
# redteam_python.sh — hostile Python candidates (tests/redteam/python/) through the real
# `aka eval --platform cpu`: none may pass, each fails with its specific reason, no attempt
# crosses the boundary between the candidate runner and the judge (no "REDTEAM-ESCAPED"
# line), and aka's result is the judge's (it carries the judge's block, one RESULT_JSON).
# Honest kernels through the same path still pass: the rmsnorm and rope references.
# Environment: AKA_BIN, AKA_SOURCE_DIR. Needs torch for the sandbox's python3 and
# Bubblewrap; prints SKIP and exits 0 without them.
set -uo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
export ATREX_AKA_HOME=$AKA_SOURCE_DIR
export PATH=/usr/local/bin:/usr/bin:/bin
ops=$AKA_SOURCE_DIR/examples/ops
red=$AKA_SOURCE_DIR/tests/redteam/python
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0 names=()

if ! python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: no torch for the sandbox's python3 (install python3-torch)"; exit 0
fi
if ! "$AKA_BIN" sandbox run -- true >/dev/null 2>&1; then
  echo "SKIP: bwrap cannot run here; the hostile candidates need the real sandbox"; exit 0
fi
# Landlock ABI 6 scopes signals: with it the judge survives a kill and reports itself.
abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')

rms=(--op-dir "$ops/rmsnorm" --framework PyTorch --shape-id 0 --shape-id 1)
rope=(--op-dir "$ops/rope" --framework PyTorch --shape-id 7d0c5a2e-0001-4a6b-9e41-000000000001
      --shape-id 7d0c5a2e-0002-4a6b-9e41-000000000002)

# run NAME EXPECT REGEX KERNEL ARGS... : evaluate in the background, two at a time.
# EXPECT is fail (exit 1, not all_pass, a failure matching REGEX), pass, or
# slow:US (no fake win: passes or fails, but never reports a latency under US), or
# charged:X (passes, and its geomean speedup over the reference is at most X: work the
# candidate moved out of the judge's window, below the limit at which it is named, is
# charged to its latency, so the move wins nothing).
run() {
  local name=$1 expect=$2 regex=$3 kernel=$4; shift 4
  names+=("$name")
  printf '%s\n%s\n' "$expect" "$regex" >"$tmp/$name.want"
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  (
    "$AKA_BIN" eval -v --platform cpu --kernel "$kernel" --timed-runs 20 --warmup 3 --json "$@" \
      >"$tmp/$name.json" 2>"$tmp/$name.err"
    echo $? >"$tmp/$name.rc"
  ) &
}

run cache_data_ptr fail '^output of a timed run is wrong' "$red/cache_data_ptr.py" "${rms[@]}"
run cache_id fail '^output of a timed run is wrong' "$red/cache_id.py" "${rms[@]}"
run cache_shape fail '^output of a timed run is wrong' "$red/cache_shape.py" "${rms[@]}"
run cache_content slow:2000 '' "$red/cache_content.py" "${rms[@]}"
run patch_timers fail '^timing tampered' "$red/patch_timers.py" "${rms[@]}"
run patch_harness_modules fail '^timing tampered' "$red/patch_harness_modules.py" "${rms[@]}"
run patch_gc_objects fail '^timing tampered' "$red/patch_gc_objects.py" "${rms[@]}"
run forge_stdout fail 'the candidate process (exited|sent a malformed reply)' \
  "$red/forge_stdout.py" "${rms[@]}"
run forge_proc_fd fail 'the candidate process exited with status 0' \
  "$red/forge_proc_fd.py" "${rms[@]}"
if [ "$abi" -ge 6 ]; then
  run forge_exit_code fail 'no CUDA device|the candidate process' "$red/forge_exit_code.py" \
  "${rms[@]}"
run kill_parent fail 'outputs do not match|elements outside atol' "$red/kill_parent.py" "${rms[@]}"
else
  run kill_parent fail 'killed by signal' "$red/kill_parent.py" "${rms[@]}"
fi
run modify_inputs fail '^inputs modified during a call' "$red/modify_inputs.py" "${rms[@]}"
run move_work_out charged:1.5 '' "$red/move_work_out.py" "${rms[@]}"
run inherited_fds fail 'elements outside atol' "$red/inherited_fds.py" "${rms[@]}"
run defer_thread fail '^output of a timed run is wrong' "$red/defer_thread.py" "${rms[@]}"
run restart_then_cheat fail '^output of a timed run is wrong' "$red/restart_then_cheat.py" \
  "${rms[@]}"
run read_judge fail 'elements outside atol' "$red/read_judge.py" "${rms[@]}"
run sol_dps_skip_write fail '^output of a timed run is wrong' "$red/sol_dps_skip_write.py" \
  "${rope[@]}"
run sol_patch_kernel_span fail '^timing tampered' "$red/sol_patch_kernel_span.py" "${rope[@]}"
run honest_rmsnorm pass '' "$ops/rmsnorm/reference.py" "${rms[@]}"
# Seeded timed inputs (the GPU default; forced here on the CPU): the candidate runner
# builds each timed run's inputs from the seed sent with it, so it can also tamper with
# the builder. The sampled runs, rebuilt by the reference runner, catch it.
seeded=(--timed-inputs seeded "${rms[@]}")
run seeded_patch_input_builder fail '^(inputs modified during a call|output of a timed run is wrong)' \
  "$red/patch_input_builder.py" "${seeded[@]}"
run sent_patch_input_builder fail '^output of a timed run is wrong' \
  "$red/patch_input_builder.py" "${rms[@]}"
run seeded_cache_shape fail '^output of a timed run is wrong' "$red/cache_shape.py" "${seeded[@]}"
run seeded_cache_data_ptr fail '^output of a timed run is wrong' "$red/cache_data_ptr.py" \
  "${seeded[@]}"
run seeded_defer_thread fail '^output of a timed run is wrong' "$red/defer_thread.py" \
  "${seeded[@]}"
run seeded_patch_timers fail '^timing tampered' "$red/patch_timers.py" "${seeded[@]}"
run seeded_honest_rmsnorm seeded '' "$ops/rmsnorm/reference.py" "${seeded[@]}"
# An input builder that does not repeat itself for one seed: seeded inputs would read as
# modified, so the judge sends them instead and says why.
cp -r "$ops/rmsnorm" "$tmp/rmsnorm_unrepeatable"
cat >"$tmp/rmsnorm_unrepeatable/input.py" <<'PYIN'
import os

import torch


def _make_inputs(num_tokens: int, hidden_size: int, dtype: str = "bfloat16"):
    """Draws from the OS, not from the seeded generators: a new set on every call."""
    g = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "big"))
    dt = getattr(torch, dtype)
    x = (0.5 * torch.randn(num_tokens, hidden_size, generator=g)).to(dt)
    weight = (1.0 + 0.1 * torch.randn(hidden_size, generator=g)).to(dt)
    return {"x": x, "weight": weight}
PYIN
run seeded_unrepeatable_builder sent_instead '' "$ops/rmsnorm/reference.py" \
  --timed-inputs seeded --op-dir "$tmp/rmsnorm_unrepeatable" --framework PyTorch --shape-id 0
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sources"][0]["content"], end="")' \
  "$ops/rope/solution.json" >"$tmp/rope_kernel.py"
run honest_rope pass '' "$tmp/rope_kernel.py" "${rope[@]}"
wait

for name in "${names[@]}"; do
  mapfile -t want <"$tmp/$name.want"
  if python3 - "$tmp/$name.json" "$(cat "$tmp/$name.rc")" "${want[0]}" "${want[1]:-}" \
      "$tmp/$name.err" <<'PY'
import json, re, sys
path, rc, expect, regex, errpath = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
err = open(errpath, errors="replace").read()
assert "REDTEAM-ESCAPED" not in err, [l for l in err.splitlines() if "REDTEAM-ESCAPED" in l]
d = json.load(open(path))
r = d["result"]
fails = r.get("failures") or []
fresh = (r.get("judge") or {}).get("fresh_inputs") or {}
if expect == "pass":
    assert rc == 0 and r["all_pass"], (rc, fails)
elif expect == "seeded":  # passes, every shape's timed inputs built from seeds
    assert rc == 0 and r["all_pass"], (rc, fails)
    assert fresh.get("seeded_shapes") == len(r["latency_us_by_shape"]), fresh
elif expect == "sent_instead":  # passes on sent inputs, and the note says why
    assert rc == 0 and r["all_pass"], (rc, fails)
    assert fresh.get("seeded_shapes") == 0, fresh
    notes = json.dumps(r.get("actionable_diagnostics"))
    assert "gave two different sets for one seed" in notes, notes[:2000]
elif expect.startswith("charged:"):
    assert rc == 0 and r["all_pass"], (rc, fails)
    speedup = r["speedup_vs_ref_geomean"]
    assert speedup is not None and speedup <= float(expect[8:]), (speedup, r["latency_us_by_shape"])
elif expect.startswith("slow:"):
    lat = [v for v in r["latency_us_by_shape"].values() if v is not None]
    assert all(v >= float(expect[5:]) for v in lat), r["latency_us_by_shape"]
else:
    assert rc == 1 and not r["all_pass"], (rc, r["all_pass"])
    assert any(re.search(regex, f) for f in fails), fails
# The verdict is the judge's: aka parsed one RESULT_JSON, the one carrying the judge's block.
assert isinstance(r.get("judge"), dict) and r["judge"].get("separate_processes"), r.get("judge")
PY
  then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failures=$((failures + 1)); echo "FAIL $name"; tail -5 "$tmp/$name.err"
  fi
done
echo "redteam_python: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
