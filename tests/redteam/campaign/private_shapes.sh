#!/bin/bash
# private_shapes.sh — generalized production keeps the evaluator's shapes private (issue 14
# must-show 4; docs/production.md, "Generalized production").
#
# The operator is vector_add (slow reference, tests/lib/campaign_fixture.sh) whose two
# private shapes have distinctive sizes, N = 7919 and N = 104729, under ids pv_first and
# pv_second; its agent_problem.json gives two development cases (4096, 50001). A
# production campaign with --generalized runs two episodes of the fake Claude CLI, confined
# (--agent-sandbox bwrap, as generalized mode requires). In every session — the agent's and
# the policy reviewer's — capture.py, run from inside the sandbox, appends to one capture
# file everything that session can read: its environment, the output of every aka command
# an agent uses (`aka eval`, `aka memory`, `aka status`, `aka inspect` of its operator), and
# the contents of every file it can see (its whole filesystem view but /proc, /sys, /dev,
# /usr and the Python installation: worktree, view, home, /tmp, the brief, the bound asset
# tree...).
#   episode 1  the agent hands off a kernel that is correct on the development cases and
#              wrong for N > 60000: the supervisor's verification (full, ABBA) fails on the
#              private pv_second and the candidate is rejected with the run's first failure
#              in its record — unmasked, that failure reads "104729 of 104729 elements
#              outside ..." (checked below on a plain `aka eval`);
#   episode 2  the agent reads what episode 1 left (memory/v1.json, its brief) and hands
#              off the fast seed kernel: promoted.
# The capture must hold no private value and no private id; to show the scan is not
# vacuous it must hold the masked ids (case-1, case-2), the public problem and both
# sessions of both episodes. Also: the records keep per-shape latency under the opaque
# ids, and the refusals (leaderboard, --agent-sandbox none, Atrex layout, no
# agent_problem.json, a development case equal to a private shape, a changed
# agent_problem.json on resume) are exit 2 with their reason.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree), AKA_HOSTILE_KEEP
# (optional: keep the temporary directory).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
command -v python3 >/dev/null || { echo "private_shapes: SKIP (no python3)"; exit 77; }
"$AKA" sandbox run -- true >/dev/null 2>&1 || { echo "private_shapes: SKIP (no usable bwrap)"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-private.XXXXXX")
if [ -n "${AKA_HOSTILE_KEEP:-}" ]; then trap 'echo "kept $TMP"' EXIT; else trap 'rm -rf "$TMP"' EXIT; fi
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
jstr() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
. "$SRC/tests/lib/campaign_fixture.sh"

# ---- the operator ---------------------------------------------------------------------------
OP=$TMP/op
slow_vector_add "$SRC" "$OP"
python3 - "$OP" <<'PY'
import json, sys
op = sys.argv[1]
d = json.load(open(op + "/operator.json"))
d["shapes"] = [{"id": "pv_first", "dims": {"N": 7919}},
               {"id": "pv_second", "dims": {"N": 104729}, "description": "the large case"}]
json.dump(d, open(op + "/operator.json", "w"), indent=1)
json.dump({"schema_version": "aka.agent_problem.v1",
           "objective": "z = x + y elementwise over float32 vectors of any length",
           "invariants": ["any N >= 1, not only multiples of an unroll factor"],
           "shape_domain": {"N": "a few thousand to a few hundred thousand elements"},
           "development_cases": [{"name": "dev_small", "dims": {"N": 4096}},
                                 {"name": "dev_odd", "dims": {"N": 50001}}]},
          open(op + "/agent_problem.json", "w"), indent=1)
PY
FAST_KERNEL=$(cat "$OP/seeds/C/kernel.c")
BIG_BUG=${FAST_KERNEL//    return AKA_OK;/    if (n > 60000) \/* a bug only large inputs reach *\/
        for (int64_t k = 0; k < n; k++)
            z[k] = -z[k];
    return AKA_OK;}
[ "$BIG_BUG" != "$FAST_KERNEL" ] || fail "could not derive the kernel with a large-input bug"
printf '%s\n' "$BIG_BUG" >"$TMP/big_bug.c"

# scan FILE: every private value or id in FILE, with its context; exit 1 when there is one.
# A value counts as a number of its own (not the digits of a longer number or of a
# fraction such as a latency's 3.7919).
cat >"$TMP/scan.py" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
pat = re.compile(r"(?<![0-9.])(7919|104729)(?![0-9])|pv_first|pv_second")
hits = [m for m in pat.finditer(text)]
for m in hits[:20]:
    print("private value %r at %d: ...%s..." % (m.group(0), m.start(),
          text[max(0, m.start() - 120):m.end() + 60].replace("\n", "\\n")))
sys.exit(1 if hits else 0)
PY

# 0. The scan sees what masking hides: the supervisor-side, unmasked evaluation of the
#    large-input bug names the private size in its failure.
"$AKA" eval --op-dir "$OP" --kernel "$TMP/big_bug.c" --platform cpu --framework C \
  --timed-runs 1 >"$TMP/unmasked.txt" 2>&1 || true
python3 "$TMP/scan.py" "$TMP/unmasked.txt" >/dev/null &&
  fail "the unmasked evaluation shows no private value: the scan below would prove nothing"
ok "0 unmasked: a plain evaluation of the bug names the private size (the scan finds it)"

# ---- the fake agent's world -----------------------------------------------------------------
FAKE=$TMP/fake
mkdir -p "$FAKE"
CAPTURE=$FAKE/capture.txt
cat >"$FAKE/capture.py" <<'PY'
# capture.py OUT LABEL: everything this session can read, appended to OUT.
import os, subprocess, sys
out = open(sys.argv[1], "a", errors="replace")
me = os.path.realpath(sys.argv[1])
def section(title, text):
    out.write("==== %s %s\n%s\n" % (sys.argv[2], title, text))
section("env", "\n".join("%s=%s" % kv for kv in sorted(os.environ.items())))
view = os.environ.get("ATREX_AKA_WORKSPACE")
cmds = [["aka", "eval"], ["aka", "eval", "--shape-id", "case-1"], ["aka", "memory", "latest"],
        ["aka", "memory", "show", "v0"], ["aka", "memory", "show", "v1"], ["aka", "status"]]
if view:
    cmds.append(["aka", "inspect", "--op-dir", view + "/.aka/operator"])
for argv in cmds:
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=300)
        section("$ %s (exit %d)" % (" ".join(argv), p.returncode), p.stdout)
    except OSError as e:
        section("$ %s" % " ".join(argv), "not run: %s" % e)
skip = {"/proc", "/sys", "/dev", "/usr", os.path.realpath(sys.base_prefix),
        os.path.realpath(sys.prefix)}
files = 0
for root, dirs, names in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
    section("dir " + root, " ".join(sorted(dirs + names)))
    for n in names:
        p = os.path.join(root, n)
        try:
            if os.path.realpath(p) == me or not os.path.isfile(p) or os.path.getsize(p) > 4 << 20:
                continue
            data = open(p, "rb").read()
        except OSError:
            continue
        if data[:4] == b"\x7fELF":  # the aka binary and its libraries: not text an agent reads
            continue
        files += 1
        section("file " + p, data.decode("utf-8", "replace"))
section("summary", "files read: %d" % files)
PY
cat >"$FAKE/finish.sh" <<'SH'
#!/bin/bash
set -euo pipefail
cd /
commit=(--candidate-commit "$(git -C "$ATREX_AKA_WORKTREE" rev-parse HEAD)")
aka journal append --experiment-json "{\"name\": \"trial\", \"episode\": $ATREX_AKA_EPISODE,
  \"hypothesis\": \"h\", \"change\": \"c\", \"result\": \"r\", \"decision\": \"keep_as_best\"}"
aka journal finalize --state candidate_ready "${commit[@]}" \
  --outcome-json '{"summary": "candidate", "next_directions": []}'
aka handoff --status candidate_ready "${commit[@]}"
SH
VERDICT=$(reviewer_pass_step)
USAGE='{"usage":{"input":100,"output":50,"cache_read":0,"cache_write":0}}'
capture() { jstr "python3 $FAKE/capture.py $CAPTURE $1"; }

# This test is about what the agent can read, not about timing: the dispersion gate is
# widened (a loaded 2-vCPU runner measured 15.5% once) so a real speed-up is promoted
# whatever the load; the gate itself is tested by the campaign and ABBA suites.
ARGS=(optimize --optimization-mode production --framework-baseline never --generalized
  --op-dir "$OP" --platform cpu --framework C --agent-cli claude
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" --agent-writable-path "$FAKE"
  --fast-episodes 0 --verify-repeats 4 --handoff-resumes 0 --max-dispersion-pct 50)
WS=$TMP/kernel_opt_vector_add_c_cpu_production
export XDG_CACHE_HOME=$TMP/cache

# episode N KERNEL: the agent captures, commits KERNEL, evaluates, hands off; the reviewer
# captures and passes it.
episode() {
  printf '{"turns":[{"actions":[%s,{"sh":%s},{"write":"kernel.c","content":%s},%s,%s,%s]},{"actions":[%s,{"sh":%s},%s]}]}\n' \
    "$USAGE" "$(capture "agent-e$1")" "$(jstr "$2")" '{"commit":"candidate","paths":["kernel.c"]}' \
    '{"sh":"aka eval >/dev/null 2>&1 || true"}' "{\"sh\":$(jstr "bash $FAKE/finish.sh")}" \
    "$USAGE" "$(capture "reviewer-e$1")" "$VERDICT" >"$FAKE/scenario.json"
  rm -f "$FAKE/fake-invocations"
  AKA_FAKE_SCENARIO="$FAKE/scenario.json" AKA_FAKE_LOG="$FAKE/fake.log" AKA_FAKE_STATE="$FAKE" \
    "$AKA" "${ARGS[@]}" --max-iters "$1" >"$TMP/out" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; fail "episode $1: aka optimize exit $?"; }
}
record_field() {
  git -C "$WS" show "HEAD:memory/v$1.json" |
    python3 -c 'import json,sys; m=json.load(sys.stdin); print('"$2"')'
}

# ---- the campaign ---------------------------------------------------------------------------
AKA_FAKE_SCENARIO=/dev/null "$AKA" "${ARGS[@]}" --max-iters 0 >"$TMP/out" 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "V0"; }
episode 1 "$BIG_BUG"
[ "$(record_field 1 'm["status"]')" = rejected ] || fail "episode 1: v1 is $(record_field 1 'm["status"]')"
record_field 1 'm["episode"]["violation"]' | grep -q "candidate run .*: a correctness or runtime check failed (details hidden: generalized evaluation)" ||
  fail "episode 1: not rejected by the (masked) verification: $(record_field 1 'm["episode"]["violation"]')"
episode 2 "$FAST_KERNEL"
[ "$(record_field 2 'm["status"]')" = promoted ] ||
  fail "episode 2: not promoted: $(record_field 2 'm["episode"]["violation"]')"
ok "1 campaign: the large-input bug rejected by the private evaluation, the fast kernel promoted"

[ "$(record_field 2 '",".join(sorted(m["performance"]["latency_us_by_shape"]))')" = "case-1,case-2" ] ||
  fail "v2's per-shape latencies: $(record_field 2 'm["performance"]["latency_us_by_shape"]')"
ok "2 records: per-shape latency under the opaque ids case-1, case-2"

# ---- the scan -------------------------------------------------------------------------------
for s in agent-e1 reviewer-e1 agent-e2 reviewer-e2; do
  n=$(grep -a "^==== $s summary" -A1 "$CAPTURE" | sed -n 's/^files read: //p')
  [ "${n:-0}" -ge 20 ] || fail "capture: session $s read ${n:-no} files"
done
grep -aq '"case-2"' "$CAPTURE" || fail "capture: no masked id case-2 (the records were not read)"
grep -aq "dev_odd" "$CAPTURE" || fail "capture: the public development cases are not in it"
grep -aq "any N >= 1, not only multiples" "$CAPTURE" || fail "capture: the public problem is not in it"
grep -aq "^==== agent-e2 \$ aka eval (exit 0)" "$CAPTURE" || fail "capture: episode 2's aka eval did not pass"
grep -aq "^==== agent-e2 file .*BRIEF.md" "$CAPTURE" || fail "capture: episode 2's brief is not in it"
python3 "$TMP/scan.py" "$CAPTURE" >"$TMP/hits" || { cat "$TMP/hits" >&2; fail "a private value reached an agent"; }
ok "3 scan: $(wc -c <"$CAPTURE") bytes an agent or reviewer could read, no private value or id"

# ---- refusals -------------------------------------------------------------------------------
refused() { # NAME PATTERN ARGS...: exit 2 naming PATTERN
  local name=$1 pat=$2 rc=0
  shift 2
  AKA_FAKE_SCENARIO=/dev/null "$AKA" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$TMP/err" >&2; fail "$name: exit $rc, want 2"; }
  grep -q -- "$pat" "$TMP/err" || fail "$name: $(tail -1 "$TMP/err")"
}
base=(optimize --framework-baseline never --generalized --agent-cli claude
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --max-iters 0)
mkdir -p "$TMP/r"
refused leaderboard "expected --optimization-mode production" "${base[@]}" --op-dir "$OP" \
  --framework C --platform cpu --workspace "$TMP/r"
refused unconfined "expected --agent-sandbox bwrap; got none" "${base[@]}" --op-dir "$OP" \
  --framework C --platform cpu --workspace "$TMP/r" --optimization-mode production --agent-sandbox none
refused atrex "generalized production of Atrex-Bench and SOL operators is not built" \
  "${base[@]}" --op-dir "$SRC/examples/ops/rmsnorm" --framework Triton --platform h100 \
  --workspace "$TMP/r" --optimization-mode production
cp -r "$OP" "$TMP/op2" && rm "$TMP/op2/agent_problem.json"
refused no-problem "problem-authoring session is not built" "${base[@]}" --op-dir "$TMP/op2" \
  --framework C --platform cpu --workspace "$TMP/r" --optimization-mode production
python3 - "$TMP/op2/agent_problem.json" "$OP/agent_problem.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
d["development_cases"][1]["dims"]["N"] = 104729
json.dump(d, open(sys.argv[1], "w"))
PY
refused twin 'development_cases\[1\].dims: expected no exact private case' "${base[@]}" \
  --op-dir "$TMP/op2" --framework C --platform cpu --workspace "$TMP/r" --optimization-mode production
[ -z "$(ls "$TMP/r")" ] || fail "a refused campaign wrote $(ls "$TMP/r")"
python3 - "$OP/agent_problem.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["objective"] += " (edited)"
json.dump(d, open(sys.argv[1], "w"))
PY
refused changed "agent_problem_sha256: the campaign pinned" "${ARGS[@]}" --max-iters 2
ok "4 refusals: leaderboard, unconfined, Atrex, no problem, a private twin, a changed problem"
