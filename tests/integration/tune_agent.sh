#!/bin/bash
# tune_agent.sh — `aka tune-agent` end to end on a hand-made episode of the
# native C matmul (CPU), through the real `aka eval`, sandbox and git.
#
#   1. a seed with a deliberately slow default (knob REPEAT declared first, so
#      the first coordinate-descent trial moves it) ends candidate_ready: one
#      commit touching only kernel.c, its defaults rewritten, a valid handoff
#      and journal, every evaluation recorded with its kernel hash, and the
#      committed bytes evaluated without knobs (and passing again standalone);
#   2. a second episode (goal kind), with the first one's evidence archived as the
#      supervisor archives it, tries no configuration twice;
#   3. with every configuration already in a memory record the space is
#      exhausted: pivot, and no trial is evaluated;
#   3b. the same exhausted space in a fast episode ($ATREX_AKA_FAST_TRIALS=2, as
#      the supervisor sets it): exactly 2 trials, both re-measurements of the
#      incumbent as committed, then pivot;
#   4. a malformed annotation is reported with file:line and ends blocked;
#   5. an `aka eval` that exits 75 (no verdict) ends blocked with its own reason in the
#      journal (the reason is the last line of its stderr, which is passed on too).
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-tune-test.XXXXXX")
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
# The matmul operator, with the extra knob in its "tune" table (aka eval checks --tune names).
OP=$TMP/matmul
cp -r "$SRC/examples/ops/matmul" "$OP"
python3 - "$OP/operator.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["tune"] = {"REPEAT": [1, 20], **doc["tune"]}
json.dump(doc, open(sys.argv[1], "w"), indent=1)
EOF
EVAL=(--shape-id m128_n128_k128 --timed-runs 3 --warmup 1)

ISO=bwrap
if ! "$AKA" sandbox run -- true >/dev/null 2>&1; then
    ISO=none
    echo "note: bwrap cannot run here; evaluating with --sandbox-isolation none"
fi

# make_episode DIR: a git repo holding kernel.c (the matmul seed, REPEAT knob first)
# and the campaign fields `aka eval` reads in episode mode.
make_episode() {
    local ws=$1
    mkdir -p "$ws/.aka"
    git init -q -b main "$ws"
    python3 - "$OP/seeds/C/kernel.c" "$ws/kernel.c" <<'EOF'
import sys
src = open(sys.argv[1]).read()
knob = "/* aka:tune REPEAT in {1, 20} */\n#ifndef REPEAT\n#define REPEAT 20\n#endif\n"
src = src.replace("/* aka:tune AKA_CC_ARCH", knob + "/* aka:tune AKA_CC_ARCH", 1)
body = "    memset(c, 0, (size_t)(m * n) * sizeof(float));"
assert body in src
# Recompute the whole product REPEAT times: still correct, REPEAT times slower.
src = src.replace(body, "    for (int r = 0; r < REPEAT; r++) {\n    " + body, 1)
src = src.replace("    return AKA_OK;\n}", "    }\n    return AKA_OK;\n}", 1)
open(sys.argv[2], "w").write(src)
EOF
    printf '.aka/\n' >"$ws/.gitignore"
    git -C "$ws" add kernel.c .gitignore
    git -C "$ws" -c user.name=test -c user.email=test@localhost commit -qm "V1 seed"
    printf '{"op_dir": "%s", "framework": "C", "platform": "cpu", "kernel": "kernel.c", "sandbox_isolation": "%s", "mode": "leaderboard"}\n' \
        "$OP" "$ISO" >"$ws/.aka/campaign.json"
}

# brief DIR EPISODE KIND: the title line the tuner reads its kind from.
brief() {
    printf '# Episode %s (%s): matmul on cpu\n\nThe outcome becomes `memory/v%s`.\n' \
        "$2" "$3" "$(($2 + 1))" >"$1/.aka/BRIEF.md"
}

tune() {
    local ws=$1
    shift
    (cd "$ws" && ATREX_AKA_WORKSPACE=$ws ATREX_AKA_EPISODE=$EPISODE \
        "$AKA" tune-agent --brief .aka/BRIEF.md --effort max "${EVAL[@]}" "$@")
}

# ---- 1. a better configuration is found, committed and handed off ----------------------------
WS=$TMP/ws
make_episode "$WS"
BASE=$(git -C "$WS" rev-parse HEAD)
EPISODE=2
brief "$WS" 2 fast
tune "$WS" >"$TMP/run1.out" 2>"$TMP/run1.err" || { cat "$TMP/run1.err"; exit 1; }

python3 - "$WS" "$BASE" <<'EOF'
import hashlib, json, re, subprocess, sys
ws, base = sys.argv[1], sys.argv[2]
git = lambda *a: subprocess.check_output(["git", "-C", ws, *a], text=True).strip()
h = json.load(open(f"{ws}/.aka/handoff.json"))
j = json.load(open(f"{ws}/.aka/journal.json"))
assert h["status"] == "candidate_ready", h
head = git("rev-parse", "HEAD")
assert h["candidate_commit"] == head == j["candidate_commit"], (h, head)
assert j["state"] == "candidate_ready" and j["base_commit"] == base and j["episode"] == 2, j
assert j["memory_version"] == 3 and j["outcome"]["summary"], j
assert git("rev-parse", "HEAD~1") == base
assert git("diff", "--name-only", base, head).split() == ["kernel.c"], "kernel-only commit"
kernel = open(f"{ws}/kernel.c", "rb").read()
assert re.search(rb"#define REPEAT 1\n", kernel), "defaults rewritten"
recs = [json.loads(l) for l in open(f"{ws}/.aka/evaluations.jsonl")]
assert all(re.fullmatch("[0-9a-f]{64}", r["kernel_sha256"]) for r in recs)
sha = hashlib.sha256(kernel).hexdigest()
final = [r for r in recs if r["kernel_sha256"] == sha and r["tune"] == {}]
assert final and final[-1]["all_pass"], "committed bytes evaluated without knobs"
trials = [e for e in j["experiments"] if e["name"].startswith("trial")]
assert len(trials) == 5 and all(len(e["tune"]) == 9 for e in trials), j["experiments"]
assert sum(1 for r in recs if r["tune"]) == 5, "each trial is an aka eval --tune"
EOF
echo "ok: candidate_ready with a kernel-only commit, journal and hash-matched evaluations"

# The committed kernel, knob-free, passes a standalone evaluation too.
"$AKA" eval --op-dir "$OP" --kernel "$WS/kernel.c" --framework C --platform cpu \
    --sandbox-isolation "$ISO" "${EVAL[@]}" >"$TMP/standalone.out" 2>"$TMP/standalone.err"
echo "ok: the committed kernel passes without knobs"

# ---- 2. the next episode never repeats a configuration -------------------------------------
# As the supervisor does: archive the episode's evidence, start the next one clean.
ARCHIVE=$WS/.aka/episodes/e0002/runtime
mkdir -p "$ARCHIVE"
cp "$WS/.aka/journal.json" "$TMP/journal1.json"
mv "$WS/.aka/journal.json" "$WS/.aka/handoff.json" "$WS/.aka/evaluations.jsonl" "$ARCHIVE/"
EPISODE=3
brief "$WS" 3 goal
tune "$WS" >"$TMP/run2.out" 2>"$TMP/run2.err" || { cat "$TMP/run2.err"; exit 1; }
python3 - "$WS" "$TMP/journal1.json" <<'EOF'
import json, sys
ws, j1 = sys.argv[1], json.load(open(sys.argv[2]))
j2 = json.load(open(f"{ws}/.aka/journal.json"))
h = json.load(open(f"{ws}/.aka/handoff.json"))
assert h["status"] in ("candidate_ready", "pivot") and j2["state"] == h["status"], (h, j2)
key = lambda e: tuple(sorted(e["tune"].items()))
tried = [key(e) for j in (j1, j2) for e in j["experiments"] if e["name"].startswith("trial")]
assert len(tried) == 10 and len(set(tried)) == 10, f"a configuration was repeated: {tried}"
incumbent1 = key([e for e in j1["experiments"] if e["name"] == "incumbent"][0])
assert incumbent1 not in tried, "the first incumbent was tried again"
EOF
echo "ok: a second episode tries 5 new configurations"

# ---- 3. an exhausted space is a pivot with no trial ------------------------------------------
WS3=$TMP/ws3
make_episode "$WS3"
mkdir -p "$WS3/memory"
python3 - "$WS3/memory/v1.json" <<'EOF'
import itertools, json, sys
space = {"REPEAT": ["1", "20"], "AKA_CC_ARCH": ["generic", "native"], "AKA_CC_FMA": ["off", "on"],
         "MR": ["4", "6", "8"], "NR": ["8", "16", "32"], "KC": ["128", "256", "512"],
         "MC": ["48", "96", "192"], "AKA_CC_OPT": ["O2", "O3"], "AKA_CC_UNROLL": ["off", "on"]}
tried = [dict(zip(space, vals)) for vals in itertools.product(*space.values())]
json.dump({"version": 1, "experiments": [{"tune": t} for t in tried]}, open(sys.argv[1], "w"))
EOF
EPISODE=4
brief "$WS3" 4 full
tune "$WS3" >"$TMP/run3.out" 2>"$TMP/run3.err" || { cat "$TMP/run3.err"; exit 1; }
python3 - "$WS3" <<'EOF'
import json, sys
ws = sys.argv[1]
h = json.load(open(f"{ws}/.aka/handoff.json"))
j = json.load(open(f"{ws}/.aka/journal.json"))
assert h["status"] == "pivot" and "exhausted" in j["outcome"]["summary"], (h, j["outcome"])
assert [e["name"] for e in j["experiments"]] == ["incumbent"], j["experiments"]
assert len(open(f"{ws}/.aka/evaluations.jsonl").readlines()) == 1
EOF
[ "$(git -C "$WS3" rev-list --count HEAD)" = 1 ] || { echo "FAIL: pivot committed"; exit 1; }
echo "ok: exhausted space → pivot without trials or commits"

# ---- 3b. exhausted in a fast episode: the remaining trials are re-measurements ----------------
rm "$WS3/.aka/journal.json" "$WS3/.aka/handoff.json" "$WS3/.aka/evaluations.jsonl"
EPISODE=5
brief "$WS3" 5 fast
ATREX_AKA_FAST_TRIALS=2 tune "$WS3" >"$TMP/run3b.out" 2>"$TMP/run3b.err" ||
    { cat "$TMP/run3b.err"; exit 1; }
python3 - "$WS3" <<'EOF'
import json, sys
ws = sys.argv[1]
h = json.load(open(f"{ws}/.aka/handoff.json"))
j = json.load(open(f"{ws}/.aka/journal.json"))
s = j["outcome"]["summary"]
assert h["status"] == "pivot" and "exhausted" in s and "2 trial(s) re-measured" in s, (h, s)
e = j["experiments"]
assert [x["name"] for x in e] == ["incumbent", "trial 1", "trial 2"], e
assert all("re-measure" in x["hypothesis"] and x["decision"] == "reject_and_continue"
           for x in e[1:]), e
recs = [json.loads(l) for l in open(f"{ws}/.aka/evaluations.jsonl")]
assert len(recs) == 3 and all(r["tune"] == {} and r["episode"] == "5" for r in recs), recs
assert len({r["kernel_sha256"] for r in recs}) == 1, "not the committed kernel each time"
EOF
[ "$(git -C "$WS3" rev-list --count HEAD)" = 1 ] || { echo "FAIL: fast pivot committed"; exit 1; }
echo "ok: exhausted space in a fast episode → 2 re-measurement trials, then pivot"

# ---- 4. a malformed annotation ends the episode blocked, with file:line -----------------------
sed -i 's|aka:tune KC in {128, 256, 512}|aka:tune KC in {128, 256,}|' "$WS3/kernel.c"
rm "$WS3/.aka/journal.json" "$WS3/.aka/handoff.json"
tune "$WS3" >"$TMP/run4.out" 2>"$TMP/run4.err" || { cat "$TMP/run4.err"; exit 1; }
python3 - "$WS3" <<'EOF'
import json, sys
ws = sys.argv[1]
h = json.load(open(f"{ws}/.aka/handoff.json"))
j = json.load(open(f"{ws}/.aka/journal.json"))
assert h["status"] == "blocked", h
assert j["outcome"]["summary"].startswith("kernel.c:") and "malformed" in j["outcome"]["summary"], j
EOF
echo "ok: malformed annotation → blocked, reported as kernel.c:LINE"

# ---- 5. an evaluation with no verdict ends blocked, naming why ---------------------------------
# Its sandbox temp directory ($TMPDIR) does not exist, so every `aka eval` exits 75; the
# reason it prints must reach the journal, not only the agent's stderr.
WS4=$TMP/ws4
make_episode "$WS4"
brief "$WS4" 1 full
(cd "$WS4" && TMPDIR=$TMP/absent ATREX_AKA_WORKSPACE=$WS4 ATREX_AKA_EPISODE=$EPISODE \
    "$AKA" tune-agent --brief .aka/BRIEF.md --effort max "${EVAL[@]}") \
    >"$TMP/run5.out" 2>"$TMP/run5.err" || true
python3 - "$WS4" "$TMP/absent" <<'EOF'
import json, sys
ws, absent = sys.argv[1], sys.argv[2]
h = json.load(open(f"{ws}/.aka/handoff.json"))
j = json.load(open(f"{ws}/.aka/journal.json"))
assert h["status"] == "blocked", h
summary = j["outcome"]["summary"]
assert "exited with status 75 (no verdict)" in summary and absent in summary, summary
EOF
grep -q "sandbox temp directory $TMP/absent" "$TMP/run5.err" ||
    { echo "FAIL: the evaluation's stderr did not reach the agent's"; exit 1; }
echo "ok: an evaluation with no verdict → blocked, its reason in the journal"

# Usage errors exit 2 before anything is written.
set +e
"$AKA" tune-agent --effort max >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: missing --brief is not a usage error"; exit 1; }
(cd "$TMP" && env -u ATREX_AKA_WORKSPACE "$AKA" tune-agent --brief "$WS/.aka/BRIEF.md" >/dev/null 2>&1)
[ $? = 2 ] || { echo "FAIL: no workspace is not a usage error"; exit 1; }
brief "$WS3" 6 fast
rm -f "$WS3/.aka/journal.json" "$WS3/.aka/handoff.json"
ATREX_AKA_FAST_TRIALS=0 tune "$WS3" >/dev/null 2>"$TMP/badtrials.err"
[ $? = 2 ] || { echo "FAIL: ATREX_AKA_FAST_TRIALS=0 is not a usage error"; exit 1; }
grep -q "ATREX_AKA_FAST_TRIALS: expected a whole number from 1 to 1000; got '0'" "$TMP/badtrials.err" ||
    { echo "FAIL: bad trials message: $(cat "$TMP/badtrials.err")"; exit 1; }
[ ! -e "$WS3/.aka/journal.json" ] || { echo "FAIL: a usage error wrote the journal"; exit 1; }
set -e
echo "ok: usage errors"
