#!/usr/bin/env bash
# core_cli.sh — the application registry, --help/--version, `--` handling,
# asset-tree resolution and the orchestrator/optimize.py launcher.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE CMD... : run CMD, require its exit code, keep output in $tmp/out.
expect() {
  local want=$1; shift
  set +e; "$@" >"$tmp/out" 2>&1; local got=$?; set -e
  [ "$got" = "$want" ] || { cat "$tmp/out"; fail "'$*' exited $got, expected $want"; }
}

expect 0 "$AKA_BIN" --help
for app in inspect optimize sandbox wiki; do
  grep -qE "^  $app +[A-Z]" "$tmp/out" || fail "--help does not list '$app' with a summary"
done
expect 0 "$AKA_BIN" --version
grep -qE '^aka [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/out" || fail "--version: $(cat "$tmp/out")"
for app in inspect optimize sandbox wiki; do
  expect 0 "$AKA_BIN" "$app" --help
  grep -q "usage: aka $app" "$tmp/out" || fail "'aka $app --help' prints no usage line"
  expect 0 "$AKA_BIN" help "$app"
done
expect 2 "$AKA_BIN" no-such-app
grep -q "not an aka application" "$tmp/out" || fail "unknown app message"
expect 2 "$AKA_BIN" --bogus
expect 2 "$AKA_BIN"

# --repo-root must name an asset tree; so must ATREX_AKA_HOME.
mkdir -p "$tmp/notassets"
expect 2 "$AKA_BIN" optimize --repo-root "$tmp/notassets" -- --op-dir x
grep -q "has no runtime/ directory" "$tmp/out" || fail "bad --repo-root message"
ATREX_AKA_HOME="$tmp/notassets" expect 2 "$AKA_BIN" optimize --op-dir x
grep -q "ATREX_AKA_HOME" "$tmp/out" || fail "bad ATREX_AKA_HOME message"
expect 2 "$AKA_BIN" optimize --repo-root
# --repo-root wins over ATREX_AKA_HOME: the campaign flags are reached (and refused).
ATREX_AKA_HOME="$tmp/notassets" expect 2 "$AKA_BIN" optimize --repo-root "$AKA_SOURCE_DIR" -- --op-dir x --platform cpu
grep -q -- "--op-dir: x is not a directory" "$tmp/out" || fail "flags not reached: $(cat "$tmp/out")"

# The three ways of starting a campaign reach the same application with the
# same asset tree and the same flags.
# (a flag error that names the second flag proves both flags arrived).
cd "$tmp"
expect 2 "$AKA_BIN" optimize --repo-root "$AKA_SOURCE_DIR" -- --op-dir "$AKA_SOURCE_DIR/examples/ops/vector_add" --platform nowhere
cp "$tmp/out" "$tmp/a"
ATREX_AKA_HOME="$AKA_SOURCE_DIR" expect 2 "$AKA_BIN" optimize --op-dir "$AKA_SOURCE_DIR/examples/ops/vector_add" --platform nowhere
cmp -s "$tmp/a" "$tmp/out" || fail "repo-root/-- form and plain form differ"
ATREX_AKA_HOME="$AKA_SOURCE_DIR" AKA_BIN="$AKA_BIN" expect 2 python3 "$AKA_SOURCE_DIR/orchestrator/optimize.py" --op-dir "$AKA_SOURCE_DIR/examples/ops/vector_add" --platform nowhere
cmp -s "$tmp/a" "$tmp/out" || fail "optimize.py launcher differs from aka optimize"
grep -q -- "--platform" "$tmp/a" || fail "flags were not passed through: $(cat "$tmp/a")"
[ -z "$(ls "$tmp" | grep -v -e '^out$' -e '^a$' -e '^notassets$')" ] || fail "a usage error wrote files: $(ls "$tmp")"
echo "core_cli: ok"
