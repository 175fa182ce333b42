#!/usr/bin/env bash
# carry_parts.sh — wheels too large for one device call's 64 MiB carry (the CuteDSL and
# TileLang wheels of issue 16: nvidia-cutlass-dsl-libs-cu13 is 92 MB, tilelang 50 MB,
# z3-solver 29 MB), cut into parts that travel over several calls to one warm machine.
#
#   bench/carry_parts.sh split DIR [MIB]   here: every file of DIR cut into MIB-sized
#       pieces (default 56), dealt into .carry1/, .carry2/, ... (ignored by git), each
#       under MIB; .carry1/MANIFEST lists every file with its sha256 and piece count.
#       Carry .carry1 in the first call, .carry2 in the next, and so on: what an earlier
#       call brought stays on a machine that is still warm (ignored paths are kept; the
#       device lets a machine go after about 30 s idle, so make the calls back to back,
#       each carrying one part and a trivial command, and .devcarry with the last).
#       For the wheels listed above this made five parts (2.7, 57, 32, 48 and 28 MiB).
#   bench/carry_parts.sh join OUT          there: once every piece is present, the files
#       put together into OUT and checked against MANIFEST; exit 0 when all are whole,
#       1 naming what is missing or wrong (nothing is installed here: pip does that).
set -euo pipefail
cd "$(dirname "$0")/.."

split_dir() {
    local dir=$1 mib=${2:-56} bin=1 used=0 f base size n
    rm -rf .carry[0-9]*
    mkdir -p .carry1
    : >.carry1/MANIFEST
    for f in "$dir"/*; do
        [ -f "$f" ] || continue
        base=$(basename "$f")
        size=$(stat -c %s "$f")
        split -b "${mib}M" -d -a 2 "$f" "/tmp/carry-piece-$base."
        n=0
        for piece in /tmp/carry-piece-"$base".*; do
            size=$(stat -c %s "$piece")
            if [ $((used + size)) -gt $((mib * 1024 * 1024)) ]; then
                bin=$((bin + 1)) used=0
            fi
            mkdir -p ".carry$bin"
            mv "$piece" ".carry$bin/$(basename "$piece" | sed 's/^carry-piece-//')"
            used=$((used + size)) n=$((n + 1))
        done
        printf '%s %s %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$n" "$base" >>.carry1/MANIFEST
    done
    du -sh .carry[0-9]*
}

join_dir() {
    local out=$1 bad=0 sum n base have
    [ -f .carry1/MANIFEST ] || { echo "no .carry1/MANIFEST here"; return 1; }
    mkdir -p "$out"
    while read -r sum n base; do
        have=$(ls .carry[0-9]*/"$base".[0-9][0-9] 2>/dev/null | wc -l)
        if [ "$have" -ne "$n" ]; then
            echo "$base: $have of $n pieces here"; bad=1; continue
        fi
        : >"$out/$base"
        for i in $(seq -f %02g 0 $((n - 1))); do cat .carry[0-9]*/"$base.$i" >>"$out/$base"; done
        [ "$(sha256sum "$out/$base" | cut -d' ' -f1)" = "$sum" ] ||
            { echo "$base: sha256 differs"; bad=1; }
    done <.carry1/MANIFEST
    return $bad
}

case "${1:-}" in
split) split_dir "$2" "${3:-56}" ;;
join) join_dir "$2" ;;
*) echo "usage: $0 split DIR [MIB] | join OUT" >&2; exit 2 ;;
esac
