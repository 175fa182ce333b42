#!/bin/bash
# report.sh — `aka report` on real workspaces:
#   a. a finished native C campaign (built-in agent, V0, V1 and two episodes): one page
#      with a latency point per version, the episodes' journals, the incumbent's
#      roofline with its sources and "not recorded" for records without one; the same
#      bytes twice and through the default output name; the workspace unchanged;
#   a2. agent text that is markup (a journal summary "<script>alert(1)</script>", an
#      "<img onerror>" description, a URL in a hypothesis) appears escaped, as text;
#      a hand-added ABBA verification shows its interval, threshold and 8 runs; a shape
#      slower than V0 is flagged;
#   b. a campaign still running (an episode in flight: live phase "exploring", an
#      episode directory without journal yet): "not stopped", "no archived journal";
#   c. a campaign whose V0 failed (a reference that does not build): the failure shown,
#      no chart points;
#   d. a directory of workspaces: index.html with one sortable row per campaign linking
#      each child's page, written under -o DIR (default ./<name>-report/);
#   e. bad input: a missing workspace, a garbled memory record, journal or session,
#      wrong types in verification runs and roofline: exit 2, one line naming file and
#      field, and no output file.
# Every page written is scanned by tests/lib/report_scan.py (no external URL, one
# script, no event handler attribute).
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-report.XXXXXX")
[ -n "${AKA_KEEP_TMP:-}" ] || trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P)
unset ATREX_AKA_WORKSPACE
fail() { echo "FAIL: $*" >&2; exit 1; }
scan() { python3 "$SRC/tests/lib/report_scan.py" "$@" >"$TMP/scan" || fail "scan of $*"; }
points() { scan "$1"; sed -n 's/.* points=//p' "$TMP/scan"; }
has() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "$1 has: $2"; }
expect() {
    local want=$1 got=0
    shift
    "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
    [ "$got" = "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $got, expected $want"; }
}
tree_hash() {
    (cd "$1" && find . -printf '%p %m %s\n' | LC_ALL=C sort && \
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum
}
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
campaign() { # campaign OP_DIR WORKSPACE_PARENT MAX_ITERS: exit status of aka optimize
    "$AKA" optimize --op-dir "$1" --platform cpu --framework C --agent-cli builtin \
        --max-iters "$3" --workspace "$2" --sandbox-isolation "$ISO" >"$TMP/opt.out" 2>&1
}

# a. a finished campaign
campaign "$SRC/examples/ops/vector_add" "$TMP/runs" 3 || { cat "$TMP/opt.out"; fail "campaign"; }
WS=$TMP/runs/kernel_opt_vector_add_c_cpu
nver=$(ls "$WS"/memory/v*.json | grep -c '/v[0-9]*\.json$')
[ "$nver" = 4 ] || fail "expected v0..v3, got $nver records"
before=$(tree_hash "$WS")
expect 0 "$AKA" report "$WS" -o "$TMP/a.html"
has "$TMP/out" "aka report: wrote $TMP/a.html"
[ "$(points "$TMP/a.html")" = "$nver" ] || fail "latency points: $(cat "$TMP/scan"), want $nver"
has "$TMP/a.html" "data-points=\"$nver\""
for e in 1 2; do has "$TMP/a.html" "id=\"journal-e000$e\""; done
summary=$(python3 -c 'import html,json,sys; print(html.escape(json.load(open(sys.argv[1]))["outcome"]["summary"]))' \
    "$WS/.aka/episodes/e0001/runtime/journal.json")
has "$TMP/a.html" "$summary"
# V0 and V1 carry their roofline as every episode's record does (vector_add declares bytes).
python3 - "$WS" <<'PY' || fail "V0/V1 records without a roofline"
import json, sys
for v in (0, 1):
    rf = json.load(open(f"{sys.argv[1]}/memory/v{v}.json"))["roofline"]
    assert isinstance(rf.get("gb_per_s"), float) and rf["gb_per_s"] > 0, (v, rf)
PY
# A record written before rooflines were kept (V0 here, by hand) is shown as "not recorded".
OLD=$TMP/old/kernel_opt_vector_add_c_cpu
mkdir -p "$TMP/old" && cp -a "$WS" "$OLD"
python3 -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); del d["roofline"]; json.dump(d, open(p,"w"))' \
    "$OLD/memory/v0.json"
expect 0 "$AKA" report "$OLD" -o "$TMP/old.html"
python3 - "$TMP/old.html" "$OLD" <<'PY' || fail "roofline panel"
import html, json, re, sys
page, ws = open(sys.argv[1]).read(), sys.argv[2]
panel = re.search(r'<section id="roofline">.*?</section>', page, re.S).group(0)
v0, rest = panel.split("<h3>V1</h3>")
assert "not recorded" in v0, v0
assert "not recorded" not in rest.split("</h3>")[0], rest
inc = re.search(r'id="incumbent">v(\d+)', page).group(1)
rf = json.load(open(f"{ws}/memory/v{inc}.json")).get("roofline")
if rf and "basis" in rf:
    assert html.escape(rf["basis"]) in panel, "incumbent roofline basis missing"
PY
expect 0 "$AKA" report "$WS" -o "$TMP/a2.html" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["latency_points"]==int(sys.argv[2]) and d["files"]==[sys.argv[3]], d' \
    "$TMP/out" "$nver" "$TMP/a2.html" || fail "--json"
cmp -s "$TMP/a.html" "$TMP/a2.html" || fail "two renders of the same workspace differ"
mkdir "$TMP/cwd" && (cd "$TMP/cwd" && ATREX_AKA_WORKSPACE=$WS "$AKA" report >/dev/null)
cmp -s "$TMP/a.html" "$TMP/cwd/kernel_opt_vector_add_c_cpu.html" || fail "default output name"
[ "$(tree_hash "$WS")" = "$before" ] || fail "aka report changed the workspace"
echo "ok: a finished campaign"

# a2. hostile agent text, an ABBA verification, a regressed shape
H=$TMP/hostile/kernel_opt_vector_add_c_cpu
mkdir -p "$TMP/hostile" && cp -a "$WS" "$H"
python3 - "$H" <<'PY'
import json, sys
ws = sys.argv[1]
jp = f"{ws}/.aka/episodes/e0001/runtime/journal.json"
j = json.load(open(jp))
j["outcome"]["summary"] = "<script>alert(1)</script>"
j["experiments"][0]["hypothesis"] = "see https://evil.example/x.js \" onmouseover=\"alert(3)"
json.dump(j, open(jp, "w"))
vp = f"{ws}/memory/v1.json"  # V1 has no episode: its summary is the record's description
v = json.load(open(vp))
v["optimization"]["action_description"] = "<img src=x onerror=alert(2)>"
json.dump(v, open(vp, "w"))
vp = f"{ws}/memory/v2.json"
v = json.load(open(vp))
runs = [{"repeat": r, "revision": s, "all_pass": True, "latency_us_geomean": 10.0 + i,
         "eval_id": "e%d" % i} for i, (r, s) in enumerate(
         (r, s) for r in range(2) for s in ("incumbent", "candidate", "candidate", "incumbent"))]
v["verification"] = {"method": "same_allocation_abba", "abba_pairs": 2, "improvement_pct": 4.5,
                     "ci_low_pct": 2.25, "ci_high_pct": 6.75, "dispersion_pct": 0.5,
                     "min_improvement_pct": 1.5, "passed": True, "decision": "promote", "runs": runs}
v["performance"]["latency_us_by_shape"]["n4k"] = 1e6  # slower than V0 and V1 on this shape
json.dump(v, open(vp, "w"))
PY
expect 0 "$AKA" report "$H" -o "$TMP/h.html"
scan "$TMP/h.html"
has "$TMP/h.html" "&lt;script&gt;alert(1)&lt;/script&gt;"
has "$TMP/h.html" "&lt;img src=x onerror=alert(2)&gt;"
has "$TMP/h.html" "see https://evil.example/x.js &quot; onmouseover=&quot;alert(3)"
hasnt "$TMP/h.html" "<script>alert"
hasnt "$TMP/h.html" "<img"
[ "$(grep -c '<script>' "$TMP/h.html")" = 1 ] || fail "more than the page's own script"
has "$TMP/h.html" '<svg class="interval" data-v="2"'
has "$TMP/h.html" "promotion threshold +1.50%"
has "$TMP/h.html" "bootstrap interval +2.25% .. +6.75%"
[ "$(grep -o 'class="run r-' "$TMP/h.html" | wc -l)" = 8 ] || fail "8 ABBA runs"
if grep -q '"status": "promoted"' "$H/memory/v2.json"; then
    grep -q '<tr class="shape regressed"><td>n4k</td>' "$TMP/h.html" || fail "n4k not flagged"
fi
echo "ok: agent text escaped, ABBA verification drawn, regressed shape flagged"

# b. a campaign still running: an episode in flight, as a reader sees it mid-episode
R=$TMP/running/kernel_opt_vector_add_c_cpu
mkdir -p "$TMP/running" && cp -a "$WS" "$R"
mkdir -p "$R/.aka/episodes/e0003"
cp "$R/.aka/episodes/e0002/BRIEF.md" "$R/.aka/episodes/e0003/BRIEF.md"
python3 - "$R/memory/live.json" <<'PY'
import json, sys
p = sys.argv[1]
l = json.load(open(p))
l.update(phase="episode 3/4 (fast) exploring", latest_version=3)
json.dump(l, open(p, "w"))
PY
expect 0 "$AKA" report "$R" -o "$TMP/b.html"
scan "$TMP/b.html"
has "$TMP/b.html" "not stopped (no stop recorded yet)"
has "$TMP/b.html" "episode 3/4 (fast) exploring"
has "$TMP/b.html" 'e0003: no archived journal (the episode has not ended)'
has "$TMP/b.html" "no record yet"
echo "ok: a running campaign"

# c. a failed V0
mkdir -p "$TMP/badop" && cp -r "$SRC/examples/ops/vector_add" "$TMP/badop/vector_add"
echo "this is not C;" >>"$TMP/badop/vector_add/reference.c"
campaign "$TMP/badop/vector_add" "$TMP/fv0" 1 && fail "a V0 that does not build passed"
F=$TMP/fv0/kernel_opt_vector_add_c_cpu
[ -f "$F/memory/v0.failed.json" ] || { cat "$TMP/opt.out"; fail "no v0.failed.json"; }
expect 0 "$AKA" report "$F" -o "$TMP/c.html"
[ "$(points "$TMP/c.html")" = 0 ] || fail "points in a failed-V0 report"
has "$TMP/c.html" 'id="failed-v0"'
has "$TMP/c.html" "reference.c does not build"
has "$TMP/c.html" "No canonical version recorded yet."
echo "ok: a failed V0"

# d. a directory of workspaces
D=$TMP/dispatch
mkdir -p "$D/not_a_workspace"
cp -a "$WS" "$D/kernel_opt_vector_add_c_cpu"
cp -a "$F" "$D/kernel_opt_broken_c_cpu"
cp -a "$R" "$D/kernel_opt_running c&cpu"
expect 0 "$AKA" report "$D" -o "$TMP/idx"
for f in index.html kernel_opt_vector_add_c_cpu.html kernel_opt_broken_c_cpu.html "kernel_opt_running c&cpu.html"; do
    [ -f "$TMP/idx/$f" ] || fail "index: no $f"
    scan "$TMP/idx/$f"
done
[ "$(grep -c '<tr class="campaign">' "$TMP/idx/index.html")" = 3 ] || fail "index rows"
has "$TMP/idx/index.html" 'href="kernel_opt_running%20c%26cpu.html"'
has "$TMP/idx/index.html" '<table class="sortable" id="campaigns">'
has "$TMP/idx/index.html" "none (V0 failed)"
"$AKA" report "$D/kernel_opt_vector_add_c_cpu" -o "$TMP/child.html" >/dev/null
cmp -s "$TMP/idx/kernel_opt_vector_add_c_cpu.html" "$TMP/child.html" || fail "index child page differs"
(cd "$TMP/cwd" && "$AKA" report "$D" >/dev/null) && [ -f "$TMP/cwd/dispatch-report/index.html" ] ||
    fail "default index directory"
echo "ok: a directory of workspaces"

# e. bad input: exit 2, one line naming file and field, no output written
expect 2 "$AKA" report "$TMP/nope" -o "$TMP/x.html"
has "$TMP/err" "$TMP/nope: not a directory"
mkdir "$TMP/empty"
expect 2 "$AKA" report "$TMP/empty" -o "$TMP/x.html"
has "$TMP/err" "not an aka campaign workspace"
expect 2 "$AKA" report "$WS" "$WS"
expect 2 "$AKA" report --bogus
expect 0 "$AKA" report --help
head -1 "$TMP/out" | grep -q '^usage: aka report ' || fail "--help"
bad() { # bad NAME EDIT WANT: a copy of WS edited by EDIT (run in it) must exit 2 with WANT
    local d=$TMP/bad-$1
    rm -rf "$d" && cp -a "$WS" "$d"
    (cd "$d" && eval "$2")
    expect 2 "$AKA" report "$d" -o "$TMP/x.html"
    [ "$(wc -l <"$TMP/err")" = 1 ] || fail "$1: not one line: $(cat "$TMP/err")"
    grep -qF "aka: $d/$3" "$TMP/err" || fail "$1: expected '$d/$3' in: $(cat "$TMP/err")"
    [ ! -e "$TMP/x.html" ] || fail "$1: an output file was written"
}
jedit() { # jedit FILE PYTHON: apply PYTHON to the JSON document d of FILE
    python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); $2; json.dump(d, open(p,'w'))" "$1"
}
bad record 'printf "{\"version\": \"v1\",\n garbled" >memory/v1.json' 'memory/v1.json:2:'
bad journal 'head -c 100 .aka/episodes/e0001/runtime/journal.json >j && mv j .aka/episodes/e0001/runtime/journal.json' \
    '.aka/episodes/e0001/runtime/journal.json:'
bad session "jedit .aka/episodes/e0002/agent/session.json 'd[\"usage\"]={\"total_tokens\": \"many\"}'" \
    '.aka/episodes/e0002/agent/session.json: usage.total_tokens: expected an integer'
bad phase "jedit .aka/episodes/e0001/agent/session.json 'd[\"phase_times\"]={\"phases\": {\"planning\": {\"seconds\": \"x\"}}}'" \
    '.aka/episodes/e0001/agent/session.json: phase_times.phases.planning.seconds: expected a number'
# (v2 may have no verification, when a loaded machine made episode 1 end before it: the
# field is then added, and the same refusal is expected.)
bad run "jedit memory/v2.json 'd[\"verification\"]=d.get(\"verification\") or {}; d[\"verification\"][\"runs\"]=[{\"repeat\":0,\"revision\":\"other\"}]'" \
    'memory/v2.json: verification.runs[0].revision: expected "incumbent" or "candidate"'
bad roofline "jedit memory/v2.json 'd[\"roofline\"]={\"flop_pct\":\"high\"}'" \
    'memory/v2.json: roofline.flop_pct: expected a number'
# a garbled child of a directory: no page of any child, no index
cp -a "$TMP/bad-record" "$D/kernel_opt_garbled_c_cpu"
expect 2 "$AKA" report "$D" -o "$TMP/idx2"
has "$TMP/err" "kernel_opt_garbled_c_cpu/memory/v1.json:2:"
[ ! -e "$TMP/idx2" ] || fail "a garbled child left output"
echo "ok: bad input exits 2 naming file and field, nothing written"
echo "report: ok"
