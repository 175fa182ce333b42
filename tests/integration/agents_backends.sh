#!/usr/bin/env bash
# agents_backends.sh — a whole agent session through each backend's fake CLI
# (tests/fakes/), driven by `aka agent-session` in a temporary Git worktree:
# the exact fresh and resume command lines (as the fake recorded them), the
# session id, exact token totals including cache tokens, a resume turn after a
# missing handoff (or a clean stop for backends that cannot resume), one
# capture directory per invocation, large briefs off argv, settings, the
# environment, phase receipts, and the recovery triggers.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
FAKES="$AKA_SOURCE_DIR/tests/fakes"
export CODEX_HOME="$tmp/codex-home"
mkdir -p "$CODEX_HOME"

# case_dir NAME: a fresh worktree, brief and fake state for one session.
new_case() {
  c="$tmp/$1"
  mkdir -p "$c"
  git init -q "$c/wt"
  printf 'int kernel(void) { return 0; }\n' >"$c/wt/kernel.c"
  git -C "$c/wt" add kernel.c
  git -C "$c/wt" -c user.name=t -c user.email=t@t commit -qm v0
  printf 'Optimize kernel.c. Hand off when done.\n' >"$c/brief.md"
}

# session BACKEND SCENARIO_JSON [aka agent-session args...]: run it, JSON in $c/out.json.
# The fake's scenario, log and state are in $FAKE_DIR (default $c; a confined fake sees only
# its worktree).
session() {
  local backend=$1 scenario=$2 fd=${FAKE_DIR:-$c}; shift 2
  printf '%s\n' "$scenario" >"$fd/scenario.json"
  AKA_FAKE_SCENARIO="$fd/scenario.json" AKA_FAKE_LOG="$fd/log.jsonl" AKA_FAKE_STATE="$fd" \
    "$AKA_BIN" agent-session --repo-root "$AKA_SOURCE_DIR" --backend "$backend" \
    --cli "$FAKES/fake-$backend" --worktree "$c/wt" --brief "$c/brief.md" --capture "$c/cap" \
    --json "$@" >"$c/out.json" 2>"$c/err.txt" || { cat "$c/err.txt"; fail "$backend: aka agent-session failed"; }
}

# check PYTHON_EXPR...: assertions over out (the JSON), log (fake records), c (case dir).
check() {
  python3 - "$c" "$@" <<'PY' || fail "$(basename "$c"): assertion failed"
import json, os, sys
c = sys.argv[1]
out = json.load(open(os.path.join(c, "out.json")))
log = [json.loads(l) for l in open(os.path.join(c, "log.jsonl"))] if os.path.exists(os.path.join(c, "log.jsonl")) else []
for expr in sys.argv[2:]:
    if not eval(expr):
        print("assertion failed:", expr, file=sys.stderr)
        print(json.dumps(out, indent=1)[:3000], file=sys.stderr)
        print(json.dumps(log, indent=1)[:3000], file=sys.stderr)
        sys.exit(1)
PY
}

A='{"usage":{"input":10,"output":20,"cache_read":300,"cache_write":40},"id":"msg_a","repeat":2}'
B='{"usage":{"input":1,"output":2,"cache_read":3,"cache_write":4}}'
C='{"usage":{"input":5,"output":6,"cache_read":7,"cache_write":8}}'
WORK='{"phase":"start","name":"implementation"},'"$B"',{"write":"kernel.c","content":"int kernel(void) { return 1; }\n"},{"commit":"faster","paths":["kernel.c"]},{"phase":"end","name":"implementation"},{"text":"plain noise"},{"broken_json":true}'
RESUME_SCENARIO='{"turns":[{"actions":['"$A,$WORK"']},{"actions":['"$C"',{"handoff":"candidate_ready","path":"handoff.json"}]}]}'

# ---- claude: fresh + resume on the same thread, de-duplicated usage --------
new_case claude
session claude "$RESUME_SCENARIO" --handoff-file "$c/wt/handoff.json" --handoff-resumes 2
check 'out["complete"] and out["resume_count"] == 1 and out["invocations"] == 2' \
  'log[0]["argv"][:5] == ["--print","--verbose","--dangerously-skip-permissions","--output-format","stream-json"]' \
  'log[0]["argv"][5] == "--session-id" and log[1]["argv"][5] == "--resume"' \
  'log[0]["argv"][6] == log[1]["argv"][6] == out["session_id"]' \
  'log[0]["argv"][7:9] == ["--effort","max"] and log[0]["argv"][-1].startswith("Optimize kernel.c")' \
  'len(log[0]["argv"]) == 10 and "handoff.json" in log[1]["argv"][-1]' \
  'out["usage"] == {"input_tokens":16,"output_tokens":28,"cache_read_tokens":310,"cache_write_tokens":52,"total_tokens":406,"measurement":"exact"}' \
  'log[0]["stdin_at_eof"] and log[0]["env"]["ATREX_AGENT_CLI"] == "claude" and log[0]["env"]["IS_SANDBOX"] == "1"' \
  'log[0]["env"]["BASH_ENV"].endswith("runtime/guard/session_guard.sh") and log[0]["env"]["PIP_ONLY_BINARY"] == ":all:"' \
  'log[0]["env"]["ATREX_AKA_ATTEMPT_ID"] == "invocation-1" and log[1]["env"]["ATREX_AKA_ATTEMPT_ID"] == "invocation-2"' \
  'not log[0]["has_private_reference"]'
for k in 1 2; do
  for f in command.json stdout.jsonl stderr.txt events.jsonl phases.json result.json; do
    [ -f "$c/cap/invocation-$k/$f" ] || fail "claude: invocation-$k/$f missing"
  done
done
[ ! -e "$c/cap/invocation-3" ] || fail "claude: a third invocation ran"
check 'json.load(open(c + "/cap/invocation-1/phases.json"))["phases"]["implementation"]["interval_count"] == 1' \
  'json.load(open(c + "/cap/session.json"))["phase_times"]["phases"]["implementation"]["interval_count"] == 1' \
  'json.load(open(c + "/cap/session.json"))["phase_times"]["measurement"] == "exact"' \
  '"same_session_resume_usage_semantics_unqualified" in json.load(open(c + "/cap/session.json"))["phase_tokens"]["reason_codes"]'

# ---- codex: its own thread id, exec resume, cumulative usage + ledger ------
new_case codex
session codex "$RESUME_SCENARIO" --handoff-file "$c/wt/handoff.json"
check 'out["complete"] and out["resume_count"] == 1' \
  'log[0]["argv"][:5] == ["exec","--json","--color","never","--dangerously-bypass-approvals-and-sandbox"]' \
  'log[0]["argv"][5:7] == ["-c","model_reasoning_effort=\"max\""] and len(log[0]["argv"]) == 8' \
  'log[1]["argv"][:4] == ["exec","resume","--json","--dangerously-bypass-approvals-and-sandbox"]' \
  '"--color" not in log[1]["argv"] and log[1]["argv"][-2] == log[0]["thread"] == out["session_id"]' \
  'out["usage"]["total_tokens"] == 44 and out["usage"]["input_tokens"] == 16 and out["usage"]["output_tokens"] == 28' \
  'out["usage"]["cache_read_tokens"] == 310 and out["usage"]["measurement"] == "exact"' \
  'all(t["usage_delta_observed"] and t["observation_errors"] == "" for t in out["turns"])' \
  'out["turns"][1]["usage"]["total_tokens"] == 11'

# ---- qodercli: no resume; a missing handoff stops with the diagnosis --------
new_case qodercli
session qodercli "$RESUME_SCENARIO" --handoff-file "$c/wt/handoff.json"
check 'not out["complete"] and out["invocations"] == 1 and out["resume_count"] == 0' \
  '"qodercli ended without a valid terminal handoff" in out["diagnosis"]' \
  'log[0]["argv"][:4] == ["--print","--dangerously-skip-permissions","--output-format","stream-json"]' \
  'log[0]["argv"][4] == "--session-id" and log[0]["argv"][5] == out["session_id"]' \
  'log[0]["argv"][6:9] == ["--no-session-persistence","--reasoning-effort","max"] and "--verbose" not in log[0]["argv"]' \
  'out["usage"]["total_tokens"] == 380 and out["usage"]["cache_read_tokens"] == 303 and out["usage"]["measurement"] == "exact"'
new_case qoder-ok
session qodercli '{"turns":[{"actions":['"$A"',{"handoff":"pivot","path":"handoff.json"}]}]}' --handoff-file "$c/wt/handoff.json"
check 'out["complete"] and out["exit_code"] == 0 and out["usage"]["total_tokens"] == 370'
new_case qoder-zero
session qodercli '{"turns":[{"actions":[{"usage":{"input":0,"output":0}},{"phase":"start","name":"planning"},{"phase":"end","name":"planning"}]}]}'
check 'out["usage"]["measurement"] == "unavailable" and out["usage"]["total_tokens"] is None' \
  '"qodercli_usage_not_reported" in out["observation_errors"]'
grep -q '"phase_marker"' "$c/cap/events.jsonl" || fail "qodercli zero usage: markers were dropped"

# ---- pi: no resume; usage per message, settled terminal ----------------------
new_case pi
session pi "$RESUME_SCENARIO" --handoff-file "$c/wt/handoff.json"
check 'not out["complete"] and out["invocations"] == 1 and "pi ended without a valid terminal handoff" in out["diagnosis"]' \
  'log[0]["argv"][:7] == ["--mode","json","--session-id",out["session_id"],"--approve","--thinking","max"]' \
  'out["usage"] == {"input_tokens":11,"output_tokens":22,"cache_read_tokens":303,"cache_write_tokens":44,"total_tokens":380,"measurement":"exact"}'
new_case pi-unsettled
session pi '{"turns":[{"actions":['"$C"',{"compaction":{"input":1,"output":1}}],"terminal":false}]}'
check 'out["usage"]["total_tokens"] == 28 and out["usage"]["measurement"] == "partial"'
new_case pi-settings
ATREX_SESSION_SETTINGS='{"provider":"generic"}' ATREX_PI_SESSION_SETTINGS='{"provider":"anthropic","model":"m1"}' \
  session pi '{"turns":[{"actions":[]}]}'
check 'log[0]["argv"][7:11] == ["--provider","anthropic","--model","m1"]'

# ---- briefs too large for argv go on stdin / by file --------------------------
for b in claude codex qodercli pi; do
  new_case "big-$b"
  python3 -c 'print("x" * 200000)' >"$c/brief.md"
  session "$b" '{"turns":[{"actions":[]}]}'
  case $b in
    claude) check 'log[0]["prompt_source"] == "stdin" and log[0]["prompt_len"] == 200001' ;;
    codex) check 'log[0]["argv"][-1] == "-" and log[0]["prompt_len"] == 200001' ;;
    qodercli) check 'log[0]["prompt_source"] == "argv" and "brief.md" in log[0]["argv"][-1] and len(log[0]["argv"][-1]) < 1000' ;;
    pi) check 'log[0]["prompt_source"] == "file" and log[0]["prompt_len"] == 200001' ;;
  esac
done

# ---- settings: the backend variable, else the generic one ----------------------
new_case claude-settings
ATREX_SESSION_SETTINGS='/generic.json' ATREX_CLAUDE_SESSION_SETTINGS='{"model":"x"}' \
  session claude '{"turns":[{"actions":[]}]}' --effort high
check 'log[0]["argv"][7:11] == ["--effort","high","--settings","{\"model\":\"x\"}"]'
new_case codex-settings
ATREX_CODEX_SESSION_SETTINGS='{"model_reasoning_effort":"low","sandbox_mode":"x","n":3}' \
  session codex '{"turns":[{"actions":[]}]}'
check 'log[0]["config"] == ["model_reasoning_effort=\"low\"","sandbox_mode=\"x\"","n=3"]'
new_case codex-bad-settings
printf '{"turns":[{"actions":[]}]}\n' >"$c/scenario.json"
if ATREX_CODEX_SESSION_SETTINGS='{"bad key":1}' "$AKA_BIN" agent-session --repo-root "$AKA_SOURCE_DIR" \
  --backend codex --cli "$FAKES/fake-codex" --worktree "$c/wt" --brief "$c/brief.md" \
  --capture "$c/cap" >/dev/null 2>"$c/err.txt"; then fail "bad codex settings were accepted"; fi
grep -q "ATREX_CODEX_SESSION_SETTINGS" "$c/err.txt" || fail "bad settings message: $(cat "$c/err.txt")"

# ---- recovery triggers -----------------------------------------------------------
new_case transient
session claude '{"turns":[{"actions":['"$B"',{"api_error":true}],"exit":1,"terminal":false},{"actions":[{"handoff":"blocked","path":"handoff.json"}]}]}' \
  --handoff-file "$c/wt/handoff.json"
check 'out["complete"] and out["resume_count"] == 1 and out["turns"][0]["transient_api_error"]' \
  'out["usage"]["measurement"] == "partial"'
new_case sigterm
session claude '{"turns":[{"actions":[{"signal":"TERM"}]},{"actions":[{"handoff":"pivot","path":"handoff.json"}]}]}' \
  --handoff-file "$c/wt/handoff.json"
check 'out["complete"] and out["resume_count"] == 1 and out["turns"][0]["exit_code"] == 143'
new_case crash
session claude '{"turns":[{"actions":[{"signal":"SEGV"}]},{"actions":[{"handoff":"pivot","path":"handoff.json"}]}]}' \
  --handoff-file "$c/wt/handoff.json"
check 'not out["complete"] and out["invocations"] == 1 and "session failed: exit=139" in out["diagnosis"]'
new_case timeout
session codex '{"turns":[{"actions":['"$C"',{"sleep":30}]},{"actions":['"$B"',{"handoff":"pivot","path":"handoff.json"}]}]}' \
  --handoff-file "$c/wt/handoff.json" --timeout 2
check 'out["complete"] and out["resume_count"] == 1 and out["turns"][0]["timed_out"]' \
  'out["turns"][0]["exit_code"] == 124 and "time limit" in open(c + "/cap/invocation-2/prompt.md").read()'
new_case stale-handoff
printf '{"status":"pivot"}\n' >"$c/wt/handoff.json"
session claude '{"turns":[{"actions":[]}]}' --handoff-file "$c/wt/handoff.json" --handoff-resumes 0
check 'not out["complete"] and "does not exist" in out["diagnosis"]'

# ---- aka trace on its own ---------------------------------------------------------
trace="$tmp/trace.jsonl"
ATREX_AKA_TRACE_FILE="$trace" "$AKA_BIN" trace phase-start research >"$tmp/receipt"
grep -q '^ATREX_TRACE_EVENT={"action":"start","kind":"phase_marker","marker_id":"[0-9a-f]\{32\}","phase":"research","schema":"atrex.iteration_trace.v1"}$' "$tmp/receipt" ||
  fail "trace receipt: $(cat "$tmp/receipt")"
ATREX_AKA_TRACE_FILE="$trace" "$AKA_BIN" trace source-read wiki hw.h200.hbm3e >/dev/null
ATREX_AKA_TRACE_FILE="$trace" "$AKA_BIN" trace phase-end research >/dev/null
[ "$(wc -l <"$trace")" = 3 ] || fail "trace file: $(cat "$trace")"
grep -q '"event":"source_read","kind":"wiki"' "$trace" || grep -q '"kind":"wiki"' "$trace" || fail "source read not recorded"
if ATREX_AKA_TRACE_FILE="$trace" "$AKA_BIN" trace phase-start dancing 2>/dev/null; then fail "unknown phase accepted"; fi
if "$AKA_BIN" trace source-read gossip x 2>/dev/null; then fail "unknown source kind accepted"; fi
env -u ATREX_AKA_TRACE_FILE "$AKA_BIN" trace phase-start profile >"$tmp/receipt" 2>/dev/null
[ ! -s "$tmp/receipt" ] || fail "a receipt was printed outside a session"

# ---- --gpus: a confined test agent gets the GPU's nodes, or is refused naming them ----
new_case gpus
printf '{"turns":[{"actions":[]}]}\n' >"$c/scenario.json"
gpus() { # N: exit status of a confined session asking for N GPUs
  local rc=0
  AKA_FAKE_SCENARIO="$c/scenario.json" AKA_FAKE_LOG="$c/log.jsonl" AKA_FAKE_STATE="$c" \
    "$AKA_BIN" agent-session --repo-root "$AKA_SOURCE_DIR" --backend claude \
    --cli "$FAKES/fake-claude" --worktree "$c/wt" --brief "$c/brief.md" --capture "$c/cap$1" \
    --agent-sandbox bwrap --gpus "$1" >/dev/null 2>"$c/err.txt" || rc=$?
  return $rc
}
rc=0; gpus 2 || rc=$?
[ "$rc" = 2 ] && grep -q -- "--gpus: expected an integer in \[0, 1\]" "$c/err.txt" ||
  fail "--gpus 2: exit $rc: $(cat "$c/err.txt")"
if [ ! -e /dev/nvidia0 ] && command -v bwrap >/dev/null; then
  rc=0; gpus 1 || rc=$?
  [ "$rc" = 75 ] && grep -q "no NVIDIA GPU: /dev/nvidia0 not found" "$c/err.txt" ||
    fail "--gpus 1 without a GPU: exit $rc: $(cat "$c/err.txt")"
fi

# ---- an explicit `aka eval --op-dir` inside the agent sandbox (no episode) ------------
# It sandboxes its job inside the agent's sandbox as an episode's does: started by root,
# bwrap covers part of the agent's /proc, and a job that asks for a fresh one is refused
# ("Can't mount proc"); it then shares the agent's. Before 2026-12-07 only an episode's
# `aka eval` knew it was nested; `aka sandbox run` (an agent's own probe) learned it too.
if command -v bwrap >/dev/null && "$AKA_BIN" sandbox run -- true >/dev/null 2>&1; then
  new_case nested-eval
  cp -r "$AKA_SOURCE_DIR/examples/ops/vector_add" "$c/wt/op"
  cp "$AKA_SOURCE_DIR/examples/ops/vector_add/seeds/C/kernel.c" "$c/wt/kernel.c"
  FAKE_DIR=$c/wt session claude '{"turns":[{"actions":[{"sh":"aka eval --op-dir op --kernel kernel.c --platform cpu --framework C --timed-runs 3 >ev.txt 2>&1; echo rc=$? >>ev.txt; aka sandbox run -- echo nested-job-ran >run.txt 2>&1; echo rc=$? >>run.txt"}]}]}' \
    --agent-sandbox bwrap
  grep -q "^rc=0$" "$c/wt/ev.txt" && grep -q "sandbox bwrap" "$c/wt/ev.txt" ||
    fail "nested-eval: the agent's aka eval did not pass in its own sandbox: $(tail -3 "$c/wt/ev.txt")"
  grep -q "^rc=0$" "$c/wt/run.txt" && grep -q "^nested-job-ran$" "$c/wt/run.txt" ||
    fail "nested-eval: the agent's aka sandbox run failed: $(tail -3 "$c/wt/run.txt")"
fi

# ---- skills for each backend ------------------------------------------------------
new_case skills
for b in claude qodercli codex pi; do
  "$AKA_BIN" agent-session --repo-root "$AKA_SOURCE_DIR" --backend "$b" --install-skills "$c/wt"
done
for f in .claude/skills/aka-protocol/SKILL.md .claude/agents/kernel-engineer.md \
  .qoder/skills/kernel-optimization/SKILL.md .agents/skills/aka-protocol/SKILL.md \
  .claude/skills/plan-review/SKILL.md .agents/skills/plan-review/SKILL.md; do
  [ -f "$c/wt/$f" ] || fail "skills: $f not installed"
done
[ -z "$(git -C "$c/wt" status --porcelain)" ] || fail "skills show up in git status: $(git -C "$c/wt" status --porcelain)"

echo "agents_backends: ok"
