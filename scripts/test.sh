#!/usr/bin/env bash
# test.sh — README's test command (and what .ci/run calls): install
# dependencies, build the normal and the sanitizer variants, run the whole
# suite under both, check formatting and clang-tidy, and run every fuzz target
# for a bounded time.
#
#   AKA_FUZZ_SECONDS   seconds per fuzz target (default 20; 0 skips fuzzing)
#   AKA_SKIP_LINT=1    skip clang-format / clang-tidy (local iteration only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
fuzz_seconds=${AKA_FUZZ_SECONDS:-20}

step() { printf '\n== %s ==\n' "$*"; }

step "dependencies"
scripts/deps.sh

step "build (RelWithDebInfo, -Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"

step "build (AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DAKA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"

step "test suite"
(cd build && ctest --output-on-failure -j"$jobs")

step "test suite under ASan+UBSan (the slow suites ran above, once)"
# detect_leaks stays on: a leak in a parser is a bug we want CI to catch.
(cd build-asan && ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs" -LE slow)

if [ "${AKA_SKIP_LINT:-0}" != 1 ]; then
  step "clang-format"
  files=$(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c')
  clang-format --dry-run -Werror $files
  echo "clang-format: $(echo "$files" | wc -l) files clean"

  step "clang-tidy (default checks)"
  # One clang-tidy process per file ($jobs at a time): given several files,
  # clang-tidy 14's valist checker carries state from one file into the next and
  # reports every vsnprintf(..., ap) after a va_start as an uninitialized va_list
  # (llvm/llvm-project#40656); each file alone is analysed correctly. The
  # compile database holds gcc-only flags (-Wno-format-truncation) that clang
  # does not know; they change nothing clang-tidy analyses.
  srcs=$(git ls-files 'src/*.c')
  tidy_log=$(mktemp -d)
  printf '%s\n' $srcs | xargs -P "$jobs" -I{} sh -c \
    'clang-tidy -p build --quiet --warnings-as-errors="*" --extra-arg=-Wno-unknown-warning-option \
       "$1" >"$2/$(echo "$1" | tr / _).log" 2>&1 || echo "$1" >>"$2/failed"' _ {} "$tidy_log"
  if [ -s "$tidy_log/failed" ]; then
    cat "$tidy_log"/*.log | grep -v '^[0-9]* warnings\? generated'
    echo "clang-tidy: failed on $(wc -l <"$tidy_log/failed") file(s)"; exit 1
  fi
  rm -rf "$tidy_log"
  echo "clang-tidy: $(echo "$srcs" | wc -l) files clean"
fi

if [ "$fuzz_seconds" != 0 ]; then
  step "fuzz targets (${fuzz_seconds}s each)"
  cmake -S . -B build-fuzz -DAKA_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build build-fuzz -j"$jobs"
  for fuzzer in build-fuzz/tests/fuzz/fuzz_*; do
    [ -x "$fuzzer" ] || continue
    name=$(basename "$fuzzer")
    work="build-fuzz/corpus/$name"
    mkdir -p "$work"
    seeds="$root/tests/fuzz/corpus/$name"
    [ -d "$seeds" ] || seeds=""
    echo "fuzz: $name"
    # A finding makes libFuzzer exit non-zero and leave crash-* in the cwd.
    # Targets that write temp files go to tmpfs when there is one: fsync is free there.
    (cd build-fuzz && TMPDIR=$(test -w /dev/shm && echo /dev/shm || echo /tmp) "./tests/fuzz/$name" -max_total_time="$fuzz_seconds" \
        -print_final_stats=0 "corpus/$name" $seeds 2>"corpus/$name.log") || {
      tail -40 "build-fuzz/corpus/$name.log"; echo "fuzz: $name FOUND A BUG"; exit 1; }
  done
fi

step "done"
echo "all checks passed"
