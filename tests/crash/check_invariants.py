#!/usr/bin/env python3
"""check_invariants.py — the campaign invariants of one `aka optimize` workspace.

Usage: check_invariants.py [--mid-campaign] WORKSPACE

Exit 0 when every invariant holds, 1 after printing each violated one (one
line each, "invariant: detail"), 2 on bad usage. Usable by hand on any campaign
workspace (kernel_opt_<op>_<fw>_<platform>...); it reads, never writes.

What is checked (DESIGN §3, §4.4, §7; upstream invariants 1, 2, 7, 10, 11):
  versions    memory/v0..vN on disk and in HEAD are contiguous, each parses,
              says its own version and equals its committed copy;
  history     every commit on HEAD's first-parent line is the supervisor's and
              one of the fixed commit kinds; each memory/vN.json is added by
              exactly one commit and never changed again; an outcome commit
              changes only its record, a promotion only the kernel and its
              record; episode numbers are 1..E, one version each;
  incumbent   HEAD's kernel is the kernel of the latest baseline/V1/promoted
              version; each promotion commit holds the candidate commit's
              kernel; the V0 and V1 commits are ancestors of HEAD;
  ledger      every commit on HEAD's first-parent line is in the supervisor's
              commit ledger .aka/commits.json (mid-campaign: except a HEAD that
              is exactly the ledger's pending intent — parent, tree, subject —
              made by a supervisor killed before it recorded it); an active
              record's version_commit is the HEAD it names when v<N> is
              committed;
  counters    .aka/state.json episodes, accepted, rejected, pivoted, blocked,
              protocol_failures, interrupted and consecutive_without_promotion
              agree with the statuses of the episode records;
  clean stop  no .aka/active_episode.json, a clean `git status`, only the main
              worktree registered and nothing left under
              <parent>/.aka-worktrees/<workspace>/ (episode repositories and their
              .view directories).

--mid-campaign: the workspace of a supervisor that was killed and not yet
resumed. Then an active record may exist, but it must be consistent: its
version is the next one (nothing committed) or the latest (committed, cleanup
pending; the counters may then lag by that one episode), its base is HEAD or
HEAD's parent accordingly, the only worktree is its own (with its .view), and the only
uncommitted record is its version (or v0 while V0 is being recorded). The
incumbent check is skipped while HEAD is a V0/V1 source commit not yet
measured or pinned, and the working tree may be dirty (a half-made squash).
"""
import json
import os
import re
import subprocess
import sys

EPISODE_STATUSES = ("promoted", "rejected", "pivot", "blocked", "invalid_handoff", "interrupted")
ALL_STATUSES = ("baseline", "framework_baseline", "failed") + EPISODE_STATUSES
INCUMBENT_STATUSES = ("baseline", "framework_baseline", "promoted")
# state.json counter of each episode status (src/optimize/episode.c, count()).
COUNTER_OF = {"promoted": "accepted", "rejected": "rejected", "pivot": "pivoted",
              "blocked": "blocked", "invalid_handoff": "protocol_failures",
              "interrupted": "interrupted"}
SUPERVISOR = "aka-supervisor"
VERSION_FILE = re.compile(r"^v(\d+)\.json$")
# The commit kinds of the incumbent branch (DESIGN §4.4; src/bootstrap, episode_record.c).
KINDS = [
    ("v0_source", re.compile(r"^V0: baseline kernel$")),
    ("v0_record", re.compile(r"^V0: record baseline measurement$")),
    ("v1_kernel", re.compile(r"^v1: framework baseline \(.+\) replacing the V0 .*$")),
    ("v1_pin", re.compile(r"^v(\d+): pin framework baseline [0-9a-f]{8}$")),
    ("promotion", re.compile(r"^episode (\d+): promote verified candidate$")),
    ("outcome", re.compile(r"^v(\d+): episode (\d+) (%s)$" % "|".join(EPISODE_STATUSES))),
]


class Checker:
    def __init__(self, ws, mid):
        self.ws = os.path.abspath(ws)
        self.mid = mid
        self.violations = []

    def bad(self, invariant, detail):
        self.violations.append("%s: %s" % (invariant, detail))

    def git(self, *args, ok=False, stdin=None):
        p = subprocess.run(["git", "-C", self.ws] + list(args), input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0 and not ok:
            raise RuntimeError("git %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout if p.returncode == 0 else None

    def objects(self, names):
        """name -> object id (None when missing), one `git cat-file` for all."""
        if not names:
            return {}
        out = self.git("cat-file", "--batch-check=%(objectname)", stdin="\n".join(names) + "\n")
        ids = out.splitlines()
        return {n: (None if i.endswith("missing") or " " in i else i) for n, i in zip(names, ids)}

    def load_json(self, path, what):
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            self.bad(what, "%s: %s" % (path, e))
            return None

    # ---- the pieces ------------------------------------------------------

    def setup(self):
        self.active = None
        ap = os.path.join(self.ws, ".aka/active_episode.json")
        if os.path.exists(ap):
            if not self.mid:
                self.bad("clean stop", ".aka/active_episode.json is left after the campaign stopped")
            self.active = self.load_json(ap, "active record") or {}
        camp = os.path.join(self.ws, ".aka/campaign.json")
        self.kernel = None
        if os.path.exists(camp):
            doc = self.load_json(camp, "campaign") or {}
            self.kernel = doc.get("kernel")
        self.head = (self.git("rev-parse", "--verify", "-q", "HEAD", ok=True) or "").strip()
        if not self.head or not self.kernel:
            if not self.mid:
                self.bad("workspace", "no HEAD commit or no .aka/campaign.json kernel name")
            return False
        return True

    def history(self):
        """HEAD's first-parent line, oldest first: dicts of oid, parent, author, subject, files."""
        out = self.git("log", "--first-parent", "--reverse", "--no-renames", "--name-only",
                       "--format=%x01%H%x00%P%x00%an%x00%s", "HEAD")
        commits = []
        for chunk in out.split("\x01")[1:]:
            head, _, files = chunk.partition("\n")
            oid, parents, author, subject = head.split("\x00")
            commits.append({"oid": oid, "parent": parents.split(" ")[0] if parents else "",
                            "author": author, "subject": subject,
                            "files": sorted(f for f in files.split("\n") if f)})
        return commits

    def records(self):
        """version -> record for the committed files; checks contiguity and disk == HEAD."""
        tracked = {}
        for name in (self.git("ls-tree", "--name-only", "HEAD", "memory/") or "").split():
            m = VERSION_FILE.match(os.path.basename(name))
            if m:
                tracked[int(m.group(1))] = name
        mdir = os.path.join(self.ws, "memory")
        on_disk = {}
        for name in (os.listdir(mdir) if os.path.isdir(mdir) else []):
            m = VERSION_FILE.match(name)
            if m:
                on_disk[int(m.group(1))] = "memory/" + name
        if tracked and sorted(tracked) != list(range(len(tracked))):
            self.bad("versions", "committed versions are not v0..vN without gaps: %s"
                     % sorted(tracked))
        self.latest = max(tracked) if tracked else -1
        for v in sorted(set(on_disk) - set(tracked)):
            allowed = self.mid and v == self.latest + 1 and (
                (self.active and self.active.get("memory_version") == v) or v == 0)
            if not allowed:
                self.bad("versions", "memory/v%d.json exists but is not committed at HEAD" % v)
        for v in sorted(set(tracked) - set(on_disk)):
            self.bad("versions", "memory/v%d.json is committed but missing on disk" % v)
        recs = {}
        for v, name in sorted(tracked.items()):
            committed = self.git("show", "HEAD:" + name)
            path = os.path.join(self.ws, name)
            if os.path.exists(path):
                with open(path) as f:
                    if f.read() != committed:
                        self.bad("versions", "%s differs from its committed copy" % name)
            try:
                rec = json.loads(committed)
            except ValueError as e:
                self.bad("versions", "%s does not parse: %s" % (name, e))
                continue
            if rec.get("version") != "v%d" % v:
                self.bad("versions", "%s says version %r" % (name, rec.get("version")))
            if rec.get("status") not in ALL_STATUSES:
                self.bad("versions", "%s has status %r" % (name, rec.get("status")))
            recs[v] = rec
        if 0 in recs and recs[0].get("status") != "baseline":
            self.bad("versions", "v0 has status %r, expected baseline" % recs[0].get("status"))
        return recs

    def check_commit(self, c, recs, added):
        kind = next(((k, m) for k, rx in KINDS for m in [rx.match(c["subject"])] if m), None)
        if c["author"] != SUPERVISOR:
            self.bad("history", "commit %.12s \"%s\" is by %s, not the supervisor"
                     % (c["oid"], c["subject"], c["author"]))
        if kind is None:
            self.bad("history", "commit %.12s \"%s\" is not one of the supervisor's commit kinds"
                     % (c["oid"], c["subject"]))
            return
        name, m = kind
        mem = [f for f in c["files"] if f.startswith("memory/")]
        for f in mem:
            vm = VERSION_FILE.match(os.path.basename(f))
            if vm:
                added.setdefault(int(vm.group(1)), []).append(c)
        if name in ("promotion", "outcome"):
            v = int(m.group(1)) if name == "outcome" else None
            versions = [int(VERSION_FILE.match(os.path.basename(f)).group(1))
                        for f in mem if VERSION_FILE.match(os.path.basename(f))]
            if len(versions) != 1:
                self.bad("history", "commit %.12s \"%s\" changes %s, expected one memory record"
                         % (c["oid"], c["subject"], c["files"]))
                return
            v = versions[0] if v is None else v
            want = ["memory/v%d.json" % v]
            if name == "promotion":
                want = sorted(want + [self.kernel])
            if c["files"] != want:
                self.bad("history", "commit %.12s \"%s\" changes %s, expected exactly %s%s"
                         % (c["oid"], c["subject"], c["files"], want,
                            "" if name == "promotion" else " (the kernel only moves on promotion)"))
            rec = recs.get(v) or {}
            ep = (rec.get("episode") or {}).get("number")
            status = "promoted" if name == "promotion" else m.group(3)
            number = int(m.group(1) if name == "promotion" else m.group(2))
            if rec.get("status") != status or ep != number:
                self.bad("history", "commit %.12s \"%s\" holds v%d with status %r, episode %r"
                         % (c["oid"], c["subject"], v, rec.get("status"), ep))
            c["version"] = v

    def check_history(self, commits, recs):
        added = {}
        for c in commits:
            self.check_commit(c, recs, added)
        for v in sorted(recs):
            n = len(added.get(v, []))
            if n != 1:
                self.bad("versions", "memory/v%d.json is touched by %d commits on HEAD's line, "
                         "expected exactly one" % (v, n))
        if commits and not KINDS[0][1].match(commits[0]["subject"]):
            self.bad("history", "the root commit is \"%s\", expected the V0 source commit"
                     % commits[0]["subject"])
        return added

    def check_episodes(self, recs):
        eps = [(v, r) for v, r in sorted(recs.items()) if r.get("status") in EPISODE_STATUSES]
        numbers = [(r.get("episode") or {}).get("number") for _, r in eps]
        if numbers != list(range(1, len(eps) + 1)):
            self.bad("episodes", "episode numbers in version order are %s, expected 1..%d"
                     % (numbers, len(eps)))
        if eps and [v for v, _ in eps] != list(range(eps[0][0], eps[-1][0] + 1)):
            self.bad("episodes", "episode versions are not contiguous: %s" % [v for v, _ in eps])
        if eps and eps[-1][0] != self.latest:
            self.bad("episodes", "a non-episode version follows the episodes")
        return eps

    def check_incumbent(self, commits, recs, added):
        if self.mid and commits and commits[-1]["subject"].startswith(("V0: baseline kernel",
                                                                       "v1: framework baseline")):
            return  # the V0/V1 kernel is committed, its record not yet: resume finishes it
        inc = [v for v in sorted(recs) if recs[v].get("status") in INCUMBENT_STATUSES]
        if not inc:
            if not self.mid or recs:
                self.bad("incumbent", "no baseline, V1 or promoted version")
            return
        k = self.kernel
        names = ["HEAD:" + k]
        for v in inc:
            h = recs[v].get("git_commit_hash")
            if not isinstance(h, str) or not re.match(r"^[0-9a-f]{40}$", h):
                self.bad("incumbent", "v%d (%s) has no commit hash" % (v, recs[v].get("status")))
                continue
            names.append(h + ":" + k)
            if recs[v]["status"] == "promoted":
                names += [c["oid"] + ":" + k for c in added.get(v, [])]
        ids = self.objects(names)
        latest = inc[-1]
        h = recs[latest].get("git_commit_hash")
        if h and ids.get(h + ":" + k) != ids["HEAD:" + k]:
            self.bad("incumbent", "HEAD's %s is not the kernel of the incumbent v%d (%s, %s)"
                     % (k, latest, recs[latest]["status"], h[:12]))
        for v in inc:
            h = recs[v].get("git_commit_hash")
            if not h:
                continue
            if recs[v]["status"] == "promoted":
                for c in added.get(v, []):
                    if ids.get(h + ":" + k) is None or ids.get(h + ":" + k) != ids.get(
                            c["oid"] + ":" + k):
                        self.bad("incumbent", "promotion commit %.12s of v%d does not hold the "
                                 "kernel of its candidate %.12s" % (c["oid"], v, h))
            elif self.git("merge-base", "--is-ancestor", h, "HEAD", ok=True) is None:
                self.bad("incumbent", "v%d's commit %.12s is not an ancestor of HEAD" % (v, h))

    def check_ledger(self, commits):
        path = os.path.join(self.ws, ".aka/commits.json")
        if not commits:
            return
        led = self.load_json(path, "ledger") if os.path.exists(path) else None
        if led is None:
            self.bad("ledger", "%s is missing or unreadable" % path)
            return
        recorded = set(led.get("commits") or [])
        intent = led.get("intent") or {}
        for i, c in enumerate(reversed(commits)):
            if c["oid"] in recorded:
                continue
            if self.mid and i == 0 and self.matches(c, intent):
                continue
            self.bad("ledger", "commit %.12s \"%s\" is not in the ledger" % (c["oid"], c["subject"]))
        vc = (self.active or {}).get("version_commit")
        if vc and self.latest == (self.active or {}).get("memory_version") and commits and \
                commits[-1].get("version") == self.latest and not self.matches(commits[-1], vc):
            self.bad("ledger", "HEAD %.12s is v%d but not the active record's version_commit %s"
                     % (commits[-1]["oid"], self.latest, vc))

    def matches(self, c, intent):
        if not intent:
            return False
        tree = (self.git("rev-parse", c["oid"] + "^{tree}") or "").strip()
        return (c["parent"] == intent.get("parent") and tree == intent.get("tree")
                and c["subject"] == intent.get("subject"))

    def check_counters(self, eps):
        sp = os.path.join(self.ws, ".aka/state.json")
        st = self.load_json(sp, "counters") if os.path.exists(sp) else {}  # missing: all zero
        if st is None:
            return
        options = [eps]
        # A version committed but not yet counted: the active record's own, cleanup pending.
        if self.mid and self.active and eps and eps[-1][0] == self.active.get("memory_version"):
            options.append(eps[:-1])
        errors = []
        for e in options:
            want = {"episodes": len(e)}
            for c in COUNTER_OF.values():
                want[c] = 0
            for _, r in e:
                want[COUNTER_OF[r["status"]]] += 1
            tail = 0
            for _, r in reversed(e):
                if r["status"] == "promoted":
                    break
                tail += 1
            want["consecutive_without_promotion"] = tail
            diff = {k: (st.get(k), w) for k, w in want.items() if st.get(k, 0) != w}
            if not diff:
                return
            errors.append(diff)
        self.bad("counters", "state.json disagrees with the records (key: (state, records)): %s"
                 % errors[0])

    def check_active(self, commits):
        a = self.active
        if a is None:
            return
        v, base = a.get("memory_version"), a.get("base_commit")
        head_parent = commits[-1]["parent"] if commits else ""
        if v == self.latest + 1:
            if base != self.head:
                self.bad("active record", "v%s is not committed yet but its base %.12s is not HEAD "
                         "%.12s" % (v, base, self.head))
        elif v == self.latest and commits and commits[-1].get("version") == v:
            if base != head_parent:
                self.bad("active record", "v%s is committed at HEAD but its base %.12s is not "
                         "HEAD's parent" % (v, base))
        else:
            self.bad("active record", "names v%s while the latest committed version is v%d"
                     % (v, self.latest))

    def check_worktrees(self):
        out = self.git("worktree", "list", "--porcelain")
        paths = [line[9:] for line in out.splitlines() if line.startswith("worktree ")]
        extra = [p for p in paths if os.path.realpath(p) != os.path.realpath(self.ws)]
        parent, name = os.path.split(self.ws)
        wdir = os.path.join(parent, ".aka-worktrees", name)
        extra_dirs = [os.path.join(wdir, d) for d in (os.listdir(wdir) if os.path.isdir(wdir)
                                                      else [])]
        allowed = set()
        if self.mid and self.active and self.active.get("worktree"):
            # the episode's own repository and the read-only view beside it (candidate.c)
            allowed.add(os.path.realpath(self.active["worktree"]))
            allowed.add(os.path.realpath(self.active["worktree"] + ".view"))
        for p in sorted(set(extra) | set(extra_dirs)):
            if os.path.realpath(p) not in allowed:
                self.bad("worktrees", "%s is left over (%s)" % (
                    p, "registered" if p in extra else "directory only"))

    def check_clean(self):
        if self.mid:
            return
        out = self.git("status", "--porcelain", "--untracked-files=all")
        if out.strip():
            self.bad("clean stop", "git status is not clean:\n  " + out.strip().replace("\n", "\n  "))

    def run(self):
        if not os.path.isdir(os.path.join(self.ws, ".git")):
            if not self.mid:
                self.bad("workspace", "%s is not a git workspace" % self.ws)
            return
        if not self.setup():
            self.check_worktrees()
            return
        commits = self.history()
        recs = self.records()
        added = self.check_history(commits, recs)
        eps = self.check_episodes(recs)
        self.check_incumbent(commits, recs, added)
        self.check_ledger(commits)
        self.check_counters(eps)
        self.check_active(commits)
        self.check_worktrees()
        self.check_clean()


def main(argv):
    args = [a for a in argv if a != "--mid-campaign"]
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write("usage: check_invariants.py [--mid-campaign] WORKSPACE\n")
        return 2
    if not os.path.isdir(args[0]):
        sys.stderr.write("check_invariants.py: %s: not a directory\n" % args[0])
        return 2
    c = Checker(args[0], "--mid-campaign" in argv)
    try:
        c.run()
    except RuntimeError as e:
        c.bad("git", str(e))
    for v in c.violations:
        print("VIOLATION %s" % v)
    return 1 if c.violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
