#!/bin/bash
# run_native.sh — builds aka's native judge and its two runners, checks the
# candidate object, and runs the judge. It runs inside the sandbox job directory,
# where aka shipped (read-only):
#   aka_native_abi.h harness_core.h harness_proto.h runner.h
#   harness_plan.c harness_data.c harness_io.c harness_flow.c harness_timing.c
#   harness_result.c judge_runner.c judge.c runner_loop.c
#   runner_cpu.c | runner_cuda.cu   forbidden_symbols.txt   run_native.sh
#   reference.c | reference.cu    kernel.c | kernel.cu    plan.json
#
# Three programs, three processes:
#   judge    the harness sources only: no reference, no candidate object
#   refrun   the runner loop + the operator's reference
#   candrun  the runner loop + the candidate kernel
# The judge runs refrun to completion, then candrun, and alone prints RESULT_JSON.
#
# usage: bash run_native.sh [--profiler N WORD...] c|cuda ARCH ENTRY REF_ENTRY -- OP_FLAG... -- KNOB_FLAG...
#   --profiler N WORD...  `aka profile`: the judge (and through it the runners) runs
#              under this N-word command (the supervisor's profiler line, export flag
#              included); the builds before it do not, since they launch no kernel
#   ARCH       nvcc -arch value (sm_90, ...); ignored for c
#   ENTRY      the candidate's entry symbol; REF_ENTRY the reference's
#   OP_FLAG    operator.json "cflags" (reference and kernel); KNOB_FLAG -DNAME=VALUE
#              (kernel only). Every flag is one argv word: nothing is re-split or
#              evaluated by a shell, so a knob value cannot inject a command.
#
# Exit status (evaluate.c maps it):
#   0, 1   the judge ran: RESULT_JSON on stdout, 0 iff every case passed
#   2      the judge could not read plan.json          3  the reference failed at run time
#   4      no memory/device before any kernel code ran
#   10     a tool is missing (cc, nvcc, nm, objcopy, readelf)
#   11     the judge, a runner or the reference does not build (not the candidate's fault)
#   12     the candidate does not compile              13 the candidate object breaks the rules
#   14     the candidate does not link
# A progress line "aka-native: stage=NAME" goes to stderr before each stage.
set -u
export LC_ALL=C

profiler=()
if [ "${1:-}" = --profiler ]; then
    # At most four digits: `aka profile --metric` is repeatable (two words each) and the
    # broker passes up to 32 metrics; the count only guards bash's arithmetic.
    [[ "${2:-}" =~ ^[1-9][0-9]{0,3}$ ]] && [ $# -gt $((2 + $2)) ] ||
        { echo "aka-native: usage error (--profiler N WORD...)" >&2; exit 2; }
    profiler=("${@:3:$2}")
    shift $((2 + $2))
fi
lang=$1 arch=$2 entry=$3 ref_entry=$4
shift 4
[ "${1:-}" = "--" ] || { echo "aka-native: usage error" >&2; exit 2; }
shift
op_flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do op_flags+=("$1"); shift; done
[ $# -gt 0 ] && shift
knobs=("$@")

# Each stage line is preceded by the seconds since the script started (`aka eval -v`
# shows where a slow evaluation's time went); the stage line itself stays exact, aka
# finds a failing stage's compiler messages after it.
started=$(date +%s%N)
stage() {
    echo "aka-native: at=$((($(date +%s%N) - started) / 1000000))ms" >&2
    echo "aka-native: stage=$1" >&2
}
die() { echo "aka-native: $2" >&2; exit "$1"; }

RUN=aka_runner_entry
CC=${CC:-cc}
HFLAGS=(-std=c11 -O2 -Wall -Wextra)
JUDGE=(harness_plan.c harness_data.c harness_io.c harness_flow.c harness_timing.c
    harness_result.c judge_runner.c judge.c)
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

# The trusted programs first: a failure here is never the candidate's. The judge builds
# in the background while the rest compiles (its messages wait in judge.log).
stage harness
# One translation unit (the headers parse once: a third less compile time, and the judge
# is the longest build); tests/integration/eval_native.sh keeps the concatenation clean.
cat "${JUDGE[@]}" >judge_all.c
$CC "${HFLAGS[@]}" -pthread -o judge judge_all.c -ljansson -lm >judge.log 2>&1 &
judge_build=$!
trap 'kill "$judge_build" 2>/dev/null' EXIT # an early exit (status 11-14) stops it
$CC "${HFLAGS[@]}" -c runner_loop.c || die 11 "the runner does not build"
if [ "$ext" = cu ]; then
    nvcc "${NVFLAGS[@]}" -O2 -c runner_cuda.cu -o runner_target.o || die 11 "the CUDA runner does not build"
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" -c reference.cu -o reference.o || die 11 "reference.cu does not build"
else
    $CC "${HFLAGS[@]}" -c runner_cpu.c -o runner_target.o || die 11 "the runner does not build"
    $CC -std=c11 "${op_flags[@]}" -c reference.c -o reference.o || die 11 "reference.c does not build"
fi

stage compile
if [ "$ext" = cu ]; then
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" "${knobs[@]}" -c kernel.cu -o kernel.o || exit 12
else
    $CC -std=c11 "${op_flags[@]}" "${knobs[@]}" -c kernel.c -o kernel.o || exit 12
fi

# The object rules (docs/evaluator.md, "Native C and CUDA harness"). They are a first
# layer only: the judge never shares a process with the kernel, whatever it calls.
stage symbols
defines() { nm -P --defined-only "$1" | awk -v s="$2" '$1 == s && $2 == "T" { f = 1 } END { exit !f }'; }
defines reference.o "$ref_entry" || die 11 "reference.$ext does not define the function '$ref_entry'"
defines kernel.o "$entry" || die 13 "kernel.$ext does not define the function '$entry' (a global, non-static function with C linkage)"
grep -v '^#' forbidden_symbols.txt | grep -v '^$' > forbidden.re
bad=$(nm -P -u kernel.o | awk '{print $1}' | grep -Exf forbidden.re | sort -u | tr '\n' ' ')
[ -z "$bad" ] || die 13 "kernel.$ext calls ${bad% }: a kernel may not read files, the environment or the clock, start processes, use the network, end the process, or leave params->stream (see forbidden_symbols.txt)"
# A global definition of a function the runner takes from a library, or of a forbidden
# one, is an interposition attempt (a clock_gettime of its own): refused by name.
nm -P -u runner_loop.o runner_target.o | awk 'NF > 1 {print $1}' | sort -u > runner_imports.txt
nm -P -g --defined-only kernel.o | awk '$2 ~ /[A-Z]/ {print $1}' | grep -vxF "$entry" > kernel_defs.txt
clash=$({ grep -xF -f runner_imports.txt kernel_defs.txt; grep -Exf forbidden.re kernel_defs.txt; } |
    sort -u | tr '\n' ' ')
[ -z "$clash" ] || die 13 "kernel.$ext defines ${clash% }: functions of the C library or the runner may not be replaced (interposition); make them static or rename them"
if [ "$ext" = c ]; then
    readelf -S -W kernel.o | grep -Eq '\.(preinit_array|init_array|ctors|fini_array|dtors)' &&
        die 13 "kernel.c has constructors or destructors (code that runs outside the entry point)"
else
    # nvcc objects carry C++ names (_Z...) and one unwind helper; any other global is a
    # C-linkage symbol that could stand in for a library function the runner calls.
    extra=$(nm -P -g --defined-only kernel.o | awk '$2 ~ /[A-Z]/ {print $1}' |
        grep -v -e '^_Z' -e '^DW\.ref\.' | grep -vxF "$entry" | tr '\n' ' ')
    [ -z "$extra" ] || die 13 "kernel.cu defines global C-linkage symbols other than '$entry': ${extra% } (make them static)"
fi

# Rename both entry points to the runner's; in C, make every other symbol of the two
# objects local, so neither can replace a function of the runner or of libc.
objcopy --redefine-sym "$entry=$RUN" kernel.o kernel.r.o || die 13 "objcopy failed on kernel.o"
objcopy --redefine-sym "$ref_entry=$RUN" reference.o reference.r.o || die 11 "objcopy failed on reference.o"
if [ "$ext" = c ]; then
    objcopy --keep-global-symbol="$RUN" kernel.r.o || die 13 "objcopy failed on kernel.o"
    objcopy --keep-global-symbol="$RUN" reference.r.o || die 11 "objcopy failed on reference.o"
fi

stage link
if [ "$ext" = cu ]; then
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" -o refrun runner_loop.o runner_target.o reference.r.o -lm ||
        die 11 "the reference runner does not link"
    nvcc "${NVFLAGS[@]}" "${op_flags[@]}" -o candrun runner_loop.o runner_target.o kernel.r.o -lm || exit 14
else
    $CC "${op_flags[@]}" -o refrun runner_loop.o runner_target.o reference.r.o -lm ||
        die 11 "the reference runner does not link"
    $CC "${op_flags[@]}" -o candrun runner_loop.o runner_target.o kernel.r.o -lm || exit 14
fi

if ! wait "$judge_build"; then
    stage harness
    cat judge.log >&2
    die 11 "the judge does not build"
fi
cat judge.log >&2
trap - EXIT
stage run
exec "${profiler[@]}" ./judge plan.json "$lang"
