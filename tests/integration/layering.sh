#!/usr/bin/env bash
# layering.sh — the module dependency order of DESIGN §2, enforced.
#
#   base → contracts → {git, platform} → workspace → sandbox → {evaluator, agents, policy, profile, wiki, gateway}
#        → bootstrap → optimize → {report, recovery, doctor} → cmd → core
#
# (agents above sandbox: the agent sandbox builds its bwrap argv with sandbox's view.)
#
# A module may include only modules of a lower rank (never one of its own
# rank), so the graph has no cycles. Also: only base/ may call fork/exec or
# rename(2) directly — process and atomic-file plumbing live there; only
# evaluator/ builds evaluation jobs (the harness it ships, the jobs it runs);
# only base/opts walks a command line; and inside a module no two files depend on
# each other, directly or around a cycle (a file depends on the files that define the functions it calls).
set -euo pipefail
: "${AKA_SOURCE_DIR:?}"
cd "$AKA_SOURCE_DIR/src"
declare -A rank=([base]=0 [contracts]=1 [git]=2 [platform]=2 [workspace]=3 [sandbox]=4 [evaluator]=5 [agents]=5 [policy]=5
                 [profile]=5 [wiki]=5 [gateway]=5 [bootstrap]=6 [optimize]=7 [report]=8
                 [recovery]=8 [doctor]=8 [cmd]=9 [core]=10)
bad=0
for dir in */; do
  m=${dir%/}
  [ -n "${rank[$m]+x}" ] || { echo "layering: module '$m' has no rank in this test"; bad=1; continue; }
  while IFS= read -r line; do
    file=${line%%:*}
    dep=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$line")
    [ "$dep" = "$m" ] && continue
    if [ -z "${rank[$dep]+x}" ] || [ "${rank[$dep]}" -ge "${rank[$m]}" ]; then
      echo "layering: $file includes $dep/ (rank ${rank[$dep]:-?}), but $m has rank ${rank[$m]}"
      bad=1
    fi
  done < <(grep -HE '^#include "[a-z_]+/' "$m"/*.[ch] 2>/dev/null || true)
done
# Raw process and rename plumbing outside base/ (comments and strings aside).
if grep -nE '\b(fork|execv|execvp|execve|rename)\s*\(' --include='*.c' -r . |
    grep -v '^\./base/' | grep -vE '^\S+:\s*(\*|//)'; then
  echo "layering: raw process/rename calls outside base/ (above)"; bad=1
fi
# Evaluation jobs: the harness (runtime/harness, run_native.sh, aka_harness) is named
# in code only by evaluator/, and only evaluator/, `aka sandbox run` (cmd/sandbox.c,
# a person's own job) and the gateway's workers (gateway/, a client's job, built from its
# request and checked again by the sandbox's rules) hand jobs to a transport; everyone
# else asks the evaluator.
code_only() { grep -nE "$1" --include='*.c' --include='*.h' -r . | grep -vE '^\S+:[0-9]+:\s*(\*|//|/\*)'; }
# (policy/rules.c names the harness's symbols as a pattern candidates may not use.)
if code_only '"[^"]*(runtime/harness|run_native\.sh|aka_harness)' | grep -v '^\./evaluator/' |
    grep -v '^\./policy/rules\.c:'; then
  echo "layering: the evaluation harness is named outside evaluator/ (above)"; bad=1
fi
if code_only '\baka_sandbox_(run|job_add_file|job_add_tree)\s*\(' |
    grep -vE '^\./(evaluator|sandbox|gateway)/|^\./cmd/sandbox\.c:'; then
  echo "layering: sandbox jobs built or run outside evaluator/, gateway/ and aka sandbox run (above)"; bad=1
fi
# Command lines: only the parser (base/opts*.c) walks argv. Everyone else declares a
# flag table and calls aka_opts_parse, so no file indexes argv with a variable or runs
# a loop bounded by argc (argv[1], a subcommand's name, is fine).
if code_only '\bargv\[[A-Za-z_]|\b(for|while)\s*\(.*\bargc\b' | grep -vE '^\./base/opts(_cli)?\.c:'; then
  echo "layering: argv walked outside base/opts (above): declare a flag table instead"; bad=1
fi
# No cycles among the files of one module (comments and string literals aside).
python3 - . <<'PY' || bad=1
import os, re, sys
def strip(src):
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', ' ', src, flags=re.S)
DEF = re.compile(r'^(?!static\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{]*?\)\s*\{', re.M | re.S)
bad = 0
for m in sorted(d for d in os.listdir(sys.argv[1]) if os.path.isdir(d)):
    files = sorted(f for f in os.listdir(m) if f.endswith('.c'))
    src = {f: strip(open(os.path.join(m, f)).read()) for f in files}
    owner = {}
    for f in files:
        for name in DEF.findall(src[f]):
            owner.setdefault(name, f)
    g = {f: sorted({owner[n] for n in set(re.findall(r'\b\w+\b', src[f]))
                    if owner.get(n, f) != f}) for f in files}
    # a file is on a cycle when it can reach itself
    for f in files:
        seen, todo = set(), list(g[f])
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo.extend(g[x])
        if f in seen:
            bad = 1
            print(f"layering: {m}/{f} is on a cycle of files that call each other "
                  f"(it calls {', '.join(g[f])})")
sys.exit(bad)
PY
[ "$bad" = 0 ] && echo "layering: ok ($(ls -d */ | wc -l) modules)"
exit "$bad"
