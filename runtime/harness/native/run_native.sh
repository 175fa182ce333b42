#!/bin/bash
# run_native.sh — builds aka's native harness with an operator's reference and a
# candidate kernel, checks the candidate object, links, and runs the harness.
# It runs inside the sandbox job directory, where aka shipped (read-only):
#   aka_native_abi.h harness_core.h harness_plan.c harness_data.c harness_flow.c harness_guard.c
#   harness.c | harness_cuda.cu   forbidden_symbols.txt   run_native.sh
#   reference.c | reference.cu    kernel.c | kernel.cu    plan.json
#
# usage: bash run_native.sh c|cuda ARCH ENTRY REF_ENTRY -- OP_FLAG... -- KNOB_FLAG...
#   ARCH       nvcc -arch value (sm_90, ...); ignored for c
#   ENTRY      the candidate's entry symbol; REF_ENTRY the reference's
#   OP_FLAG    operator.json "cflags" (reference and kernel); KNOB_FLAG -DNAME=VALUE
#              (kernel only). Every flag is one argv word: nothing is re-split or
#              evaluated by a shell, so a knob value cannot inject a command.
#
# Exit status (evaluate.c maps it):
#   0, 1   the harness ran: RESULT_JSON on stdout, 0 iff every case passed
#   2      the harness could not read plan.json        3  the reference failed at run time
#   4      no memory/device before any kernel code ran
#   10     a tool is missing (cc, nvcc, nm, objcopy, readelf)
#   11     the harness or the reference does not build (not the candidate's fault)
#   12     the candidate does not compile              13 the candidate object breaks the rules
#   14     the candidate does not link
# A progress line "aka-native: stage=NAME" goes to stderr before each stage.
set -u
export LC_ALL=C

lang=$1 arch=$2 entry=$3 ref_entry=$4
shift 4
[ "${1:-}" = "--" ] || { echo "aka-native: usage error" >&2; exit 2; }
shift
op_flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do op_flags+=("$1"); shift; done
[ $# -gt 0 ] && shift
knobs=("$@")

stage() { echo "aka-native: stage=$1" >&2; }
die() { echo "aka-native: $2" >&2; exit "$1"; }

CAND=aka_harness_candidate_entry
REF=aka_harness_reference_entry
CC=${CC:-cc}
HFLAGS=(-std=c11 -O2 -Wall -Wextra)
tools=("$CC" nm objcopy readelf)
[ "$lang" = cuda ] && tools+=(nvcc)
for t in "${tools[@]}"; do
    command -v "$t" >/dev/null 2>&1 || die 10 "'$t' is not available inside the sandbox"
done
if [ "$lang" = cuda ]; then
    ext=cu
    NVFLAGS=(-std=c++17 -arch="$arch")
else
    ext=c
fi

# Compile the trusted part first: a failure here is never the candidate's.
stage harness
if [ "$ext" = cu ]; then
    $CC "${HFLAGS[@]}" -c harness_plan.c harness_data.c harness_flow.c harness_guard.c || die 11 "the harness does not build"
    nvcc "${NVFLAGS[@]}" -O2 -c harness_cuda.cu -o harness_main.o || die 11 "the CUDA harness does not build"
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" -c reference.cu -o reference.o || die 11 "reference.cu does not build"
else
    $CC "${HFLAGS[@]}" -c harness_plan.c harness_data.c harness_flow.c harness_guard.c harness.c || die 11 "the harness does not build"
    mv harness.o harness_main.o
    $CC -std=c11 "${op_flags[@]}" -c reference.c -o reference.o || die 11 "reference.c does not build"
fi

stage compile
if [ "$ext" = cu ]; then
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" "${knobs[@]}" -c kernel.cu -o kernel.o || exit 12
else
    $CC -std=c11 "${op_flags[@]}" "${knobs[@]}" -c kernel.c -o kernel.o || exit 12
fi

# The object rules (docs/evaluator.md, "Native C and CUDA harness").
stage symbols
defines() { nm -P --defined-only "$1" | awk -v s="$2" '$1 == s && $2 == "T" { f = 1 } END { exit !f }'; }
defines reference.o "$ref_entry" || die 11 "reference.$ext does not define the function '$ref_entry'"
defines kernel.o "$entry" || die 13 "kernel.$ext does not define the function '$entry' (a global, non-static function with C linkage)"
grep -v '^#' forbidden_symbols.txt | grep -v '^$' > forbidden.re
bad=$(nm -P -u kernel.o | awk '{print $1}' | grep -Exf forbidden.re | sort -u | tr '\n' ' ')
[ -z "$bad" ] || die 13 "kernel.$ext calls ${bad% }: a kernel may not read files, the environment or the clock, start processes, use the network, end the process, or leave params->stream (see forbidden_symbols.txt)"
if [ "$ext" = c ]; then
    readelf -S -W kernel.o | grep -Eq '\.(preinit_array|init_array|ctors|fini_array|dtors)' &&
        die 13 "kernel.c has constructors or destructors (code that runs outside the entry point)"
else
    # nvcc objects carry C++ names (_Z...) and one unwind helper; any other global is a
    # C-linkage symbol that could stand in for a library function the harness calls.
    extra=$(nm -P -g --defined-only kernel.o | awk '$2 ~ /[A-Z]/ {print $1}' |
        grep -v -e '^_Z' -e '^DW\.ref\.' | grep -vxF "$entry" | tr '\n' ' ')
    [ -z "$extra" ] || die 13 "kernel.cu defines global C-linkage symbols other than '$entry': ${extra% } (make them static)"
fi

# Rename both entry points to private names; in C, make every other symbol of the two
# objects local, so neither can replace a function of the harness or of libc.
objcopy --redefine-sym "$entry=$CAND" kernel.o kernel.r.o || die 13 "objcopy failed on kernel.o"
objcopy --redefine-sym "$ref_entry=$REF" reference.o reference.r.o || die 11 "objcopy failed on reference.o"
if [ "$ext" = c ]; then
    objcopy --keep-global-symbol="$CAND" kernel.r.o || die 13 "objcopy failed on kernel.o"
    objcopy --keep-global-symbol="$REF" reference.r.o || die 11 "objcopy failed on reference.o"
fi

stage link
objs=(harness_main.o harness_plan.o harness_data.o harness_flow.o harness_guard.o reference.r.o kernel.r.o)
if [ "$ext" = cu ]; then
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" -o harness "${objs[@]}" -ljansson -lm || exit 14
else
    $CC "${op_flags[@]}" -o harness "${objs[@]}" -ljansson -lm || exit 14
fi

stage run
exec ./harness plan.json
