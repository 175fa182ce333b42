#!/usr/bin/env bash
# campaign_plugins.sh — a wiki plugin's contributions reach the episode, and a campaign
# pins its plugins (issue 15). A user plugin ($XDG_DATA_HOME/aka/plugins/tiling) with a
# record, a skill and an instruction file:
#   1. first start: campaign.json pins the plugin set (set fingerprint, and the plugin's
#      sha256 fingerprint over all its files); the episode's worktree has the plugin's
#      skill installed for the backend (.claude/skills/tiling-notes/SKILL.md) beside ours,
#      and the brief carries the instruction file;
#   2. the instruction file changes: the resume is refused (exit 2) naming campaign.json,
#      the plugin and "changed since it was pinned"; nothing is recorded;
#   3. a plugin added after the pin is said and pinned from then on (the campaign resumes);
#   4. that plugin changed, or a pinned one removed, is refused like 2;
#   and its tool runs through `aka wiki tool` (arguments, ${PLUGIN_ROOT}, exit status),
#   but not in the campaign's workspace once the plugin changed.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/aka-campaign-plugins.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA_BIN" sandbox run -- true >/dev/null 2>&1 || ISO=none
AKA=$AKA_BIN
# shellcheck source=tests/lib/campaign_fixture.sh
. "$AKA_SOURCE_DIR/tests/lib/campaign_fixture.sh"
F=$T/fake
agent_sandbox_setup "$F"
cp -r "$AKA_SOURCE_DIR/examples/ops/vector_add" "$T/op"
export XDG_DATA_HOME=$T/data XDG_CACHE_HOME=$T/cache
P=$XDG_DATA_HOME/aka/plugins/tiling
mkdir -p "$P/records" "$P/skills/tiling-notes" "$P/instructions"
cat >"$P/plugin.json" <<'JSON'
{"name": "tiling", "version": "0.1.0", "description": "tiling notes",
 "contributes": {"records": ["records"], "skills": ["skills/tiling-notes"],
                 "instructions": ["instructions/episode.md"],
                 "tools": [{"name": "l1-size", "description": "print the L1 note",
                            "command": ["bin/l1-size", "${PLUGIN_ROOT}/instructions/episode.md"]}]}}
JSON
cat >"$P/records/r.json" <<'JSON'
{"schema": "aka.wiki.kernel.v1", "id": "tiling.cpu.block-by-l1", "kind": "technique",
 "scope": {"vendor": "cpu", "framework": "c", "family": "elementwise"},
 "title": "Block elementwise loops by L1", "body": "Keep each block's inputs in L1.",
 "source": {"kind": "measurement", "by": "aka tests", "date": "2026-01-01", "method": "none"}}
JSON
printf -- '---\nname: tiling-notes\ndescription: tiling\n---\nTile by L1.\n' >"$P/skills/tiling-notes/SKILL.md"
printf 'PLUGIN-INSTRUCTION: prefer blocks that fit L1.\n' >"$P/instructions/episode.md"
mkdir -p "$P/bin"
printf '#!/bin/sh\necho "tool args: $*"; echo "root: $AKA_PLUGIN_ROOT"; cat "$1"; exit 3\n' >"$P/bin/l1-size"
chmod +x "$P/bin/l1-size"
"$AKA_BIN" wiki plugins >"$T/plugins.txt" 2>&1 || fail "wiki plugins: $(cat "$T/plugins.txt")"
grep -q tiling "$T/plugins.txt" || fail "the plugin does not load: $(cat "$T/plugins.txt")"

cat >"$F/ep.sh" <<SH
#!/bin/bash
set -euo pipefail
cp .aka/BRIEF.md "$F/brief-\$ATREX_AKA_EPISODE.md"
find .claude/skills -name SKILL.md | sort >"$F/skills-\$ATREX_AKA_EPISODE.txt"
aka eval >/dev/null 2>&1 || true
cd /
aka journal append --experiment-json '{"name": "t", "hypothesis": "h", "change": "c", "result": "r", "decision": "keep"}' >/dev/null
aka journal finalize --state pivot --outcome-json '{"summary": "pivot", "next_directions": []}' >/dev/null
aka handoff --status pivot >/dev/null
SH
printf '{"turns":[{"actions":[{"usage":{"input":10,"output":5}},{"sh":"bash %s"}]}]}\n' "$F/ep.sh" >"$F/scenario.json"
run() { # MAX_ITERS: exit status in $rc
  rc=0
  AKA_FAKE_SCENARIO="$F/scenario.json" AKA_FAKE_LOG="$F/fake.log" AKA_FAKE_STATE="$F" \
    "$AKA_BIN" optimize --op-dir "$T/op" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$AKA_SOURCE_DIR/tests/fakes/fake-claude" --workspace "$T" \
    --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters "$1" --fast-trials 1 \
    >"$T/out" 2>"$T/err" || rc=$?
}

# 1. first start
run 1
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "first start exited $rc"; }
WS=$(ls -d "$T"/kernel_opt_vector_add_*)
python3 - "$WS/.aka/campaign.json" <<'PY' || fail "campaign.json plugins pin"
import json, re, sys
pin = json.load(open(sys.argv[1]))["plugins"]
assert re.fullmatch(r"[0-9a-f]{64}", pin["fingerprint"]), pin
p = {x["name"]: x for x in pin["plugins"]}
assert set(p) >= {"gpu-wiki", "tiling"} and re.fullmatch(r"[0-9a-f]{64}", p["tiling"]["fingerprint"]), pin
assert p["tiling"]["origin"] == "user", p
PY
grep -qx ".claude/skills/tiling-notes/SKILL.md" "$F/skills-1.txt" || fail "plugin skill: $(cat "$F/skills-1.txt")"
grep -qx ".claude/skills/aka-protocol/SKILL.md" "$F/skills-1.txt" || fail "bundled skills gone"
grep -q "^### tiling/instructions/episode.md" "$F/brief-1.md" &&
  grep -q "^PLUGIN-INSTRUCTION: prefer blocks that fit L1." "$F/brief-1.md" ||
  fail "plugin instructions not in the brief: $(cat "$F/brief-1.md")"
versions() { ls "$WS"/memory/v*.json | wc -l; }
n=$(versions)

# Plugin tools run through aka, in the campaign's workspace too (the pin matches).
rc=0; "$AKA_BIN" wiki tool l1-size extra --workspace "$WS" >"$T/tool.txt" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "^tool args: $P/instructions/episode.md extra$" "$T/tool.txt" &&
  grep -q "^root: $P$" "$T/tool.txt" && grep -q "^PLUGIN-INSTRUCTION" "$T/tool.txt" ||
  fail "aka wiki tool: exit $rc: $(cat "$T/tool.txt")"
rc=0; "$AKA_BIN" wiki tool no-such-tool >"$T/tool.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'no loaded plugin has a tool "no-such-tool"' "$T/tool.txt" || fail "unknown tool: $rc"

# 2. a changed plugin is refused on resume
printf 'PLUGIN-INSTRUCTION: changed.\n' >"$P/instructions/episode.md"
run 2
[ "$rc" = 2 ] || { cat "$T/err" >&2; fail "a changed plugin: exit $rc, expected 2"; }
grep -q "campaign.json: plugins: wiki: plugin tiling (.*) changed since it was pinned" "$T/err" ||
  fail "changed-plugin message: $(cat "$T/err")"
[ "$(versions)" = "$n" ] || fail "a refused resume recorded a version"
# ... and so are its tools, in the campaign's workspace
rc=0; "$AKA_BIN" wiki tool l1-size --workspace "$WS" >"$T/tool.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "campaign.json: plugins: wiki: plugin tiling (.*) changed since it was pinned" \
  "$T/tool.txt" || fail "a changed plugin's tool ran: exit $rc: $(cat "$T/tool.txt")"

# 3. a plugin added since the pin is knowledge a person installed: said, and pinned now
printf 'PLUGIN-INSTRUCTION: prefer blocks that fit L1.\n' >"$P/instructions/episode.md"
E=$XDG_DATA_HOME/aka/plugins/extra
cp -r "$P" "$E"
sed -i 's/"name": "tiling"/"name": "extra"/; s/tiling-notes/extra-notes/; s/"l1-size"/"extra-size"/' "$E/plugin.json"
mv "$E/skills/tiling-notes" "$E/skills/extra-notes"
sed -i 's/tiling.cpu/extra.cpu/' "$E/records/r.json"
run 2
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "an added plugin: exit $rc"; }
grep -q "plugin extra was added since the campaign pinned its plugins: pinned now" "$T/err" ||
  fail "the added plugin was not said: $(cat "$T/err")"
python3 -c "import json,sys; assert 'extra' in [p['name'] for p in json.load(open('$WS/.aka/campaign.json'))['plugins']['plugins']]" ||
  fail "the added plugin was not pinned"
[ "$(versions)" = $((n + 1)) ] || fail "the resumed campaign did not record its episode"

# 4. ... and from then on it is held to its pin; a pinned plugin removed is refused too.
printf 'changed\n' >>"$E/instructions/episode.md"
run 3
[ "$rc" = 2 ] && grep -q "plugins: wiki: plugin extra (.*) changed since it was pinned" "$T/err" ||
  { cat "$T/err" >&2; fail "a changed added plugin: exit $rc"; }
printf 'PLUGIN-INSTRUCTION: prefer blocks that fit L1.\n' >"$E/instructions/episode.md"
rm -rf "$XDG_DATA_HOME/aka/plugins/tiling"
run 3
[ "$rc" = 2 ] && grep -q "plugins: wiki: pinned plugin tiling is missing" "$T/err" ||
  { cat "$T/err" >&2; fail "a removed plugin: exit $rc"; }
[ "$(versions)" = $((n + 1)) ] || fail "a refused resume recorded a version"
echo "campaign_plugins: ok"
