#!/bin/bash
# status_memory.sh — `aka status` and `aka memory` on a real campaign workspace:
#   1. a native C campaign on CPU with the built-in agent stops after V0/V1
#      (--max-iters 1); status shows its identity, incumbent, stop reason and a
#      versions table whose speedups agree with the records; --json likewise;
#   2. the workspace is found from the argument, $ATREX_AKA_WORKSPACE or the
#      current directory, and nowhere else (exit 2);
#   3. memory list / latest / show vN print the records; a missing one exits 2
#      naming its file;
#   4. hand-added episode records (v2 rejected, v10 promoted with ABBA
#      verification numbers) are shown in numeric order with their numbers;
#   4b. an ESC sequence and a newline in a record's description (the agent's
#      summary), in the live phase and in the workspace path are escaped;
#   5. malformed campaign.json / memory records exit 2 with one line
#      "FILE: FIELD: ..." and print nothing on stdout;
# and no command ever changes a byte of the workspace (hashed before/after).
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-status.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P) # messages name real paths
unset ATREX_AKA_WORKSPACE
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE CMD...: run CMD, require its exit code; stdout in $TMP/out, stderr in $TMP/err.
expect() {
    local want=$1 got=0
    shift
    "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
    [ "$got" = "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $got, expected $want"; }
}
# Every file (names, modes and bytes, .git included) of a tree, as one hash.
tree_hash() {
    (cd "$1" && find . -printf '%p %m %s\n' | LC_ALL=C sort && \
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum
}

ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
"$AKA" optimize --op-dir "$SRC/examples/ops/vector_add" --platform cpu --framework C \
    --agent-cli builtin --max-iters 1 --workspace "$TMP" --sandbox-isolation "$ISO" \
    >"$TMP/opt.out" 2>"$TMP/opt.err" || { cat "$TMP/opt.err"; fail "campaign did not stop cleanly"; }
WS=$TMP/kernel_opt_vector_add_c_cpu
before=$(tree_hash "$WS")

# 1. status: text
expect 0 "$AKA" status "$WS"
for want in "operator:   vector_add ($SRC/examples/ops/vector_add)" "layout:     native" \
    "framework:  C" "platform:   cpu" "mode:       leaderboard" "agent:      builtin" \
    "isolation:  $ISO" "incumbent:  v1 (framework_baseline), commit $(git -C "$WS" rev-parse --short=12 HEAD~1)" \
    "stopped:    budget: max-iters (v1 >= 1)" "2 canonical version(s), latest v1"; do
    grep -qF "$want" "$TMP/out" || fail "status lacks '$want': $(cat "$TMP/out")"
done
grep -qE '^version +status +kind +commit +latency µs +vs V0 +verification +note$' "$TMP/out" \
    || fail "table heading: $(cat "$TMP/out")"
grep -qE '^v0 +baseline +— +[0-9a-f]{12} +[0-9.]+ +1\.000x +—$' "$TMP/out" || fail "v0 row"
grep -qE '^v1 +framework_baseline +— +[0-9a-f]{12} +[0-9.]+ +[0-9.]+x +—$' "$TMP/out" || fail "v1 row"
cp "$TMP/out" "$TMP/status.txt"
echo "ok: status text"

# 1b. status --json agrees with the records (speedup recomputed here from the per-shape maps)
expect 0 "$AKA" status "$WS" --json
python3 - "$WS" "$TMP/out" "$ISO" <<'PY' || fail "status --json"
import json, math, sys
ws, out, iso = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(out))
assert s["schema"] == "aka.status.v1", s
assert s["campaign"]["framework"] == "C" and s["campaign"]["isolation"] == iso, s["campaign"]
assert s["stopped"] is True and s["stop_reason"] == "budget: max-iters (v1 >= 1)", s
assert s["budget"]["state_file"] is False and s["budget"]["episodes"] is None
assert s["failed_v0"] is None and s["live"]["latest_version"] == "v1"
v0 = json.load(open(f"{ws}/memory/v0.json"))["performance"]["latency_us_by_shape"]
v1 = json.load(open(f"{ws}/memory/v1.json"))["performance"]["latency_us_by_shape"]
want = math.exp(sum(math.log(v0[k] / v1[k]) for k in v0) / len(v0))
vs = s["versions"]
assert [v["version"] for v in vs] == ["v0", "v1"], vs
assert vs[0]["speedup_vs_v0"] == 1.0 and abs(vs[1]["speedup_vs_v0"] - want) < 1e-9, vs[1]
assert vs[1]["speedup_shapes"] == 3 and vs[1]["verification"] is None and vs[1]["kind"] is None
assert s["incumbent"]["version"] == "v1" and s["incumbent"]["speedup_vs_v0"] == vs[1]["speedup_vs_v0"]
PY
echo "ok: status --json"

# 2. where the workspace comes from
ATREX_AKA_WORKSPACE=$WS expect 0 "$AKA" status
cmp -s "$TMP/out" "$TMP/status.txt" || fail "status via ATREX_AKA_WORKSPACE differs"
(cd "$WS" && expect 0 "$AKA" status) && cmp -s "$TMP/out" "$TMP/status.txt" || fail "status in cwd"
(cd "$TMP" && expect 2 "$AKA" status)
grep -q "no workspace: pass WORKSPACE, set ATREX_AKA_WORKSPACE" "$TMP/err" || fail "no-workspace message"
expect 2 "$AKA" status "$TMP"
grep -qF "$TMP: not an aka campaign workspace: no .aka/campaign.json" "$TMP/err" || fail "not a workspace"
expect 2 "$AKA" status "$WS" "$WS"
expect 2 "$AKA" status --bogus
for app in status memory; do
    expect 0 "$AKA" "$app" --help
    head -1 "$TMP/out" | grep -q "^usage: aka $app " || fail "$app --help first line"
    expect 0 "$AKA" help "$app"
done
echo "ok: workspace resolution and --help"

# 3. memory
expect 0 "$AKA" memory list --workspace "$WS"
[ "$(wc -l <"$TMP/out")" = 2 ] || fail "memory list lines: $(cat "$TMP/out")"
grep -qE '^v0 +baseline +PASS +[0-9a-f]{12} +[0-9.]+ µs +1\.000x +20[0-9-]+T' "$TMP/out" || fail "list v0"
(cd "$WS" && expect 0 "$AKA" memory latest)
python3 -c 'import json,sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
    "$TMP/out" "$WS/memory/v1.json" || fail "memory latest is not v1.json"
ATREX_AKA_WORKSPACE=$WS expect 0 "$AKA" memory show v0
python3 -c 'import json,sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
    "$TMP/out" "$WS/memory/v0.json" || fail "memory show v0 is not v0.json"
expect 0 "$AKA" memory show 1 --workspace "$WS" --json
expect 2 "$AKA" memory show v9 --workspace "$WS"
grep -qF "$WS/memory/v9.json: no such memory record (2 version(s) recorded, the latest v1)" "$TMP/err" \
    || fail "missing record message: $(cat "$TMP/err")"
expect 2 "$AKA" memory show v01 --workspace "$WS"
expect 2 "$AKA" memory show --workspace "$WS"
expect 2 "$AKA" memory frobnicate --workspace "$WS"
expect 2 "$AKA" memory
expect 0 "$AKA" memory list --json --workspace "$WS"
python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); assert [x["version"] for x in v]==["v0","v1"]' \
    "$TMP/out" || fail "memory list --json"
echo "ok: memory list/latest/show"

[ "$(tree_hash "$WS")" = "$before" ] || fail "a read-only command changed the workspace"
echo "ok: workspace unchanged"

# 4. episode records, hand-written, in a copy: v2 rejected (carried from v1), v10 promoted (ABBA)
EP=$TMP/episodes
cp -a "$WS" "$EP"
python3 - "$EP" <<'PY'
import json, sys
ws = sys.argv[1]
v1 = json.load(open(f"{ws}/memory/v1.json"))
v2 = dict(v1, version="v2", status="rejected", git_commit_hash=None,
          quality_gate={"result": "FAIL", "failure_reason": "slower"},
          long_horizon={"mode": "fast", "status": "candidate_ready"})
v2["performance"] = dict(v1["performance"], carried_from_version="v1")
v10 = json.loads(json.dumps(v1))
v10.update(version="v10", status="promoted", git_commit_hash="ab" * 20,
           long_horizon={"mode": "full"},
           verification={"method": "same_allocation_abba", "abba_pairs": 5, "improvement_pct": 9.5,
                         "ci_low_pct": 3.1, "ci_high_pct": 15.2, "dispersion_pct": 0.8})
v10["performance"]["latency_us_by_shape"] = {k: v / 2 for k, v in v1["performance"]["latency_us_by_shape"].items()}
v10["performance"]["latency_us_geomean"] = v1["performance"]["latency_us_geomean"] / 2
for v in (v2, v10):
    json.dump(v, open(f"{ws}/memory/{v['version']}.json", "w"), indent=2)
PY
ep_before=$(tree_hash "$EP")
expect 0 "$AKA" status "$EP"
grep -n '' "$TMP/out" | grep -E ':v(0|1|2|10) ' | cut -d' ' -f1 | tr '\n' ' ' | grep -q '^[0-9]*:v0 [0-9]*:v1 [0-9]*:v2 [0-9]*:v10 $' \
    || fail "numeric order: $(cat "$TMP/out")"
grep -qE '^v2 +rejected +fast +— +.*measurement carried from v1$' "$TMP/out" || fail "v2 row: $(cat "$TMP/out")"
grep -qE '^v10 +promoted +full +abababababab .* 5 ABBA pairs, CI low \+3\.10%, disp 0\.80%' "$TMP/out" \
    || fail "v10 row: $(cat "$TMP/out")"
grep -qF "incumbent:  v10 (promoted), commit abababababab" "$TMP/out" || fail "incumbent v10"
expect 0 "$AKA" memory latest --workspace "$EP"
grep -q '"version": "v10"' "$TMP/out" || fail "latest is v10"
[ "$(tree_hash "$EP")" = "$ep_before" ] || fail "status changed the episode copy"
echo "ok: episode records in numeric order with verification numbers"

# 4b. an ESC sequence and a newline in an agent's summary (a record's description), in
# the live phase and in a workspace path: escaped on one line, never sent raw
ESC=$TMP/escparent
mkdir -p "$ESC"
cp -a "$WS" "$ESC/"
EW=$ESC/$(basename "$WS")
python3 - "$EW" <<'PY'
import json, sys
ws = sys.argv[1]
p = f"{ws}/memory/v1.json"
v1 = json.load(open(p))
v1.setdefault("optimization", {})["action_description"] = "summary \x1b[31mred\nv9 forged row"
json.dump(v1, open(p, "w"), indent=2)
p = f"{ws}/memory/live.json"
live = json.load(open(p))
live["phase"] = "stop: budget \x1b]0;title\x07\nincumbent:  v9 forged"
json.dump(live, open(p, "w"))
PY
no_esc() { ! grep -q $'\e' "$TMP/out" || fail "$1: a raw ESC reached the terminal: $(cat -A "$TMP/out")"; }
expect 0 "$AKA" memory list --workspace "$EW"
no_esc "memory list"
[ "$(wc -l <"$TMP/out")" = 2 ] || fail "memory list: a description forged a line: $(cat "$TMP/out")"
grep -qF 'summary \x1b[31mred\nv9 forged row' "$TMP/out" || fail "memory list: $(cat "$TMP/out")"
expect 0 "$AKA" status "$EW"
no_esc "status"
grep -qF 'stopped:    budget \x1b]0;title\x07\nincumbent:  v9 forged' "$TMP/out" || fail "status: $(cat "$TMP/out")"
! grep -q '^incumbent:  v9' "$TMP/out" || fail "status: the live phase forged a header line"
ln -s "$ESC" "$TMP/"$'p\e[31m\nforged'
"$AKA" optimize --op-dir "$SRC/examples/ops/vector_add" --platform cpu --framework C \
    --agent-cli builtin --max-iters 1 --workspace "$TMP/"$'p\e[31m\nforged' --sandbox-isolation "$ISO" \
    >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "rerun through the symlink"; }
no_esc "optimize progress"
grep -qF "aka optimize: workspace $TMP/p\x1b[31m\nforged/$(basename "$WS")" "$TMP/out" ||
    fail "optimize progress: $(cat "$TMP/out")"
echo "ok: control characters are escaped in memory list, status and optimize progress lines"

# 5. malformed input: exit 2, one line "FILE: FIELD: ...", nothing on stdout, nothing written
bad() { # bad NAME EDIT WANT: copy WS, apply EDIT (a shell snippet in the copy), check WANT
    local d=$TMP/bad-$1
    rm -rf "$d"
    cp -a "$WS" "$d"
    (cd "$d" && eval "$2")
    local h
    h=$(tree_hash "$d")
    for cmd in "status $d" "status $d --json" "memory list --workspace $d"; do
        [ "$1" != campaign ] || [ "${cmd#memory}" = "$cmd" ] || continue
        # shellcheck disable=SC2086
        expect 2 "$AKA" $cmd
        [ ! -s "$TMP/out" ] || fail "$1: $cmd printed on stdout: $(cat "$TMP/out")"
        [ "$(wc -l <"$TMP/err")" = 1 ] || fail "$1: $cmd: not one line: $(cat "$TMP/err")"
        grep -qF "aka: $d/$3" "$TMP/err" || fail "$1: $cmd: expected '$d/$3' in: $(cat "$TMP/err")"
    done
    [ "$(tree_hash "$d")" = "$h" ] || fail "$1: a failing command wrote into the workspace"
}
bad campaign 'printf "{\"schema\": " >.aka/campaign.json' '.aka/campaign.json:1:'
bad campaign "python3 -c 'import json; d=json.load(open(\".aka/campaign.json\")); del d[\"framework\"]; json.dump(d, open(\".aka/campaign.json\", \"w\"))'" \
    '.aka/campaign.json: framework: required field is missing'
bad garbled 'printf "{\"version\": \"v1\",\n garbled" >memory/v1.json' 'memory/v1.json:2:'
bad version "sed -i 's/\"version\": \"v1\"/\"version\": \"v0\"/' memory/v1.json" \
    'memory/v1.json: version: expected "v1" (from the file name); got "v0"'
bad field "sed -i 's/\"status\": \"framework_baseline\"/\"status\": \"great\"/' memory/v1.json" \
    'memory/v1.json: status: expected one of'
expect 2 "$AKA" memory show v1 --workspace "$TMP/bad-garbled"
grep -qF "$TMP/bad-garbled/memory/v1.json:2:" "$TMP/err" || fail "show of a garbled record"
expect 0 "$AKA" memory show v0 --workspace "$TMP/bad-garbled"
echo "ok: malformed input exits 2 with one line naming file and field"
echo "status_memory: ok"
