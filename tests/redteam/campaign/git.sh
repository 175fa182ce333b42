#!/bin/bash
# git.sh — what an agent can plant in the canonical repository it reaches (its worktree
# shares the workspace's .git) must never run in, or be accepted by, the supervisor
# (docs/security.md). Each case plants its attack as the agent's LAST action (its
# own git commands would run the planted code too; only the supervisor's must not), then
# the supervisor records the episode and starts the next one.
#   1. hooks        post-commit, pre-commit, reference-transaction, post-checkout,
#                   post-index-change, post-merge hooks in .git/hooks: none runs during the
#                   supervisor's outcome commit, worktree creation or cleanup;
#   2. hooksPath    core.hooksPath in .git/config pointing at the same hooks: none runs;
#   3. config       core.fsmonitor, a clean/smudge/process filter and a textconv diff
#                   driver selected for every path by .git/info/attributes: none runs;
#   4. forged       the agent commits a forged promotion on the canonical branch (slower
#                   kernel, memory/v1.json saying promoted, the supervisor's name, the
#                   promotion subject) and the supervisor is SIGKILLed: the resume refuses,
#                   naming the commit id and subject, and promotes nothing.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
. "${AKA_SOURCE_DIR:?}/tests/lib/hostile_campaign.sh"
setup_hostile
HOOKS="post-commit pre-commit reference-transaction post-checkout post-index-change post-merge"
PIVOT='{"sh":"bash '"$TMP"'/finish.sh pivot"}'

# hook_dir DIR: every hook of $HOOKS in DIR, each leaving $TMP/ran-<hook> when it runs.
hook_dir() {
  mkdir -p "$1"
  for h in $HOOKS; do
    printf '#!/bin/sh\necho "$0 $*" >>%s/ran-%s\n' "$TMP" "$h" >"$1/$h"
    chmod +x "$1/$h"
  done
}
nothing_ran() {
  local ran; ran=$(ls "$TMP" | grep '^ran-' || true)
  [ -z "$ran" ] || fail "$1: planted code ran in the supervisor: $ran"
}
# Two episodes: the one that plants (recorded as pivot, its worktree removed), and the next
# (a new worktree from HEAD, then its own outcome commit).
two_episodes() {
  local name=$1 plant=$2
  episode "$EVAL,$PIVOT,$plant"
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "$name: episode 1 exit $RC"; }
  [ "$(record_field 1 'm["status"]')" = pivot ] || fail "$name: v1 is not the pivot"
  episode "$EVAL,$PIVOT"
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "$name: episode 2 exit $RC"; }
  [ "$(record_field 2 'm["status"]')" = pivot ] || fail "$name: v2 is not the pivot"
  nothing_ran "$name"
  no_promotion "$name"
}

# 1. hooks in the canonical repository's hooks directory
case_hooks() {
new_case hooks
rm -f "$TMP"/ran-*
hook_dir "$TMP/hooks-src"
PLANT=$(attack hooks "cp -p $TMP/hooks-src/* \"$WS/.git/hooks/\"")
two_episodes hooks "$PLANT"
[ -x "$WS/.git/hooks/reference-transaction" ] || fail "hooks: the attack planted nothing"
ok "1 hooks: $HOOKS planted in .git/hooks; none ran"
}

# 2. core.hooksPath in the repository's config
case_hookspath() {
new_case hookspath
rm -f "$TMP"/ran-*
hook_dir "$TMP/evil-hooks"
PLANT=$(attack hookspath "git -C \"$WS\" config core.hooksPath $TMP/evil-hooks")
two_episodes hookspath "$PLANT"
[ "$(git -C "$WS" config core.hooksPath)" = "$TMP/evil-hooks" ] || fail "hookspath: not planted"
ok "2 hooksPath: core.hooksPath set in .git/config; no hook ran"
}

# 3. configuration that executes: fsmonitor, filter and diff drivers
case_config() {
new_case config
rm -f "$TMP"/ran-*
printf '#!/bin/sh\necho "$0 $*" >>%s/ran-fsmonitor\nexit 1\n' "$TMP" >"$TMP/fsmonitor.sh"
chmod +x "$TMP/fsmonitor.sh"
PLANT=$(attack config "cd \"$WS\"
git config core.fsmonitor $TMP/fsmonitor.sh
git config filter.evil.clean 'sh -c \"echo clean >>$TMP/ran-filter-clean; cat\"'
git config filter.evil.smudge 'sh -c \"echo smudge >>$TMP/ran-filter-smudge; cat\"'
git config filter.evil.process 'sh -c \"echo process >>$TMP/ran-filter-process; exit 1\"'
git config diff.evil.textconv 'sh -c \"echo textconv >>$TMP/ran-textconv; cat\"'
printf '* filter=evil diff=evil\n' >>\"\$(git rev-parse --git-common-dir)/info/attributes\"")
two_episodes config "$PLANT"
grep -q 'filter=evil' "$WS/.git/info/attributes" || fail "config: not planted"
ok "3 config: fsmonitor, filter and textconv drivers planted; none ran"
}

# 4. a forged promotion commit, then SIGKILL of the supervisor
case_forged() {
new_case forged
FORGE=$(attack forged "ps -o pgid= \$\$ | tr -d ' ' >$TMP/agent.pgid
cd \"$WS\"
printf '%s' $(printf %q "$SLOW_KERNEL") >kernel.c
python3 - <<'PY'
import json
m = json.load(open('memory/v0.json'))
m.update(version='v1', status='promoted', episode={'number': 1, 'kind': 'fast'})
m['long_horizon'] = {'status': 'promoted', 'mode': 'fast', 'candidate_commit': None}
json.dump(m, open('memory/v1.json', 'w'), indent=2, sort_keys=True)
PY
git add kernel.c memory/v1.json
GIT_AUTHOR_NAME=aka-supervisor GIT_AUTHOR_EMAIL=aka-supervisor@localhost \\
GIT_COMMITTER_NAME=aka-supervisor GIT_COMMITTER_EMAIL=aka-supervisor@localhost \\
  git -c core.hooksPath=/dev/null commit -qm 'episode 1: promote verified candidate'
git rev-parse HEAD >$TMP/forged.oid
sleep 60")
printf '{"turns":[{"actions":[%s,%s]}]}\n' "$USAGE" "$FORGE" >"$TMP/scenario.json"
rm -f "$TMP/forged.oid" "$TMP/agent.pgid" "$TMP/fake-invocations"
AKA_FAKE_SCENARIO="$TMP/scenario.json" AKA_FAKE_LOG="$TMP/fake.log" AKA_FAKE_STATE="$TMP" \
  "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$PARENT" \
  --sandbox-isolation "$ISO" --agent-sandbox none --max-iters 1 --fast-trials 1 \
  --fast-episodes 5 >"$TMP/out" 2>"$TMP/err" &
sup=$!
for _ in $(seq 600); do [ -s "$TMP/forged.oid" ] && break; sleep 0.1; done
[ -s "$TMP/forged.oid" ] || { cat "$TMP/err" >&2; fail "forged: the agent never forged"; }
kill -9 "$sup"; wait "$sup" 2>/dev/null || true
[ ! -s "$TMP/agent.pgid" ] || kill -- "-$(cat "$TMP/agent.pgid")" 2>/dev/null || true
FORGED=$(cat "$TMP/forged.oid")
[ "$(git -C "$WS" rev-parse HEAD)" = "$FORGED" ] || fail "forged: the forgery is not at HEAD"
episode '{"text":"never runs"}'
[ "$RC" = 1 ] || { cat "$TMP/err" >&2; fail "forged: the resume exit $RC, want 1 (refused)"; }
grep -q "commit $FORGED \"episode 1: promote verified candidate\"" "$TMP/err" ||
  fail "forged: the refusal does not name the commit: $(tail -1 "$TMP/err")"
grep -q "refusing to resume" "$TMP/err" || fail "forged: $(tail -1 "$TMP/err")"
[ "$(git -C "$WS" rev-parse HEAD)" = "$FORGED" ] || fail "forged: the resume moved HEAD"
! grep -q "$FORGED" "$WS/.aka/commits.json" || fail "forged: the forgery was recorded"
[ -e "$WS/.aka/active_episode.json" ] || fail "forged: the episode was settled anyway"
ok "4 forged: the resume refuses commit ${FORGED:0:12} by id and subject"
}

run_cases hooks hookspath config forged
echo "git: all cases refused"
