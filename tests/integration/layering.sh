#!/usr/bin/env bash
# layering.sh — the module dependency order of DESIGN §2, enforced.
#
#   base → contracts → git → workspace → sandbox → {evaluator, agents, policy, profile, wiki, gateway}
#        → bootstrap → optimize → {report, recovery} → cmd → core
#
# (agents above sandbox: the agent sandbox builds its bwrap argv with sandbox's view.)
#
# A module may include only modules of a lower rank (never one of its own
# rank), so the graph has no cycles. Also: only base/ may call fork/exec or
# rename(2) directly — process and atomic-file plumbing live there.
set -euo pipefail
: "${AKA_SOURCE_DIR:?}"
cd "$AKA_SOURCE_DIR/src"
declare -A rank=([base]=0 [contracts]=1 [git]=2 [workspace]=3 [sandbox]=4 [evaluator]=5 [agents]=5 [policy]=5
                 [profile]=5 [wiki]=5 [gateway]=5 [bootstrap]=6 [optimize]=7 [report]=8
                 [recovery]=8 [cmd]=9 [core]=10)
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
[ "$bad" = 0 ] && echo "layering: ok ($(ls -d */ | wc -l) modules)"
exit "$bad"
