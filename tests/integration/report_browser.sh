#!/bin/bash
# report_browser.sh — `aka report` pages opened in a real browser (Debian's chromium,
# headless, installed here with apt-get when missing and this runs as root):
#   1. a finished native C campaign's page, a failed-V0 page and the index of both:
#      each screenshot is not blank (many distinct pixel values, some non-white ones;
#      decoded by tests/lib/png_stats.py) and the DOM chromium built holds one latency
#      point per version record and the render stamp the page's own script writes;
#   2. a synthetic 200-version workspace (tests/lib/report_synth.py; `aka status` loads
#      it) gives a page under 2 MB whose render time, as the page itself measures it
#      (performance.now() at the load event after a forced layout), has a median under
#      1000 ms over 3 loads, with 200 latency points.
# Exit 77 (skipped) only when chromium is missing and cannot be installed, or cannot run.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-report-browser.XXXXXX")
[ -n "${AKA_KEEP_TMP:-}" ] || trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P)
unset ATREX_AKA_WORKSPACE
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
        >"$TMP/apt.log" 2>&1 || true
fi
command -v chromium >/dev/null || { echo "SKIP: chromium is not installed and could not be"; exit 77; }
headless() { # headless ARGS... URL: one headless chromium run, its own profile, no network
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
        --disable-background-networking --disable-component-update --no-first-run \
        --window-size=1000,1400 "$@" 2>>"$TMP/chromium.err"
}
printf '<!DOCTYPE html><html><body><p id="alive">x</p></body></html>' >"$TMP/probe.html"
headless --dump-dom "file://$TMP/probe.html" 2>/dev/null | grep -q 'id="alive"' ||
    { tail -5 "$TMP/chromium.err"; echo "SKIP: chromium cannot run here"; exit 77; }

ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
campaign() { # campaign OP_DIR WORKSPACE_PARENT MAX_ITERS
    "$AKA" optimize --op-dir "$1" --platform cpu --framework C --agent-cli builtin \
        --max-iters "$3" --workspace "$2" --sandbox-isolation "$ISO" >"$TMP/opt.out" 2>&1
}
campaign "$SRC/examples/ops/vector_add" "$TMP/ok" 3 || { cat "$TMP/opt.out"; fail "campaign"; }
mkdir -p "$TMP/badop" && cp -r "$SRC/examples/ops/vector_add" "$TMP/badop/vector_add"
echo "this is not C;" >>"$TMP/badop/vector_add/reference.c"
campaign "$TMP/badop/vector_add" "$TMP/fv0" 1 && fail "a V0 that does not build passed"
# the directory of workspaces an index is made of (a dispatch's parent holds such children)
mkdir "$TMP/runs"
cp -a "$TMP/ok/kernel_opt_vector_add_c_cpu" "$TMP/runs/"
cp -a "$TMP/fv0/kernel_opt_vector_add_c_cpu" "$TMP/runs/kernel_opt_vector_add_c_cpu_failed"
WS=$TMP/runs/kernel_opt_vector_add_c_cpu
[ -f "$TMP/runs/kernel_opt_vector_add_c_cpu_failed/memory/v0.failed.json" ] || fail "no failed V0"
"$AKA" report "$TMP/runs" -o "$TMP/out" >/dev/null || fail "aka report of the directory"

# 1. each page: non-blank screenshot, points in the DOM, the page's script ran
page_check() { # page_check HTML WANT_POINTS
    local png=$TMP/shot.png
    rm -f "$png"
    headless --screenshot="$png" "file://$1" >/dev/null
    [ -s "$png" ] || fail "$1: no screenshot"
    read -r w h colors nonwhite < <(python3 "$SRC/tests/lib/png_stats.py" "$png")
    colors=${colors#colors=}
    nonwhite=${nonwhite#nonwhite=}
    echo "screenshot $(basename "$1"): ${w}x$h, $colors colours, non-white $nonwhite"
    [ "$colors" -ge 16 ] || fail "$1: a blank screenshot ($colors colours)"
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.01 else 1)" "$nonwhite" ||
        fail "$1: screenshot almost white ($nonwhite)"
    headless --dump-dom "file://$1" >"$TMP/dom.html"
    grep -q 'data-render-ms="[0-9.]*"' "$TMP/dom.html" || fail "$1: the page's script did not run"
    [ "$2" = - ] && return
    local got
    got=$( (grep -o 'class="pt s-[a-z_]*"' "$TMP/dom.html" || true) | wc -l)
    [ "$got" = "$2" ] || fail "$1: $got latency points in the DOM, want $2"
}
nver=$(ls "$WS"/memory/ | grep -c '^v[0-9]*\.json$')
page_check "$TMP/out/kernel_opt_vector_add_c_cpu.html" "$nver"
page_check "$TMP/out/kernel_opt_vector_add_c_cpu_failed.html" 0
page_check "$TMP/out/index.html" -
grep -c '<tr class="campaign">' "$TMP/dom.html" | grep -qx 2 || fail "index rows in the DOM"
echo "ok: pages render, latency points in the DOM"

# 2. 200 versions: size and render time
python3 "$SRC/tests/lib/report_synth.py" "$WS" "$TMP/syn200" 200
"$AKA" status "$TMP/syn200" >"$TMP/status.out" || fail "aka status does not load the synthetic workspace"
grep -q "200 canonical version(s), latest v199" "$TMP/status.out" || fail "synthetic: $(cat "$TMP/status.out")"
"$AKA" report "$TMP/syn200" -o "$TMP/syn200.html" >/dev/null
size=$(stat -c %s "$TMP/syn200.html")
[ "$size" -lt 2000000 ] || fail "200-version page is $size bytes"
ms=()
for i in 1 2 3; do
    headless --dump-dom "file://$TMP/syn200.html" >"$TMP/dom.html"
    ms+=("$(grep -o 'data-render-ms="[0-9.]*"' "$TMP/dom.html" | grep -o '[0-9.]*')")
done
got=$( (grep -o 'class="pt s-[a-z_]*"' "$TMP/dom.html" || true) | wc -l)
[ "$got" = 200 ] || fail "200-version page: $got latency points in the DOM"
median=$(printf '%s\n' "${ms[@]}" | sort -n | sed -n 2p)
echo "200 versions: $size bytes, render ${ms[*]} ms (median $median)"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1000 else 1)" "$median" ||
    fail "200-version page renders in $median ms (median of 3), not under 1000"
echo "ok: 200 versions under 2 MB and under 1 s"
echo "report_browser: ok"
