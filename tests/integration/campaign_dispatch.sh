#!/bin/bash
# campaign_dispatch.sh — `aka optimize` without --framework: one child campaign
# per framework the platform supports for the operator (DESIGN §4.1).
#   a. cpu + native C operator: exactly the C child runs, to completion (exit 0),
#      in its own workspace, with its output in <workspace>.log and one outcome line.
#   b. nvidia + SOL operator: four children (Triton, CuteDSL, Cuda, TileLang), each with its
#      own workspace. On this CPU-only host each child's V0 fails (no CUDA device):
#      every child still runs and reports, and the parent exits with the worst status.
#   c. the same four children made long-running: `git` on PATH is a stand-in that
#      hangs (it stands for any stuck step of a child; the real git is never reached)
#      and also leaves a process in a session of its own, as an agent does. SIGTERM
#      to the parent ends every process of every child's tree: afterwards no process
#      the children started is alive, and the parent exits 143.
#   d. no framework for the target (cpu + a SOL operator): exit 2, nothing written.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-dispatch.XXXXXX")
parent=
cleanup() {
  [ -n "$parent" ] && kill -9 "$parent" 2>/dev/null || true
  # Leftovers of a failed run (c): the pids the stand-in recorded.
  for f in "$TMP"/pids/*; do [ -f "$f" ] && kill -9 $(cat "$f") 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none

# a. cpu: exactly the C child, completed
cp -r "$SRC/examples/ops/vector_add" "$TMP/vadd"
mkdir -p "$TMP/a"
rc=0
"$AKA" optimize --op-dir "$TMP/vadd" --platform cpu --agent-cli builtin --workspace "$TMP/a" \
  --sandbox-isolation "$ISO" --max-iters 0 >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 0 ] || { cat "$TMP/err" >&2; fail "a: exit $rc"; }
[ "$(grep -c 'dispatch: .* -> ' "$TMP/err")" = 1 ] || fail "a: not one child: $(cat "$TMP/err")"
grep -q "dispatch: C: exit 0: campaign stopped: budget: max-iters" "$TMP/err" ||
  fail "a: outcome line: $(cat "$TMP/err")"
[ "$(ls "$TMP/a")" = "$(printf 'kernel_opt_vector_add_c_cpu\nkernel_opt_vector_add_c_cpu.log')" ] ||
  fail "a: files: $(ls "$TMP/a")"
[ -f "$TMP/a/kernel_opt_vector_add_c_cpu/memory/v0.json" ] || fail "a: no V0"
grep -q "V0 recorded" "$TMP/a/kernel_opt_vector_add_c_cpu.log" || fail "a: log"
echo "ok: a. cpu dispatch runs exactly the C child to completion"

# b. nvidia + SOL: four children, each fails here (no GPU), none stops another
mkdir -p "$TMP/b"
rc=0
"$AKA" optimize --op-dir "$SRC/examples/ops/rope" --platform nvidia/h200 --agent-cli builtin \
  --workspace "$TMP/b" --sandbox-isolation "$ISO" --max-iters 0 --no-auto-recovery \
  >"$TMP/out" 2>"$TMP/err" || rc=$?
for fw in Triton CuteDSL Cuda TileLang; do
  slug=$(echo "$fw" | tr A-Z a-z)
  grep -q "dispatch: $fw: exit [0-9]*: " "$TMP/err" || fail "b: no outcome for $fw: $(cat "$TMP/err")"
  ws=$TMP/b/kernel_opt_rope_neox_h8_d128_${slug}_nvidia_h200
  [ -s "$ws.log" ] && [ -f "$ws/.aka/campaign.json" ] || fail "b: no workspace/log for $fw: $(ls "$TMP/b")"
  grep -q "\"framework\": \"$fw\"" "$ws/.aka/campaign.json" || fail "b: $fw campaign.json"
done
[ "$(grep -c ': exit [0-9]*: ' "$TMP/err")" = 4 ] || fail "b: not four outcomes"
worst=$(grep -o ': exit [0-9]*: ' "$TMP/err" | grep -o '[0-9]*' | sort -n | tail -1)
[ "$rc" = "$worst" ] || fail "b: parent exit $rc, worst child $worst"
echo "ok: b. nvidia dispatch runs Triton, CuteDSL, Cuda and TileLang; exit $rc = the worst child"

# c. SIGTERM to the parent while four children are busy: nothing survives
mkdir -p "$TMP/bin" "$TMP/pids" "$TMP/c"
cat >"$TMP/bin/git" <<SH
#!/bin/bash
# stand-in: record this pid and a detached one (own session, like an agent), then hang
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo "\$\$ \$!" >"$TMP/pids/.\$\$" && mv "$TMP/pids/.\$\$" "$TMP/pids/\$\$"
exec sleep 300
SH
chmod +x "$TMP/bin/git"
PATH="$TMP/bin:$PATH" "$AKA" optimize --op-dir "$SRC/examples/ops/rope" --platform nvidia/h200 \
  --agent-cli builtin --workspace "$TMP/c" --sandbox-isolation "$ISO" --max-iters 0 \
  --no-auto-recovery >"$TMP/out" 2>"$TMP/err" &
parent=$!
for _ in $(seq 300); do [ "$(ls "$TMP/pids" | wc -l)" -ge 4 ] && break; sleep 0.1; done
[ "$(ls "$TMP/pids" | wc -l)" = 4 ] || fail "c: the four children did not all start: $(cat "$TMP/err")"
# Every process of the parent's tree, before the signal, as pid:start-time (so that a
# pid reused by an unrelated process afterwards is not mistaken for a survivor).
cat >"$TMP/tree.py" <<'PY'
import os, sys
def stat(p):
    try:
        s = open(f"/proc/{p}/stat").read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return f[0], int(f[1]), int(f[2]), f[19]  # state, ppid, pgrp, start time
if sys.argv[1] == "tree":
    root, kids = int(sys.argv[2]), {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        st = stat(p)
        if st:
            kids.setdefault(st[1], []).append((int(p), st))
    todo, out = [root], []
    while todo:
        for pid, st in kids.get(todo.pop(), []):
            out.append(f"{pid}:{st[2]}:{st[3]}"); todo.append(pid)
    print(" ".join(out))
else:  # alive PID:PGRP:START...: those still running with the same start time
    alive = []
    for rec in sys.argv[2:]:
        pid, _, start = rec.split(":")
        st = stat(pid)
        if st and st[3] == start and st[0] not in "ZX":
            alive.append(rec)
    print(" ".join(alive))
PY
tree=$(python3 "$TMP/tree.py" tree "$parent")
[ "$(wc -w <<<"$tree")" -ge 9 ] || fail "c: tree too small: $tree"
groups=$(tr ' ' '\n' <<<"$tree" | cut -d: -f2 | sort -u | wc -l)
[ "$groups" -ge 6 ] || fail "c: expected the children's and their descendants' groups, got $groups"
for p in $(cat "$TMP"/pids/*); do grep -Eq "(^| )$p:" <<<"$tree" || fail "c: $p (stand-in) not in the tree"; done
kill -TERM "$parent"
rc=0; wait "$parent" || rc=$?
parent=
[ "$rc" = 143 ] || fail "c: parent exit $rc, expected 143: $(cat "$TMP/err")"
grep -q "stopping every child campaign" "$TMP/err" || fail "c: no stop line: $(cat "$TMP/err")"
alive=$(python3 "$TMP/tree.py" alive $tree)
[ -z "$alive" ] || fail "c: processes survived the stop:$alive"
echo "ok: c. SIGTERM ends all $(wc -w <<<"$tree") processes of the four children's trees; exit 143"

# d. no framework for the target: usage error, nothing written
mkdir -p "$TMP/d"
rc=0
"$AKA" optimize --op-dir "$SRC/examples/ops/rope" --platform cpu --agent-cli builtin \
  --workspace "$TMP/d" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--framework: not given" "$TMP/err" || fail "d: exit $rc: $(cat "$TMP/err")"
[ -z "$(ls -A "$TMP/d")" ] || fail "d: files written: $(ls -A "$TMP/d")"
echo "ok: d. no framework for the target is a usage error"
echo "campaign_dispatch: all dispatch paths"
