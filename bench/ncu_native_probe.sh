#!/usr/bin/env bash
# ncu_native_probe.sh — why `aka profile` on the native CUDA seed stalls (issue 15 must-show
# 1): on an H100 (2026-12-05) the reference runner sat at 0% CPU under Nsight Compute for
# more than 260 s, where the 2026-12-04 H200 run finished in 329 s (a stall of ~300 s, then
# the work?). In one device call (carry .devcarry): `aka profile --level survey` of
# row_sum_cuda's seed on one small shape with this tree's runtime and with two copies, each
# with one change (no pinger; runners without the seccomp filter), each cut after PROBE_S
# seconds (default 75). Every 10 s the judge's and the runners' threads are sampled:
# state, wait channel, the system call they sit in, and their descriptors. A copy made
# here, never committed: the runners always confine themselves. First, for issue 10: the
# machine's CPU quota and what the judge's fill helpers gain on it (native_fill.sh prints
# one thread against the helpers; on 2026-12-05 the helpers gained nothing inside the
# judge). Clocks never touched.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-ncu-probe} root=$PWD
mkdir -p "$out"
. bench/lib_episode.sh
ncu_on_path

{ echo "== CPUs: nproc $(nproc), cpu.max $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none)"
  cc -O2 -pthread bench/cpu_scaling.c -o /tmp/cpu_scaling && /tmp/cpu_scaling
  bash tests/integration/native_fill.sh | grep -E 'fill of|note|FAIL'; } 2>&1 | tee -a "$out/summary.txt"

# Variants (copies made here, never committed): no-pinger (the judge starts no pinger, its
# one child that never execs), no-seccomp (runners without the filter).
variant() { # NAME FILE SED-EXPRESSION GREP-CHECK
  local dir=/tmp/ncu-variants/$1
  rm -rf "$dir" && mkdir -p "$dir" && cp -a runtime "$dir/"
  sed -i "$3" "$dir/runtime/harness/native/$2"
  grep -q "$4" "$dir/runtime/harness/native/$2" ||
    echo "$1: the edit did not apply" | tee -a "$out/summary.txt"
}
variant no-pinger harness_flow.c 's/^    start_pinger(&ev);$/    ev.have_pinger = 0; \/\* probe \*\//' \
  'ev.have_pinger = 0; /\* probe'
variant no-seccomp runner_loop.c 's/if (rc == 0 \&\& install_filter() != 0) {/if (0 \&\& install_filter() != 0) {/' \
  'if (0 && install_filter'
# no-close: runners keep every descriptor the judge did not mark close-on-exec (Nsight
# Compute's tree-tracker pipes among them; 2026-12-06 all three variants above stalled)
variant no-close judge_runner.c 's/if (syscall(SYS_close_range, HP_FD + 1, ~0U, 0) != 0)/if (0 \&\& syscall(SYS_close_range, HP_FD + 1, ~0U, 0) != 0)/' \
  'if (0 && syscall(SYS_close_range'

# runner-dumpable: runners stay dumpable (each makes itself non-dumpable at its start, so
# that no other process can read its memory; inside the sandbox's user namespace, without
# capabilities, that also closes its /proc entries to the ncu front end); all-dumpable: the
# judge too.
variant runner-dumpable runner_loop.c 's/^    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);$/    (void)0; \/\* probe \*\//' \
  '(void)0; /\* probe'
variant all-dumpable runner_loop.c 's/^    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);$/    (void)0; \/\* probe \*\//' \
  '(void)0; /\* probe'
sed -i 's/if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || hx_take_stdout() < 0) {/if (hx_take_stdout() < 0) { \/\* probe \*\//' \
  /tmp/ncu-variants/all-dumpable/runtime/harness/native/judge.c
grep -q 'if (hx_take_stdout() < 0) { /\* probe' /tmp/ncu-variants/all-dumpable/runtime/harness/native/judge.c ||
  echo "all-dumpable: the judge's edit did not apply" | tee -a "$out/summary.txt"

# sample: every 10 s, each judge, runner and ncu thread's state, wait channel and system call;
# at 40 s also the judge's and runners' user stacks (user_stacks, bench/lib_episode.sh). On
# 2026-12-06 (H100) that showed the stalled reference runner inside cudaGetDeviceCount ->
# cuGetProcAddress_v2, waiting on a condition while Nsight Compute's injection threads
# waited on theirs.
sample() {
  local t=0
  while sleep 10; do
    t=$((t + 10))
    [ "$t" = 40 ] && user_stacks
    # the ncu front end too: a front end blocked writing to a full pipe would leave every
    # injected process waiting on it
    for p in $(pgrep -f '^\./(refrun|candrun|judge plan)') $(pgrep -x ncu); do
      echo "--- $(date -u +%T) pid $p $(tr '\0' ' ' <"/proc/$p/cmdline")"
      for t in /proc/"$p"/task/*; do
        echo "  task ${t##*/} $(awk '{print $3}' "$t/stat") wchan=$(cat "$t/wchan" 2>/dev/null)" \
          "syscall=$(cut -c1-60 "$t/syscall" 2>/dev/null)"
      done
      ls -l "/proc/$p/fd" 2>/dev/null | awk 'NR > 1 {print "  fd", $9, $11}'
    done
  done
}

for name in ${VARIANTS:-tree no-pinger no-seccomp no-close runner-dumpable all-dumpable}; do
  v=/tmp/ncu-variants/$name
  [ "$name" = tree ] && v=$root
  episode row_sum_cuda seeds/Cuda/kernel.cu Cuda "$AKA_PLATFORM" bwrap
  sample >"$out/$name.sample" 2>&1 &
  watcher=$!
  start=$(date +%s)
  (cd "$WT" && ATREX_AKA_HOME=$v ATREX_AKA_WORKSPACE=$WS ATREX_AKA_EPISODE=e0001 \
    timeout -s INT "${PROBE_S:-75}" aka profile --shape-id r1024_c1024 --level survey \
    --chip "$AKA_CHIP" --kernel-regex '^row_sum\(' --json >"$out/$name.json" 2>"$out/$name.err")
  echo "== $name: exit $? after $(($(date +%s) - start)) s" | tee -a "$out/summary.txt"
  kill "$watcher" 2>/dev/null
  head -c 6000 "$out/$name.sample" | tee -a "$out/summary.txt"
  tail -5 "$out/$name.err" | tee -a "$out/summary.txt"
done
# At most 8 files come back from a device call: the variants' files travel as one archive.
(cd "$out" && tar -czf variants.tgz ./*.sample ./*.json ./*.err && rm -f ./*.sample ./*.json ./*.err)
