#!/bin/bash
# ssh_transport.sh — the ssh transport against a real sshd on loopback
# (tests/lib/sshd_fixture.sh: its own host key, config and client key; run as root, a
# throwaway user logs in, whose home holds a planted ~/.ssh/secret).
#   1. a job sees only its allowlisted files (a sibling of the shipped file is absent);
#   2. it has no network (the sshd port answers outside, not inside);
#   3. it cannot read the remote user's home or ~/.ssh (readable to that user over ssh);
#   4. runtime binds of /, /etc and ~/.ssh are refused before anything is sent, and a
#      symlink into ~/.ssh (or the home itself) after the remote realpath;
#   5. a fake nvidia-smi first on the remote PATH reporting MIG Enabled: the GPU job is
#      refused with exit 75 (MIG Disabled: refused for the missing /dev/nvidia0 instead; a
#      2-GPU job likewise, for GPUs 0..1; without nvidia-smi, for GPU 0), and `aka doctor`
#      says FAIL for that GPU (before: ok for reachability and tools);
#   6. ssh's own failure (a closed port, a connection lost while the command runs) is
#      exit 75, a command's exit 255 stays its own;
#      a full remote disk (root: a small tmpfs over the remote TMPDIR) is exit 75;
#   7. artifacts come back through the extraction rules (a symlink is refused);
#   8. `aka eval` of examples/ops/vector_add (native C, CPU) over ssh passes;
#   9. a two-episode built-in-tuner campaign completes over ssh (the agent's own evaluations
#      brokered by the supervisor over ssh), with memory records of
#      the same shape (key sets) as a local campaign's.
# After every step the remote TMPDIR is listed: no job directory is left behind.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
# shellcheck source=tests/lib/sshd_fixture.sh
. "$SRC/tests/lib/sshd_fixture.sh"
sshd_require
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-ssh-test.XXXXXX")
# (set -e holds in the trap too: every step of it must succeed or say || true.)
trap 'umount "${SSH_TMP:-/nonexistent}" 2>/dev/null || true; sshd_stop; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sshd_start "$TMP"
SSH=(--sandbox-ssh "$SSH_TARGET" --sandbox-ssh-gpu 0)

# The remote TMPDIR holds no job directory (listed over ssh, as the remote user sees it).
no_leftovers() {
    local left
    left=$(ssh -o BatchMode=yes "$SSH_TARGET" 'ls -A "$TMPDIR"')
    [ -z "$left" ] || fail "$1: remote TMPDIR not empty: $left"
}
no_leftovers "before"

# ---- 1. only the allowlist -------------------------------------------------------------------
mkdir -p "$TMP/in"
echo shipped >"$TMP/in/a.txt"
echo secret-sibling >"$TMP/in/b.txt"
"$AKA" sandbox run "${SSH[@]}" --input "$TMP/in/a.txt" -- sh -c 'find . -type f | sort; cat a.txt' \
    >"$TMP/o1" 2>"$TMP/e1" || { cat "$TMP/e1"; fail "allowlist job"; }
[ "$(cat "$TMP/o1")" = "$(printf './a.txt\nshipped')" ] || fail "job saw: $(cat "$TMP/o1")"
no_leftovers "allowlist"
echo "ok: the job sees only its allowlisted file"

# ---- 2. no network ------------------------------------------------------------------------------
probe_net="exec 3<>/dev/tcp/127.0.0.1/$SSH_PORT && echo CONNECTED"
bash -c "$probe_net" | grep -q CONNECTED || fail "the sshd port does not answer outside"
"$AKA" sandbox run "${SSH[@]}" -- bash -c "$probe_net; cat /proc/net/dev" >"$TMP/o2" 2>"$TMP/e2" || true
! grep -q CONNECTED "$TMP/o2" || fail "the job reached 127.0.0.1:$SSH_PORT"
[ "$(grep -c ':' "$TMP/o2")" = 1 ] && grep -q 'lo:' "$TMP/o2" || fail "interfaces: $(cat "$TMP/o2")"
no_leftovers "network"
echo "ok: no network inside (only lo, the sshd port unreachable)"

# ---- 3. the remote home and ~/.ssh ------------------------------------------------------------
ssh -o BatchMode=yes "$SSH_TARGET" 'mkdir -p ~/.ssh && echo TOPSECRET >~/.ssh/secret && echo HOMEFILE >~/notes'
ssh -o BatchMode=yes "$SSH_TARGET" 'cat ~/.ssh/secret' | grep -q TOPSECRET || fail "planting"
"$AKA" sandbox run "${SSH[@]}" -- sh -c "cat $SSH_HOME/.ssh/secret; cat $SSH_HOME/notes; ls -a $SSH_HOME; cat ~/.ssh/secret; ls /home /root" \
    >"$TMP/o3" 2>"$TMP/e3" || true
! grep -q 'TOPSECRET\|HOMEFILE\|notes' "$TMP/o3" || fail "the job read the home: $(cat "$TMP/o3")"
grep -q "No such file" "$TMP/e3" || fail "expected 'No such file': $(cat "$TMP/e3")"
no_leftovers "home"
echo "ok: the remote home and ~/.ssh are not there for the job"

# ---- 4. runtime binds ----------------------------------------------------------------------------
refused_bind() { # SPEC EXPECTED-TEXT
    local rc=0
    "$AKA" sandbox run "${SSH[@]}" --sandbox-ssh-runtime-bind "$1" -- true >"$TMP/o4" 2>"$TMP/e4" || rc=$?
    [ "$rc" = 2 ] || fail "bind $1: exit $rc, expected 2: $(cat "$TMP/e4")"
    grep -q -- "$2" "$TMP/e4" || fail "bind $1: expected '$2' in: $(cat "$TMP/e4")"
}
# Refused as written: no connection is made (the master would leave nothing, and the
# remote directory is never created).
refused_bind / "too broad"
refused_bind /etc "system tree"
refused_bind "$SSH_HOME/.ssh=/opt/k" ".ssh"
mkdir -p "$TMP/links" && chmod 755 "$TMP/links"
ln -s "$SSH_HOME/.ssh" "$TMP/links/keys"
ln -s "$SSH_HOME" "$TMP/links/home"
refused_bind "$TMP/links/keys=/opt/keys" "resolves on the remote host to $SSH_HOME/.ssh"
refused_bind "$TMP/links/home=/opt/home" "resolves on the remote host to $SSH_HOME"
# An ordinary directory is bound (read-only) where it was asked.
mkdir -p "$TMP/links/toolkit" && echo tool >"$TMP/links/toolkit/t.txt"
"$AKA" sandbox run "${SSH[@]}" --sandbox-ssh-runtime-bind "$TMP/links/toolkit=/opt/tk" -- \
    sh -c 'cat /opt/tk/t.txt; touch /opt/tk/x 2>/dev/null && echo WRITABLE; true' >"$TMP/o4" 2>"$TMP/e4" ||
    { cat "$TMP/e4"; fail "toolkit bind"; }
[ "$(cat "$TMP/o4")" = tool ] || fail "toolkit bind: $(cat "$TMP/o4")"
no_leftovers "binds"
echo "ok: binds of /, /etc, ~/.ssh refused as written; symlinks into ~/.ssh or the home after realpath"

# ---- 5. MIG -------------------------------------------------------------------------------------
fake_smi() {
    printf '#!/bin/sh\necho "GPU-8c2d1f3a-0000-1111-2222-333344445555, %s"\n' "$1" >"$SSH_RBIN/nvidia-smi"
    chmod 755 "$SSH_RBIN/nvidia-smi"
}
# aka doctor against the same host: reachable, the remote tools there, no nvidia-smi yet.
rc=0
"$AKA" doctor "${SSH[@]}" >"$TMP/d5" 2>&1 || rc=$?
grep -qE '^ok +ssh reachability ' "$TMP/d5" && grep -qE '^ok +remote sandbox ' "$TMP/d5" &&
    grep -qE '^ok +remote bwrap ' "$TMP/d5" && grep -qE '^warn +remote nvidia-smi ' "$TMP/d5" ||
    fail "doctor over ssh: $(cat "$TMP/d5")"
fake_smi Enabled
rc=0
"$AKA" doctor "${SSH[@]}" >"$TMP/d5" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -E '^FAIL +remote GPU ' "$TMP/d5" | grep -q "MIG enabled" ||
    fail "doctor with MIG: exit $rc: $(cat "$TMP/d5")"
rc=0
"$AKA" sandbox run "${SSH[@]}" --gpus 1 -- true >"$TMP/o5" 2>"$TMP/e5" || rc=$?
[ "$rc" = 75 ] && grep -q "MIG enabled" "$TMP/e5" || fail "MIG: exit $rc: $(cat "$TMP/e5")"
no_leftovers "MIG"
fake_smi Disabled
rc=0
"$AKA" sandbox run "${SSH[@]}" --gpus 1 -- true >"$TMP/o5" 2>"$TMP/e5" || rc=$?
if [ ! -e /dev/nvidia0 ]; then
    [ "$rc" = 75 ] && grep -q "has no /dev/nvidia" "$TMP/e5" || fail "no GPU node: exit $rc: $(cat "$TMP/e5")"
    # A distributed job (world_size 2) takes GPUs 0 and 1 of the remote host: both asked
    # of nvidia-smi, then their nodes, whose absence here is the environment's.
    rc=0
    "$AKA" sandbox run "${SSH[@]}" --gpus 2 -- true >"$TMP/o5" 2>"$TMP/e5" || rc=$?
    [ "$rc" = 75 ] && grep -qE "has no /dev/nvidia[a-z0-9]* \\(GPUs 0..1\\)" "$TMP/e5" ||
        fail "two GPUs: exit $rc: $(cat "$TMP/e5")"
fi
rm -f "$SSH_RBIN/nvidia-smi"
rc=0
"$AKA" sandbox run "${SSH[@]}" --gpus 2 -- true >"$TMP/o5" 2>"$TMP/e5" || rc=$?
[ "$rc" = 75 ] && grep -q "cannot query GPU 0" "$TMP/e5" || fail "two GPUs, no nvidia-smi: exit $rc: $(cat "$TMP/e5")"
no_leftovers "GPU"
echo "ok: MIG enabled refused (75); a distributed job's two GPUs checked on the remote host (75 here)"

# ---- 6. the environment's failure and the command's ---------------------------------------------
rc=0
"$AKA" sandbox run --sandbox-ssh "$SSH_USER@127.0.0.1" --sandbox-ssh-gpu 0 -- sh -c 'exit 255' \
    >"$TMP/o6" 2>"$TMP/e6" || rc=$?
[ "$rc" = 255 ] || fail "a command's own 255 became $rc: $(cat "$TMP/e6")"
# The connection lost while the command runs (the server's per-connection processes, the
# children of the sshd this test started, are ended): the environment's, not the job's.
rc=0
"$AKA" sandbox run "${SSH[@]}" -- sh -c 'sleep 4; exit 1' >"$TMP/o6" 2>"$TMP/e6" &
apid=$!
sleep 2
for p in $(ps -o pid= --ppid "$SSHD_PID"); do kill "$p" 2>/dev/null || true; done
wait "$apid" || rc=$?
[ "$rc" = 75 ] || fail "a connection lost mid-job: exit $rc: $(cat "$TMP/e6")"
sleep 3 # the remote command, left without its connection, ends; then it is cleaned below
# The same loopback on a port nothing listens on.
printf 'Host aka-closed\n  HostName 127.0.0.1\n  Port %s\n' "$(sshd_free_port)" >>"$TMP/ssh_config"
rc=0
"$AKA" sandbox run --sandbox-ssh "$SSH_USER@aka-closed" --sandbox-ssh-gpu 0 -- true \
    >"$TMP/o6" 2>"$TMP/e6" || rc=$?
[ "$rc" = 75 ] && grep -q "refused" "$TMP/e6" || fail "a closed port: exit $rc: $(cat "$TMP/e6")"
no_leftovers "failures"
echo "ok: ssh's failure is exit 75; a command's exit 255 is its own"

# A full remote disk (root only: a 512 KiB tmpfs over the remote TMPDIR): an upload that
# does not fit and a command that failed on a full disk are the environment's (75); a
# command that succeeds there is still its own result.
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=512k,mode=0755 tmpfs "$SSH_TMP" 2>/dev/null; then
    chown "$SSH_USER" "$SSH_TMP"
    head -c 2000000 /dev/urandom >"$TMP/in/big.bin"
    rc=0
    "$AKA" sandbox run "${SSH[@]}" --input "$TMP/in/big.bin" -- true >"$TMP/o6" 2>"$TMP/e6" || rc=$?
    [ "$rc" = 75 ] && grep -q "no space left on the remote file system" "$TMP/e6" ||
        { umount "$SSH_TMP"; fail "upload to a full disk: exit $rc: $(cat "$TMP/e6")"; }
    rc=0
    "$AKA" sandbox run "${SSH[@]}" -- sh -c 'head -c 4000000 /dev/zero >fill' >"$TMP/o6" 2>"$TMP/e6" || rc=$?
    [ "$rc" = 75 ] && grep -q "no space left on the remote file system" "$TMP/e6" ||
        { umount "$SSH_TMP"; fail "a command on a full disk: exit $rc: $(cat "$TMP/e6")"; }
    rc=0
    "$AKA" sandbox run "${SSH[@]}" -- sh -c 'echo small >f' >"$TMP/o6" 2>"$TMP/e6" || rc=$?
    [ "$rc" = 0 ] || { umount "$SSH_TMP"; fail "a small job on the small disk: exit $rc"; }
    no_leftovers "full disk"
    umount "$SSH_TMP"
    echo "ok: a full remote disk is exit 75 (upload, and a command that failed on it)"
else
    echo "note: not root or no tmpfs mount here: the full-disk case was skipped"
fi

# ---- 7. artifacts ---------------------------------------------------------------------------------
mkdir -p "$TMP/art"
"$AKA" sandbox run "${SSH[@]}" --sync out.txt --sync link --sync missing --artifact-dir "$TMP/art" --json -- \
    sh -c 'echo result >out.txt; ln -s /etc/passwd link' >"$TMP/o7" 2>"$TMP/e7" || { cat "$TMP/e7"; fail "artifacts"; }
[ "$(cat "$TMP/art/out.txt" 2>/dev/null)" = result ] || fail "out.txt did not come back: $(cat "$TMP/o7")"
[ ! -e "$TMP/art/link" ] || fail "a symlink came back"
python3 - "$TMP/o7" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["transport"] == "ssh" and r["status"] == "completed", r
refused = " ".join(r["artifacts_refused"])
assert "link" in refused, r["artifacts_refused"]
EOF
no_leftovers "artifacts"
echo "ok: artifacts back through the extraction checks"

# ---- 8. aka eval over ssh ---------------------------------------------------------------------------
OP=$SRC/examples/ops/vector_add
"$AKA" eval --op-dir "$OP" --kernel "$OP/seeds/C/kernel.c" --framework C --platform cpu "${SSH[@]}" \
    >"$TMP/o8" 2>"$TMP/e8" || { cat "$TMP/o8" "$TMP/e8"; fail "aka eval over ssh"; }
grep -qi "pass" "$TMP/o8" || fail "aka eval: $(cat "$TMP/o8")"
no_leftovers "eval"
echo "ok: aka eval of vector_add over ssh passes"

# ---- 9. a built-in-tuner campaign, over ssh and locally ----------------------------------------------
campaign() { # PARENT [transport flags...]
    local parent=$1
    shift
    mkdir -p "$parent"
    "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --workspace "$parent" \
        --agent-cli builtin --max-iters 2 --verify-repeats 1 --verify-run-timeout 60 \
        --max-dispersion-pct 90 "$@" >"$parent.out" 2>"$parent.err" ||
        { tail -20 "$parent.err"; fail "campaign $* in $parent"; }
}
: >"$TMP/probes"
campaign "$TMP/remote" "${SSH[@]}"
REMOTE_JOBS=$(wc -l <"$TMP/probes")
campaign "$TMP/local"
# The supervisor's own evaluations (V0, V1) went over ssh; the local campaign sent none.
[ "$REMOTE_JOBS" -ge 2 ] && [ "$(wc -l <"$TMP/probes")" = "$REMOTE_JOBS" ] ||
    fail "jobs over ssh: $REMOTE_JOBS during the ssh campaign, $(wc -l <"$TMP/probes") in all"
python3 - "$TMP/remote/kernel_opt_vector_add_c_cpu" "$TMP/local/kernel_opt_vector_add_c_cpu" <<'EOF'
import glob, json, os, sys
def shape(v):
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [shape(v[0])] if v else []
    return type(v).__name__ if v is not None else None
def keys(v, p=""):
    if isinstance(v, dict):
        out = {p + "/" + k for k in v}
        for k, x in v.items():
            out |= keys(x, p + "/" + k)
        return out
    if isinstance(v, list):
        return set().union(*(keys(x, p + "[]") for x in v)) if v else set()
    return set()
remote, local = sys.argv[1], sys.argv[2]
rv = sorted(os.path.basename(p) for p in glob.glob(f"{remote}/memory/v*.json"))
lv = sorted(os.path.basename(p) for p in glob.glob(f"{local}/memory/v*.json"))
assert rv == lv and len(rv) >= 2, (rv, lv)
for name in rv:
    r = json.load(open(f"{remote}/memory/{name}"))
    l = json.load(open(f"{local}/memory/{name}"))
    assert set(r) == set(l), (name, set(r) ^ set(l))
    # Nested keys may differ only where the verdicts differ (both are recorded honestly).
    if r.get("status") == l.get("status"):
        assert keys(r) == keys(l), (name, sorted(keys(r) ^ keys(l)))
print("records:", " ".join(rv))
EOF
# The agent's own evaluations: over ssh through the supervisor's broker (the agent's sandbox
# has neither the network nor ~/.ssh); in the local campaign on this host, by the agent.
python3 - "$TMP/remote" "$TMP/local" <<'EOF'
import json, os, sys
def records(root):  # the episodes' runtime archives (.aka/episodes/eNNNN/runtime/)
    out = []
    for d, _, files in os.walk(root):
        if "evaluations.jsonl" in files and "/.git" not in d:
            out += [json.loads(l) for l in open(f"{d}/evaluations.jsonl") if l.strip()]
    return out
remote, local = records(sys.argv[1]), records(sys.argv[2])
assert remote and local, (len(remote), len(local))
assert all(r.get("brokered") is True and r.get("transport") == "ssh" for r in remote), \
    [(r.get("brokered"), r.get("transport")) for r in remote]
assert all(r.get("brokered") is False and r.get("transport") == "local" for r in local), \
    [(r.get("brokered"), r.get("transport")) for r in local]
print("agent evaluations:", len(remote), "brokered over ssh,", len(local), "local")
EOF
# ... and the campaign's progress said so, one line per brokered evaluation.
grep -Eq "agent evaluation [0-9a-f]{16}: (PASS|FAIL).*\(ssh, " "$TMP/remote.err" ||
    fail "no progress line for a brokered evaluation in $(tail -5 "$TMP/remote.err")"
! grep -q "agent evaluation " "$TMP/local.err" || fail "a local campaign's agent evaluation was brokered"
no_leftovers "campaign"
echo "ok: a built-in-tuner campaign over ssh ($REMOTE_JOBS remote jobs) completes with records shaped like a local one's"
