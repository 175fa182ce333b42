#!/usr/bin/env bash
# sandbox_overhead.sh — per-job overhead of the local sandbox (issue 3, item 4).
#
# usage: bench/sandbox_overhead.sh [AKA_BIN] [RUNS]   (defaults: build/aka, 100)
#
# Each run is one `aka sandbox run --json` that ships a typical evaluator
# allowlist of five small files and runs /bin/true, so everything measured is
# overhead: job directory creation, copying the allowlist in, the bwrap
# namespace setup and teardown, artifact/cleanup work and removal of the job
# directory. Two views are reported:
#   - in-process, from the result's own timing (monotonic clock inside aka):
#     setup (mkdtemp, copies, generated /etc files, argv, pids cgroup),
#     run (fork/exec of bwrap until it is reaped, /bin/true included),
#     cleanup (job dir and cgroup removal), and their sum, the per-job overhead
#     a campaign pays for every candidate evaluation;
#   - end to end, bash's $EPOCHREALTIME around the whole `aka` process
#     (adds process start, argument parsing and JSON printing).
# References measured the same way: the same job without the pids cgroup
# (--pids-max 0: moving a process into a cgroup costs an RCU grace period), with
# --sandbox-isolation none (no bwrap), and `aka --version` (process start only).
set -euo pipefail

AKA=${1:-build/aka}
RUNS=${2:-100}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aka-bench-sbx.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/op" "$WORK/sbx" "$WORK/json"

# A typical allowlist: kernel, reference, input builder, shapes, harness (1-4 KiB each).
for f in kernel.py:2048 reference.py:1536 input.py:1024 shapes.json:512 harness.py:4096; do
    head -c "${f#*:}" /dev/urandom | base64 >"$WORK/op/${f%%:*}"
done
INPUTS=()
for f in "$WORK"/op/*; do INPUTS+=(--input "$f"); done

now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
# CPU (user + sys, ms) of every reaped child of this shell so far: aka and, since
# aka waits for it, bwrap and the job. Tick-granular, so only totals are used.
children_cpu_ms() {
    local u s
    times >"$WORK/times" # in this shell: $(times) would report a subshell's children
    tail -1 "$WORK/times" >"$WORK/times.children"
    read -r u s <"$WORK/times.children"
    python3 -c 'import re,sys
def ms(t):
    m, s = re.match(r"(\d+)m([\d.]+)s", t).groups()
    return (int(m) * 60 + float(s)) * 1000
print(round(ms(sys.argv[1]) + ms(sys.argv[2]), 1))' "$u" "$s"
}

# run_series NAME ARGS... : RUNS timed runs, JSON kept per run, e2e times in NAME.e2e
run_series() {
    local name=$1
    shift
    for _ in 1 2 3; do "$AKA" "$@" >/dev/null 2>&1 || true; done # warm caches
    : >"$WORK/$name.e2e"
    local cpu0
    children_cpu_ms >"$WORK/cpu0"
    cpu0=$(cat "$WORK/cpu0")
    for i in $(seq "$RUNS"); do
        local t0 t1
        t0=$(now_us)
        "$AKA" "$@" >"$WORK/json/$name.$i.json" 2>/dev/null
        t1=$(now_us)
        echo $((t1 - t0)) >>"$WORK/$name.e2e"
    done
    # children_cpu_ms itself forks python: measure that once and subtract it.
    local cpu1 probe0 probe1
    children_cpu_ms >"$WORK/cpu1"
    children_cpu_ms >"$WORK/probe0"
    children_cpu_ms >"$WORK/probe1"
    cpu1=$(cat "$WORK/cpu1") probe0=$(cat "$WORK/probe0") probe1=$(cat "$WORK/probe1")
    python3 -c "print(round(($cpu1 - $cpu0 - ($probe1 - $probe0)) / $RUNS, 2))" >"$WORK/$name.cpu"
}

run_series bwrap sandbox run --sandbox-tmp "$WORK/sbx" --json "${INPUTS[@]}" -- /bin/true
run_series nocg sandbox run --sandbox-tmp "$WORK/sbx" --json --pids-max 0 "${INPUTS[@]}" -- /bin/true
run_series none sandbox run --sandbox-tmp "$WORK/sbx" --json --sandbox-isolation none \
    "${INPUTS[@]}" -- /bin/true
run_series version --version

left=$(ls -A "$WORK/sbx" | wc -l)
python3 - "$WORK" "$RUNS" "$left" <<'EOF'
import glob, json, os, statistics, sys
work, runs, left = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def pct(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)

def row(name, xs):
    print(f"| {name} | {statistics.median(xs):.2f} | {pct(xs, 90):.2f} | {min(xs):.2f} | "
          f"{max(xs):.2f} |")

def timings(series):
    out = {"setup": [], "run": [], "cleanup": [], "overhead": []}
    for i in range(1, runs + 1):
        r = json.load(open(f"{work}/json/{series}.{i}.json"))
        assert r["status"] == "completed" and r["exit_code"] == 0, r
        t = r["timing"]
        ms = lambda s: s * 1000.0
        out["setup"].append(ms(t["setup_seconds"]))
        out["run"].append(ms(t["wall_seconds"]))
        out["cleanup"].append(ms(t["cleanup_seconds"]))
        out["overhead"].append(ms(t["setup_seconds"] + t["wall_seconds"] + t["cleanup_seconds"]))
    return out

def cpu(series):
    return float(open(f"{work}/{series}.cpu").read())

def e2e(series):
    return [int(x) / 1000.0 for x in open(f"{work}/{series}.e2e").read().split()]

print(f"runs per series: {runs}; load average: {os.getloadavg()[0]:.2f} "
      f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; job dirs left behind: {left}")
print()
print("| measure (ms) | median | p90 | min | max |")
print("|---|---|---|---|---|")
b = timings("bwrap")
for k, label in [("setup", "setup: job dir + 5 files + argv + cgroup"),
                 ("run", "run: bwrap start..reaped (/bin/true)"),
                 ("cleanup", "cleanup: job dir + cgroup removal"),
                 ("overhead", "**per-job overhead (sum), bwrap**")]:
    row(label, b[k])
row("end to end `aka sandbox run`, bwrap", e2e("bwrap"))
c = timings("nocg")
row("per-job overhead (sum), bwrap without pids cgroup (`--pids-max 0`)", c["overhead"])
n = timings("none")
row("per-job overhead (sum), isolation none", n["overhead"])
row("end to end, isolation none", e2e("none"))
row("`aka --version` (process start)", e2e("version"))
print()
print("CPU per run (user + sys of aka, bwrap and the job; mean over all runs, ms): "
      f"bwrap {cpu('bwrap'):.2f}, bwrap without pids cgroup {cpu('nocg'):.2f}, "
      f"isolation none {cpu('none'):.2f}, "
      f"aka --version {cpu('version'):.2f}")
EOF
