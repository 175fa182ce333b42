#!/bin/bash
# agent_sandbox.sh — the agent sandbox (issue 10 item 2; docs/agents.md): a hostile fake
# agent (the Claude CLI fake running probe.sh) tries, from inside its episode, to
#   - read and write the canonical workspace (.aka/campaign.json and state.json,
#     memory/v0.json),
#   - read and write the original operator directory,
#   - write the asset tree (the harness),
#   - read and overwrite a fake ~/.ssh/id_rsa the test planted in $HOME,
#   - move a canonical ref (git update-ref in the canonical repository),
#   - plant a post-commit hook in the canonical repository (both also through its
#     episode repository, which a Git worktree would share with the canonical one),
#   - write outside its tree (/tmp/<marker>, the workspace's parent directory),
#   - write the campaign view its aka commands read,
#   - see the supervisor's process,
# and then does a normal episode (edit the kernel, commit, `aka eval`, `aka journal
# append|finalize`, `aka handoff`), which must be promoted. Every attempt's outcome is
# printed; each is judged both from inside (did the command fail?) and from the host
# (did anything change?). 0 escapes.
#
# The same probe runs once more with --agent-sandbox none in a throwaway campaign of its
# own (own operator, asset tree and $HOME copies): there every probe must reach its
# target, which shows that the probes can detect an escape at all.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-agent-sbx.XXXXXX")
MARK=aka-probe-$$-$RANDOM
trap 'rm -rf "$TMP" "/tmp/$MARK" "/tmp/$MARK.hook"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$AKA" sandbox run -- true >/dev/null 2>&1 || { echo "agent_sandbox: SKIP (no usable bwrap)"; exit 0; }
. "$SRC/tests/lib/campaign_fixture.sh"

# One campaign's world: operator, asset tree (a copy: a probe that escaped must not damage
# the source tree), home with a key, the fake's directory; workspace under $1.
world() {
  local d=$1
  mkdir -p "$d/home/.ssh" "$d/assets" "$d/fake"
  slow_vector_add "$SRC" "$d/op"
  cp -r "$SRC/runtime" "$d/assets/runtime"
  echo "SECRET-KEY-$$" >"$d/home/.ssh/id_rsa"
  chmod 600 "$d/home/.ssh/id_rsa"
}

# probe.sh: every attempt prints "NAME blocked" or "NAME REACHED" (the command worked).
# Paths are passed as arguments: WS OP ASSETS OUTFILE.
cat >"$TMP/probe.sh" <<'SH'
#!/bin/bash
WS=$1 OP=$2 ASSETS=$3 OUT=$4 MARK=$5
try() { local name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name REACHED"; else echo "$name blocked"; fi >>"$OUT"; }
try read-aka cat "$WS/.aka/campaign.json"
try write-state sh -c "echo $MARK >> '$WS/.aka/state.json'"
try read-memory cat "$WS/memory/v0.json"
try write-memory sh -c "echo $MARK >> '$WS/memory/v0.json'"
try read-operator cat "$OP/reference.c"
try write-operator sh -c "echo '/* $MARK */' >> '$OP/reference.c'"
try write-harness sh -c "echo '# $MARK' >> '$ASSETS/runtime/guard/session_guard.sh'"
try add-asset sh -c "echo $MARK > '$ASSETS/runtime/$MARK'"
try read-ssh-key cat "$HOME/.ssh/id_rsa"
try write-ssh-key sh -c "echo $MARK > '$HOME/.ssh/id_rsa'"
try move-ref git -C "$WS" update-ref refs/heads/main HEAD~1
try add-ref git -C "$WS" update-ref "refs/heads/$MARK" HEAD
# ... and through the episode's own repository, which shared them when it was a worktree
try move-ref-via-tree git update-ref refs/heads/main HEAD
try plant-hook-via-tree sh -c "mkdir -p \"\$(git rev-parse --git-path hooks)\" && printf '#!/bin/sh\\necho $MARK > /tmp/$MARK.hook\\n' > \"\$(git rev-parse --git-path hooks)/post-commit\" && chmod +x \"\$(git rev-parse --git-path hooks)/post-commit\""
try plant-hook sh -c "printf '#!/bin/sh\\necho $MARK > /tmp/$MARK.hook\\n' > '$WS/.git/hooks/post-commit' && chmod +x '$WS/.git/hooks/post-commit'"
try write-tmp sh -c "echo $MARK > /tmp/$MARK"
try write-ws-parent sh -c "echo $MARK > '$(dirname "$WS")/$MARK'"
try write-view sh -c "echo $MARK >> '$ATREX_AKA_WORKSPACE/.aka/campaign.json'"
# (grep exits 2 when a process ends between the glob and its read, even after a match: the
# match is counted by a second grep, which errors of the first cannot reach)
try see-supervisor sh -c "grep -las -e '--agent-sandbo[x]' /proc/[0-9]*/cmdline | grep -q ."
true
SH

# finish.sh STATE: the agent-facing commands end the episode (as tests/integration/
# campaign_episodes.sh does).
cat >"$TMP/finish.sh" <<'SH'
#!/bin/bash
set -euo pipefail
cd /
commit=(--candidate-commit "$(git -C "$ATREX_AKA_WORKTREE" rev-parse HEAD)")
aka journal append --experiment-json "{\"name\": \"the trial\", \"episode\": $ATREX_AKA_EPISODE,
  \"hypothesis\": \"h\", \"change\": \"c\", \"result\": \"r\", \"decision\": \"keep_as_best\"}"
aka journal finalize --state candidate_ready "${commit[@]}" \
  --outcome-json '{"summary": "faster", "next_directions": []}'
aka handoff --status candidate_ready "${commit[@]}"
SH

jstr() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
FAST_KERNEL=$(cat "$SRC/examples/ops/vector_add/seeds/C/kernel.c")

# campaign DIR MODE: V0, then one fast episode whose agent probes, then does a normal episode.
campaign() {
  local d=$1 mode=$2 ws=$1/kernel_opt_vector_add_c_cpu
  cp "$TMP/probe.sh" "$TMP/finish.sh" "$d/fake/"
  local probe="bash $d/fake/probe.sh $ws $d/op $d/assets $d/fake/attempts.txt $MARK"
  printf '{"turns":[{"actions":[%s,{"sh":%s},{"write":"kernel.c","content":%s},%s,%s,%s]}]}\n' \
    '{"usage":{"input":100,"output":50}}' "$(jstr "$probe")" "$(jstr "$FAST_KERNEL")" \
    '{"commit":"candidate","paths":["kernel.c"]}' '{"sh":"aka eval >/dev/null 2>&1 || true"}' \
    "{\"sh\":\"bash $d/fake/finish.sh\"}" >"$d/fake/scenario.json"
  local args=(optimize --repo-root "$d/assets" --op-dir "$d/op" --platform cpu --framework C
    --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$d"
    --agent-sandbox "$mode" --agent-writable-path "$d/fake" --fast-episodes 1 --fast-trials 1
    --handoff-resumes 0)
  # The supervisor's own cache (the CPU ceilings it measures once per host) lives outside
  # the home whose files the probes judge: only the agent's writes are in question.
  export XDG_CACHE_HOME=$d/cache
  HOME=$d/home "$AKA" "${args[@]}" --max-iters 0 >"$d/out" 2>"$d/err" ||
    { cat "$d/err" >&2; fail "$mode: V0"; }
  # What the host holds before the agent runs: compared afterwards.
  (cd "$d" && find op assets home -type f -print0 | sort -z | xargs -0 sha256sum) >"$d/sums.before"
  git -C "$ws" for-each-ref --format='%(refname)' >"$d/refs.before"
  git -C "$ws" rev-parse HEAD >"$d/base"
  HOME=$d/home AKA_FAKE_SCENARIO="$d/fake/scenario.json" AKA_FAKE_LOG="$d/fake/fake.log" \
    AKA_FAKE_STATE="$d/fake" "$AKA" "${args[@]}" --max-iters 1 >"$d/out" 2>"$d/err" || true
}

# ---- confined -----------------------------------------------------------------------------
C=$TMP/confined
world "$C"
campaign "$C" bwrap
WS=$C/kernel_opt_vector_add_c_cpu
grep -q "^aka optimize: warning" "$C/err" && fail "bwrap: a warning was printed"
[ -s "$C/fake/attempts.txt" ] || { cat "$C/err" >&2; fail "bwrap: the probe did not run"; }
echo "agent_sandbox: attempts of the confined agent (inside | host):"
escapes=0
while read -r name inside; do
  host=unchanged
  case $name in # what the host shows after the attempt
  write-state) grep -q "$MARK" "$WS/.aka/state.json" && host=CHANGED ;;
  write-memory) grep -q "$MARK" "$WS/memory/v0.json" && host=CHANGED ;;
  write-operator | write-harness | add-asset | write-ssh-key)
    (cd "$C" && find op assets home -type f -print0 | sort -z | xargs -0 sha256sum) |
      diff "$C/sums.before" - >"$C/sums.diff" || { host=CHANGED; sed 's/^/      /' "$C/sums.diff"; } ;;
  move-ref | add-ref | move-ref-via-tree) # the refs are main (moved by the promotion) and the fetched candidate
    [ "$(git -C "$WS" for-each-ref --format='%(refname)' | tr '\n' ' ')" = \
      "refs/aka/candidates/e0001 refs/heads/main " ] || host=CHANGED
    [ "$(git -C "$WS" rev-parse HEAD~1)" = "$(cat "$C/base")" ] || host=CHANGED ;;
  plant-hook | plant-hook-via-tree) [ ! -e "$WS/.git/hooks/post-commit" ] && [ ! -e "/tmp/$MARK.hook" ] || host=CHANGED ;;
  write-tmp) [ ! -e "/tmp/$MARK" ] || host=CHANGED ;;
  write-ws-parent) [ ! -e "$C/$MARK" ] || host=CHANGED ;;
  esac
  printf '  %-16s %-8s | %s\n' "$name" "$inside" "$host"
  # A read, a ref or hook change, a look at the supervisor or a write to the read-only view
  # must fail inside; any other write may "work" on the sandbox's own tmpfs (/tmp, the
  # empty home, the directories bwrap made for its mounts) and is judged on the host:
  # nothing may change there.
  case $name in write-state | write-memory | write-operator | write-harness | add-asset | \
    write-ssh-key | write-tmp | write-ws-parent | *-via-tree) ;;
  *) [ "$inside" = blocked ] || escapes=$((escapes + 1)) ;;
  esac
  [ "$host" = unchanged ] || escapes=$((escapes + 1))
done <"$C/fake/attempts.txt"
[ "$(wc -l <"$C/fake/attempts.txt")" = 19 ] || fail "bwrap: $(wc -l <"$C/fake/attempts.txt") attempts recorded, want 19"
echo "agent_sandbox: $(wc -l <"$C/fake/attempts.txt") attempts, $escapes escapes"
[ "$escapes" = 0 ] || fail "the confined agent escaped $escapes time(s)"
# (The agent's captured output under .aka/episodes/ quotes the probe's command line.)
leaked=$(grep -rls --exclude-dir=episodes "$MARK" "$WS" "$C/op" "$C/assets" "$C/home" || true)
[ -z "$leaked" ] || fail "the probe's marker reached the host: $leaked"

# ... and the normal episode worked and was promoted.
python3 - "$WS" <<'PY' || { cat "$C/err" >&2; fail "bwrap: the normal episode was not promoted"; }
import json, sys
ws = sys.argv[1]
m = json.load(open(ws + "/memory/v1.json"))
assert m["status"] == "promoted", (m["status"], m["episode"]["violation"])
assert m["episode"]["agent_sandbox"] == "bwrap", m["episode"]
c = json.load(open(ws + "/.aka/campaign.json"))
assert c["agent_sandbox"] == "bwrap", c
ev = [json.loads(l) for l in open(ws + "/.aka/episodes/e0001/runtime/evaluations.jsonl")]
assert ev and ev[-1]["all_pass"] and ev[-1]["sandbox_isolation"] == "bwrap", ev
assert ev[-1]["op_dir"].endswith(".view/.aka/operator"), ev[-1]["op_dir"]  # the snapshot copy
j = json.load(open(ws + "/.aka/episodes/e0001/runtime/journal.json"))
assert j["state"] == "candidate_ready" and j["experiments"][0]["name"] == "the trial", j
cmd = json.load(open(ws + "/.aka/episodes/e0001/agent/invocation-1/command.json"))
argv = cmd["argv"]
assert argv[0].endswith("bwrap") and "--die-with-parent" in argv and "--unshare-all" in argv, argv
assert "--share-net" in argv, "an LLM CLI keeps the network"
assert not any(a.startswith("/dev/nvidia") for a in argv), "a CPU campaign shows no GPU"
assert ws not in argv, "the canonical workspace is bound"
PY
git -C "$WS" cat-file -e "refs/aka/candidates/e0001^{commit}" || fail "the candidate was not fetched"
[ "$(git -C "$WS" log -1 --format=%s)" = "episode 1: promote verified candidate" ] ||
  fail "HEAD: $(git -C "$WS" log -1 --format=%s)"
python3 "$SRC/tests/crash/check_invariants.py" "$WS" || fail "invariants after the confined episode"

# ---- the same probe unconfined: every attempt reaches its target ------------------------------
U=$TMP/unconfined
world "$U"
campaign "$U" none
grep -q "warning: --agent-sandbox none is unsafe" "$U/err" || fail "none: no warning"
unreached=$(grep -v ' REACHED$' "$U/fake/attempts.txt" || true)
[ "$(wc -l <"$U/fake/attempts.txt")" = 19 ] && [ -z "$unreached" ] ||
  fail "unconfined, these probes did not reach their target (the probe is void): $unreached"
[ -e "/tmp/$MARK" ] && grep -q "$MARK" "$U/home/.ssh/id_rsa" ||
  fail "unconfined writes did not land (the probe is void)"
echo "agent_sandbox: unconfined, all $(wc -l <"$U/fake/attempts.txt") probes reached their target"
echo "agent_sandbox: ok"
