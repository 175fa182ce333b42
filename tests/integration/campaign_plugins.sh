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
#   3. a plugin added after the pin is refused the same way;
#   4. with the plugin restored (and the added one removed) the campaign resumes.
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
                 "instructions": ["instructions/episode.md"]}}
JSON
cat >"$P/records/r.json" <<'JSON'
{"schema": "aka.wiki.kernel.v1", "id": "tiling.cpu.block-by-l1", "kind": "technique",
 "scope": {"vendor": "cpu", "framework": "c", "family": "elementwise"},
 "title": "Block elementwise loops by L1", "body": "Keep each block's inputs in L1.",
 "source": {"kind": "measurement", "by": "aka tests", "date": "2026-01-01", "method": "none"}}
JSON
printf -- '---\nname: tiling-notes\ndescription: tiling\n---\nTile by L1.\n' >"$P/skills/tiling-notes/SKILL.md"
printf 'PLUGIN-INSTRUCTION: prefer blocks that fit L1.\n' >"$P/instructions/episode.md"
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

# 2. a changed plugin is refused on resume
printf 'PLUGIN-INSTRUCTION: changed.\n' >"$P/instructions/episode.md"
run 2
[ "$rc" = 2 ] || { cat "$T/err" >&2; fail "a changed plugin: exit $rc, expected 2"; }
grep -q "campaign.json: plugins: wiki: plugin tiling (.*) changed since it was pinned" "$T/err" ||
  fail "changed-plugin message: $(cat "$T/err")"
[ "$(versions)" = "$n" ] || fail "a refused resume recorded a version"

# 3. an added plugin is refused too
printf 'PLUGIN-INSTRUCTION: prefer blocks that fit L1.\n' >"$P/instructions/episode.md"
cp -r "$P" "$XDG_DATA_HOME/aka/plugins/extra"
sed -i 's/"name": "tiling"/"name": "extra"/; s/tiling-notes/extra-notes/' "$XDG_DATA_HOME/aka/plugins/extra/plugin.json"
mv "$XDG_DATA_HOME/aka/plugins/extra/skills/tiling-notes" "$XDG_DATA_HOME/aka/plugins/extra/skills/extra-notes"
sed -i 's/tiling.cpu/extra.cpu/' "$XDG_DATA_HOME/aka/plugins/extra/records/r.json"
run 2
[ "$rc" = 2 ] && grep -q "plugins: wiki: plugin extra (.*) was added after" "$T/err" ||
  { cat "$T/err" >&2; fail "an added plugin: exit $rc"; }

# 4. restored: the campaign resumes
rm -rf "$XDG_DATA_HOME/aka/plugins/extra"
run 2
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "restored plugin: exit $rc"; }
[ "$(versions)" = $((n + 1)) ] || fail "the resumed campaign did not record its episode"
echo "campaign_plugins: ok"
