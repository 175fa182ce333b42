#!/usr/bin/env bash
# cli_options.sh — every command line of aka goes through one flag table (base/opts.h):
#   1. `aka CMD --help` exits 0 and lists every flag of the tables CMD parses with (the
#      flags are read from those tables in the source, so a row without help fails);
#   2. an unknown flag exits 2 with one line naming the command and the flag;
#   3. one bad value per command (bad number, out of range, bad choice, missing value,
#      a value for a flag that takes none) exits 2 with one line naming the command,
#      the flag and what was expected.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
src=$AKA_SOURCE_DIR/src
# Nothing a command could find by itself: no campaign, no agent session.
unset ATREX_AKA_WORKSPACE ATREX_AKA_WORKTREE ATREX_AKA_TRACE_FILE
cd "$tmp"

# flags FILE TABLE: the flag names of one table (`static const struct aka_opt TABLE[]`).
flags() {
  python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'static const struct aka_opt ' + re.escape(sys.argv[2]) + r'\[\] = \{(.*?)\n\};', text, re.S)
assert m, f"no table {sys.argv[2]} in {sys.argv[1]}"
names = re.findall(r'(?:\.name = |^\s*[A-Z]+\()"(--[a-z0-9-]+)"', m.group(1), re.M)
assert names, f"table {sys.argv[2]} in {sys.argv[1]} has no rows"
print("\n".join(names))
PY
}

# help "CMD WORDS" FILE:TABLE...: --help exits 0 and has a line "  [-x, ]--flag" per row.
help() {
  local cmd=$1; shift
  local n=0 spec flag list
  # shellcheck disable=SC2086
  "$AKA_BIN" $cmd --help >"$tmp/help" 2>&1 || fail "aka $cmd --help: exit $?"
  for spec in "$@"; do
    list=$(flags "$src/${spec%%:*}" "${spec##*:}") || fail "cannot read the table $spec"
    for flag in $list; do
      grep -qE -- "^  (-[a-z], )?$flag( |$)" "$tmp/help" || fail "aka $cmd --help lacks $flag"
      n=$((n + 1))
    done
  done
  grep -qE -- "^  -h, --help " "$tmp/help" || fail "aka $cmd --help lacks -h, --help"
  echo "ok: aka $cmd --help lists its $n flags"
}

T=sandbox/transport.c:flags
help "" core/registry.c:global_flags
help eval cmd/eval.c:flags $T
help "sandbox run" cmd/sandbox.c:flags $T
help optimize optimize/options.c:flags $T
help inspect cmd/inspect.c:flags
help status cmd/status.c:flags
help report cmd/report.c:flags
help memory cmd/memory.c:flags
help trace
help journal cmd/journal.c:flags
help handoff cmd/handoff.c:flags
help agent-session cmd/agent_session.c:flags
help tune-agent cmd/tune_agent.c:flags
help ask-codex cmd/ask_reviewer.c:ask_flags
help ask-qoder cmd/ask_reviewer.c:ask_flags
help plan-reviewers cmd/ask_reviewer.c:probe_flags
help "wiki query" cmd/wiki.c:query_flags cmd/wiki.c:common_flags
help "wiki show" cmd/wiki.c:common_flags
help "wiki check" cmd/wiki.c:common_flags
help "wiki plugins" cmd/wiki.c:common_flags
help "wiki import" cmd/wiki.c:import_flags
help "policy check" cmd/policy.c:check_flags
help "wiki cited" cmd/wiki.c:common_flags
help "wiki tool" cmd/wiki.c:common_flags
help profile cmd/profile.c:flags $T
help recovery cmd/recovery.c:flags
help doctor cmd/doctor.c:flags $T
help "gateway serve" cmd/gateway.c:flags
help "sandbox replay" cmd/sandbox_replay.c:flags

# bad WANT CMD ARGS...: exit 2, one line on stderr containing WANT (fixed text); aka
# optimize adds its "nothing was written" line.
bad() {
  local want=$1; shift
  set +e; "$AKA_BIN" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?; set -e
  [ "$rc" = 2 ] || { cat "$tmp/err"; fail "aka $*: exit $rc, expected 2"; }
  [ "$(grep -vc 'usage error (nothing was written)' "$tmp/err")" = 1 ] ||
    { cat "$tmp/err"; fail "aka $*: expected one line"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "aka $*: no '$want'"; }
}

for cmd in eval "sandbox run" optimize inspect status memory trace journal handoff \
  agent-session tune-agent ask-codex ask-qoder plan-reviewers "wiki query" "wiki show" \
  "wiki check" "wiki plugins" "wiki import" "wiki cited" "wiki tool" "policy check" profile \
  recovery doctor "gateway serve" "sandbox replay"; do
  # shellcheck disable=SC2086
  bad "aka: $cmd: --no-such-flag: unknown flag (see aka $cmd --help)" $cmd --no-such-flag x
done
echo "ok: an unknown flag names the command and the flag, exit 2"

bad "eval: --timeout: expected an integer in [1, 1000000]; got '0'" eval --timeout 0
bad "eval: --sandbox: expected one of local, ssh, gateway, slurm; got 'cloud'" eval --sandbox cloud
bad "sandbox run: --gpus: expected an integer in [0, 32]; got '99'" sandbox run --gpus 99 -- true
bad "sandbox run: --kind: expected one of run, profile, check, dev; got 'x'" sandbox run --kind x true
bad "optimize: --max-iters: expected an integer in [0, 1000000]; got 'many'" optimize --max-iters many
bad "optimize: --target-util: expected a number in [0, 100]; got '101'" optimize --target-util 101
bad "inspect: --op-dir: expected a value (DIR)" inspect --op-dir
bad "status: --workspace: expected a value (DIR)" status --workspace
bad "memory: --json: takes no value; got 'yes'" memory list --json=yes
bad "trace: 'x': unexpected argument" trace phase-start a b x
bad "journal: --state: expected a value (S)" journal finalize --state
bad "handoff: --status: expected a value (S)" handoff --status
bad "agent-session: --timeout: expected an integer in [0, " agent-session --backend claude --timeout -1
bad "agent-session: --agent-sandbox: expected one of bwrap, none; got 'x'" agent-session --agent-sandbox x
bad "tune-agent: --trials: expected an integer in [1, 1000000000]; got '0'" tune-agent --trials 0
bad "ask-codex: --timeout: expected an integer in [1, " ask-codex --plan p --timeout 0
bad "ask-qoder: --timeout: expected an integer in [1, " ask-qoder --plan p --timeout soon
bad "plan-reviewers: --workspace: expected a value (WS)" plan-reviewers --workspace
bad "wiki query: --limit: expected an integer in [1, 200]; got '0'" wiki query x --limit 0
bad "wiki import: --out: expected a value (PLUGIN_DIR)" wiki import d --out
bad "policy check: --json: takes no value; got 'yes'" policy check --json=yes
bad "profile: --level: expected one of survey, sol, deep; got 'x'" profile --level x
bad "profile: --top-kernels: expected an integer in [1, 1000]; got '0'" profile --top-kernels 0
bad "recovery: --json: takes no value; got 'yes'" recovery status --json=yes
bad "recovery: expected status, stop or resume; got 'restart'" recovery restart
bad "doctor: --agent: expected one of claude, qodercli, codex, pi, builtin; got 'x'" doctor --agent x
bad "sandbox: 'frob': unknown subcommand; expected one of run, replay" sandbox frob
set +e; "$AKA_BIN" wiki frob >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e # then wiki's usage
[ "$rc" = 2 ] && head -1 "$tmp/err" |
  grep -qF "wiki: 'frob': unknown subcommand; expected one of query, show, check, import, plugins, cited, tool" ||
  fail "aka wiki frob: exit $rc: $(head -1 "$tmp/err")"
echo "ok: a bad value names the command, the flag and what was expected, exit 2"

# aka itself: an unknown flag and a missing value, then the help.
set +e; "$AKA_BIN" --no-such-flag >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e
[ "$rc" = 2 ] && head -1 "$tmp/err" | grep -qF "aka: --no-such-flag: unknown flag (see aka --help)" ||
  fail "aka --no-such-flag: exit $rc: $(head -1 "$tmp/err")"
set +e; "$AKA_BIN" --repo-root >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e
[ "$rc" = 2 ] && head -1 "$tmp/err" | grep -qF "aka: --repo-root: expected a value (DIR)" ||
  fail "aka --repo-root: exit $rc: $(head -1 "$tmp/err")"
echo "ok: aka's own flags"

# Every application `aka --help` lists has its --help checked above (a new command
# must be added here).
for app in $("$AKA_BIN" --help | sed -n '/^applications:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
  grep -qE "^help \"?$app( |\"|$)" "$AKA_SOURCE_DIR/tests/integration/cli_options.sh" ||
    fail "aka $app is not covered by cli_options.sh"
done
echo "ok: every application is covered"
