#!/usr/bin/env python3
"""crashlib.py — what tests/integration/campaign_crash.sh does between kills, in one
python start (a start costs ~0.3 s on a loaded 2-core VM, and there are 50+ kills).

  after-kill WS KIND GROUPS   print the phase the supervisor was killed in and how many
                              recorded agent groups outlived it (first line), add the groups of WS's active record to GROUPS, check
                              the invariants (--mid-campaign) and settle GROUPS; exit 1
                              printing every violation
  settle WS GROUPS            the agent groups of an episode that WS no longer has in
                              flight must be gone (exit 1 naming the live ones); those are
                              dropped from GROUPS
  kill GROUPS                 SIGKILL what is left of GROUPS (test cleanup)
  wait PID MS [WS PHASE]      return once PID has exited (a zombie counts), MS passed or,
                              with WS and PHASE, WS's active record is in PHASE (then after
                              a random 0-20 ms more: short phases are hit by aiming at them)

GROUPS is a text file, one "pgid start_ticks episode" line per recorded agent group. A
group is identified like the engine does: live processes whose group or session is pgid
and that started no earlier than its leader (/proc/<pid>/stat field 22).
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_invariants  # noqa: E402


def stat(pid):
    """(state, pgrp, session, start ticks) of pid, None when it is gone."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return f[0], int(f[2]), int(f[3]), int(f[19])


def live(pgid, ticks):
    out = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        st = stat(p)
        if st and st[0] not in "ZX" and pgid in (st[1], st[2]) and st[3] >= ticks:
            out.append(int(p))
    return out


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [tuple(map(int, line.split())) for line in f if line.strip()]


def write_rows(path, rows):
    with open(path, "w") as f:
        f.write("".join("%d %d %d\n" % r for r in rows))


def active(ws):
    try:
        with open(os.path.join(ws, ".aka/active_episode.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def committed(ws, name):
    return subprocess.run(["git", "-C", ws, "cat-file", "-e", "HEAD:" + name],
                          stderr=subprocess.DEVNULL).returncode == 0


def phase(ws, kind):
    a = active(ws)
    if a is not None:
        return a.get("phase", "?")
    if not committed(ws, "memory/v0.json"):
        return "V0"
    if kind == "builtin" and not committed(ws, "memory/v1.json"):
        return "V1"
    return "between-episodes"


def settle(ws, path):
    a = active(ws)
    ep = a.get("episode") if a else None
    keep, bad = [], []
    for r in read_rows(path):
        if r[2] == ep:
            keep.append(r)
        elif live(r[0], r[1]):
            bad.append("episode %d: agent group %d still runs (pids %s) after its episode was "
                       "settled" % (r[2], r[0], live(r[0], r[1])))
    write_rows(path, keep)
    return bad


def after_kill(ws, kind, path):
    a = active(ws)
    rows = read_rows(path)
    orphans = 0
    for g in (a or {}).get("agent_groups") or []:
        r = (g["pgid"], g["start_ticks"], a["episode"])
        orphans += bool(live(r[0], r[1]))
        if r not in rows:
            rows.append(r)
    write_rows(path, rows)
    print(phase(ws, kind), orphans)
    c = check_invariants.Checker(ws, True)
    try:
        c.run()
    except RuntimeError as e:
        c.bad("git", str(e))
    return ["VIOLATION " + v for v in c.violations] + settle(ws, path)


def wait(pid, ms, ws=None, target=None):
    until = time.time() + ms / 1000
    while time.time() < until:
        st = stat(pid)
        if st is None or st[0] in "ZX":
            return
        if target and (active(ws) or {}).get("phase") == target:
            time.sleep(random.random() * 0.02)
            return
        time.sleep(0.005 if target else 0.01)


def main(argv):
    cmd = argv[0]
    bad = []
    if cmd == "after-kill":
        bad = after_kill(*argv[1:4])
    elif cmd == "settle":
        bad = settle(argv[1], argv[2])
    elif cmd == "kill":
        for r in read_rows(argv[1]):
            for p in live(r[0], r[1]):
                os.kill(p, signal.SIGKILL)
    elif cmd == "wait":
        wait(argv[1], int(argv[2]), *argv[3:5])
    if bad:
        print("\n".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
