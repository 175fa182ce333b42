#!/bin/bash
# doctor.sh — `aka doctor` on this host, on a host without bwrap (PATH holds links to
# every tool it needs but bwrap), against an unreachable ssh host (loopback, a port
# nothing listens on) and with a runtime pin naming a missing file: each problem is a
# FAIL line naming it and what to do, exit 1;
# --json has one object per check, the same checks as the text; usage errors exit 2.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
: "${AKA_SOURCE_DIR:?}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-doctor.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# doctor OUT [flags...]: run it, keep the output in $TMP/OUT, the status in $rc.
doctor() {
    local out=$1
    shift
    rc=0
    "$AKA" doctor "$@" >"$TMP/$out" 2>"$TMP/$out.err" || rc=$?
}
# Every line but the last is "ok|warn|FAIL  NAME  DETAIL"; exit 1 exactly when one is FAIL.
check_shape() {
    local out=$TMP/$1 fails
    [ "$(grep -cvE '^(ok|warn|FAIL) ' "$out")" = 1 ] || fail "$1: lines of another shape: $(cat "$out")"
    fails=$(grep -c '^FAIL ' "$out" || true)
    if [ "$fails" = 0 ]; then [ "$rc" = 0 ] || fail "$1: no FAIL but exit $rc"; else
        [ "$rc" = 1 ] || fail "$1: $fails FAIL but exit $rc"; fi
}

# ---- this host ------------------------------------------------------------------------------
doctor here
check_shape here
for name in bwrap git builtin "asset tree" GPU "runtime pins" "job directories"; do
    grep -qE "^(ok|warn|FAIL) +$name " "$TMP/here" || fail "no '$name' check: $(cat "$TMP/here")"
done
echo "ok: aka doctor on this host (exit $rc): $(grep -c '' "$TMP/here") lines"

# ---- the same checks as JSON -----------------------------------------------------------------
doctor here.json --json
python3 - "$TMP/here" "$TMP/here.json" <<'EOF2'
import json, sys
text = [l.split()[0:2] for l in open(sys.argv[1]).read().splitlines()[:-1]]
doc = json.load(open(sys.argv[2]))
assert doc["schema"] == "aka.doctor.v1", doc
checks = doc["checks"]
assert len(checks) == len(text), (len(checks), len(text))
for c in checks:
    assert set(c) == {"name", "status", "detail", "fix"}, c
    assert c["status"] in ("ok", "warn", "FAIL"), c
    assert c["status"] == "ok" or c["fix"], c
assert doc["ok"] == all(c["status"] != "FAIL" for c in checks)
assert [c["status"] for c in checks] == [t[0] for t in text]
EOF2
echo "ok: --json has one object per check"

# ---- a host without bwrap --------------------------------------------------------------------
mkdir -p "$TMP/bin"
for t in git ssh sh bash env; do
    p=$(command -v "$t") && ln -s "$p" "$TMP/bin/$t"
done
PATH=$TMP/bin doctor nobwrap
check_shape nobwrap
[ "$rc" = 1 ] || fail "without bwrap: exit $rc"
grep -E '^FAIL +bwrap ' "$TMP/nobwrap" | grep -q "install bubblewrap" ||
    fail "without bwrap: $(cat "$TMP/nobwrap")"
grep -E '^FAIL +bwrap ' "$TMP/nobwrap" | grep -q "apt install bubblewrap" ||
    fail "without bwrap: no install command"
echo "ok: without bwrap: FAIL naming bubblewrap and how to install it"

# ---- an unreachable ssh host -----------------------------------------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMP/sshbin"
printf '#!/bin/sh\nexec %s -o Port=%s -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/dev/null "$@"\n' \
    "$(command -v ssh)" "$PORT" >"$TMP/sshbin/ssh"
chmod 755 "$TMP/sshbin/ssh"
PATH=$TMP/sshbin:$PATH doctor unreachable --sandbox-ssh nobody@127.0.0.1 --sandbox-ssh-gpu 0
check_shape unreachable
[ "$rc" = 1 ] || fail "unreachable: exit $rc"
grep -E '^FAIL +ssh reachability ' "$TMP/unreachable" | grep -q "Connection refused" ||
    fail "unreachable: $(cat "$TMP/unreachable")"
grep -E '^FAIL +ssh reachability ' "$TMP/unreachable" | grep -q "BatchMode=yes" ||
    fail "unreachable: no fix"
echo "ok: an unreachable ssh host: FAIL naming reachability and the fix"

# ---- a named agent that is missing, then present with credentials ------------------------------
PATH=$TMP/bin doctor noclaude --agent claude
grep -qE '^FAIL +claude ' "$TMP/noclaude" && [ "$rc" = 1 ] || fail "--agent claude missing: $(cat "$TMP/noclaude")"
ln -s "$AKA_SOURCE_DIR/tests/fakes/fake-claude" "$TMP/bin/claude"
mkdir -p "$TMP/home/.claude" && echo '{}' >"$TMP/home/.claude/.credentials.json"
HOME=$TMP/home PATH=$TMP/bin:$PATH doctor claude --agent claude
grep -E '^ok +claude ' "$TMP/claude" | grep -q "credentials found" || fail "claude: $(cat "$TMP/claude")"
! grep -qE '^(ok|warn|FAIL) +codex ' "$TMP/claude" || fail "--agent claude also checked codex"
echo "ok: --agent names the one CLI; missing is FAIL, credentials on disk are reported"

# ---- a runtime pin that names a missing file ---------------------------------------------------
ATREX_SANDBOX_REQUIREMENTS_FILE=$TMP/no-such-requirements.txt doctor pins
grep -E '^FAIL +runtime pins ' "$TMP/pins" | grep -q "no-such-requirements.txt" && [ "$rc" = 1 ] ||
    fail "a missing requirements file: exit $rc: $(cat "$TMP/pins")"
echo "ok: a runtime pin naming a missing file is FAIL naming it"

# ---- usage errors ----------------------------------------------------------------------------
doctor usage1 --agent nope
[ "$rc" = 2 ] && grep -q -- "--agent" "$TMP/usage1.err" || fail "--agent nope: exit $rc"
doctor usage2 --sandbox-ssh-gpu 0
[ "$rc" = 2 ] && grep -q -- "--sandbox-ssh-gpu: only applies" "$TMP/usage2.err" || fail "scope: exit $rc"
[ ! -s "$TMP/usage1" ] || fail "a usage error printed checks"
echo "ok: usage errors exit 2 before any check"
