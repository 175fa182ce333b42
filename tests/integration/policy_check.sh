#!/usr/bin/env bash
# policy_check.sh — `aka policy check` over the hostile and clean corpora of tests/policy/.
#
# Every hostile source (a file, or a directory holding kernel.{py,cu,c} and its
# siblings) names the rule it must trip on its first line ("policy-expect:
# RULE"); it must exit 1 with a line naming that rule, its file and a line
# number. Every clean kernel must exit 0 with no violation, and its --json
# report must say clean. The framework comes from the file name: triton_*.py,
# gluon_*.py, cutedsl_*.py, tilelang_*.py, flydsl_*.py, cuda_*.cu, c_*.c.
# Bad input (unknown framework, missing file, a file of the wrong kind, a file
# that does not tokenize, missing flags) exits 2 with one line on stderr naming
# the file or flag and nothing on stdout. docs/production.md must explain every rule id of
# src/policy/rules.c with an example: a hostile file of the corpus that trips that rule.
set -euo pipefail

: "${AKA_BIN:?AKA_BIN must name the aka binary (ctest sets it)}"
: "${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree (ctest sets it)}"

corpus=$AKA_SOURCE_DIR/tests/policy
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aka-policy-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "policy_check.sh: FAIL: $*" >&2
    exit 1
}

framework_of() { # FILE
    case $(basename "$1") in
    triton_* | kernel.py) echo triton ;;
    gluon_*) echo gluon ;;
    cutedsl_*) echo cutedsl ;;
    tilelang_*) echo tilelang ;;
    flydsl_*) echo flydsl ;;
    cuda_* | kernel.cu) echo cuda ;;
    c_* | kernel.c) echo c ;;
    *) fail "$1: no framework for this name" ;;
    esac
}

hostile=0
for entry in "$corpus"/hostile/*; do
    file=$entry
    [ -d "$entry" ] && file=$(ls "$entry"/kernel.* | head -1)
    rule=$(head -2 "$file" | sed -n 's/.*policy-expect: \([a-z-]*\).*/\1/p' | head -1)
    [ -n "$rule" ] || fail "$file: no policy-expect header"
    fw=$(framework_of "$file")
    set +e
    out=$("$AKA_BIN" policy check --framework "$fw" --kernel "$file" 2>"$tmp/err")
    rc=$?
    set -e
    [ "$rc" = 1 ] || fail "$file: expected exit 1 (violation $rule), got $rc: $out $(cat "$tmp/err")"
    grep -qE "^[^ ]+:[0-9]+:[0-9]+: $rule: " <<<"$out" ||
        fail "$file: expected rule $rule, got:"$'\n'"$out"
    hostile=$((hostile + 1))
    "$AKA_BIN" policy check --framework "$fw" --kernel "$file" --json >"$tmp/hostile.$hostile.$rule.json" || true
done
[ "$hostile" -ge 30 ] || fail "only $hostile hostile sources (expected at least 30)"

declare -A clean_count=()
for file in "$corpus"/clean/*; do
    fw=$(framework_of "$file")
    out=$("$AKA_BIN" policy check --framework "$fw" --kernel "$file") ||
        fail "$file: a clean $fw kernel was rejected:"$'\n'"$out"
    clean_count[$fw]=$((${clean_count[$fw]:-0} + 1))
    "$AKA_BIN" policy check --framework "$fw" --kernel "$file" --json >"$tmp/clean.$fw.${clean_count[$fw]}.json"
done
# The clean corpus is real code: the Python files parse and the C files compile.
python3 - "$corpus"/clean/*.py <<'PY' || fail "a clean Python kernel does not parse (above)"
import ast, sys
for path in sys.argv[1:]:
    ast.parse(open(path).read(), path)
PY
if command -v cc >/dev/null; then
    for file in "$corpus"/clean/c_*.c; do
        cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$AKA_SOURCE_DIR/runtime/harness/native" \
            "$file" || fail "$file: a clean native C kernel does not compile"
    done
fi
for fw in triton cuda c; do
    [ "${clean_count[$fw]:-0}" -ge 10 ] || fail "only ${clean_count[$fw]:-0} clean $fw kernels"
done

# The --json reports, all checked by one interpreter: hostile ones name their rule with a
# position, clean ones are exactly {"clean": true, "violations": []}.
python3 - "$tmp" <<'PY' || fail "a --json report is wrong (above)"
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(path))
    name = os.path.basename(path).split(".")
    if name[0] == "clean":
        assert d == {"clean": True, "violations": []}, (path, d)
    else:
        assert d["clean"] is False and any(
            v["rule"] == name[2] and v["line"] >= 1 and v["column"] >= 1 and v["file"]
            for v in d["violations"]), (path, d)
PY

# docs/production.md explains every rule id of the table (src/policy/rules.c, which its own
# header calls the complete list of ids), each with an example: a file of the hostile corpus
# that exists and trips that very rule.
python3 - "$AKA_SOURCE_DIR" <<'PY' || fail "docs/production.md does not document every rule with an example (above)"
import os, re, sys
src = sys.argv[1]
table = open(os.path.join(src, "src/policy/rules.c")).read()
table = table[table.index("static const struct pol_rule rules[] = {"):]
table = table[:table.index("\n};")]
ids = sorted(set(re.findall(r'^\s*\{"([a-z-]+)",', table, re.M)))
assert len(ids) >= 15, ids
doc = open(os.path.join(src, "docs/production.md")).read()
hostile = os.path.join(src, "tests/policy/hostile")
def expects(name):
    path = os.path.join(hostile, name)
    if os.path.isdir(path):
        path = os.path.join(path, sorted(f for f in os.listdir(path) if f.startswith("kernel."))[0])
    head = "".join(open(path).readlines()[:2])
    m = re.search(r"policy-expect: ([a-z-]+)", head)
    return m.group(1) if m else None
bad = []
for rule in ids:
    m = re.search(r"\*\*`" + re.escape(rule) + r"`\*\*(.*?)(?=\n\*\*`|\n#)", doc, re.S)
    if not m:
        bad.append(f"rule {rule}: no **`{rule}`** entry")
        continue
    names = [n for n in [x.rstrip("/") for x in re.findall(r"`([\w./-]+)`", m.group(1))] if os.path.exists(os.path.join(hostile, n))]
    if not any(expects(n) == rule for n in names):
        bad.append(f"rule {rule}: no example of tests/policy/hostile that trips it (named: {names})")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

bad_input() { # WHAT-STDERR-MUST-NAME ARGS...
    local want=$1
    shift
    set +e
    "$AKA_BIN" policy "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    set -e
    [ "$rc" = 2 ] || fail "policy $*: expected exit 2, got $rc"
    [ ! -s "$tmp/out" ] || fail "policy $*: wrote to stdout on bad input"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "policy $*: expected one line on stderr"
    grep -qF -- "$want" "$tmp/err" || fail "policy $*: stderr does not name $want: $(cat "$tmp/err")"
}
clean_py=$corpus/clean/triton_vector_add.py
printf 'def run(x):\n    return "unterminated\n' >"$tmp/bad_string.py"
printf 'def run(x:\n    return x\n' >"$tmp/bad_paren.py"
printf '/* never closed\nint aka_kernel(void) { return 0; }\n' >"$tmp/bad_comment.c"
printf 'int aka_kernel(void) { return 0; }\n' >"$tmp/kernel.txt"
bad_input '"tritno"' check --framework tritno --kernel "$clean_py"
bad_input "$tmp/missing.py" check --framework triton --kernel "$tmp/missing.py"
bad_input "$tmp/bad_string.py:2:12" check --framework triton --kernel "$tmp/bad_string.py"
bad_input "$tmp/bad_paren.py" check --framework triton --kernel "$tmp/bad_paren.py"
bad_input "$tmp/bad_comment.c:1:1" check --framework c --kernel "$tmp/bad_comment.c"
bad_input "expects a CUDA source" check --framework cuda --kernel "$clean_py"
bad_input "$tmp/kernel.txt" check --framework c --kernel "$tmp/kernel.txt"
bad_input "--framework" check --kernel "$clean_py"
bad_input "--kernel" check --framework triton --kernel
bad_input "--jsn: unknown flag" check --framework triton --kernel "$clean_py" --jsn
bad_input "'lint': unknown subcommand; expected one of check" lint
"$AKA_BIN" policy --help | grep -q "aka policy check --framework F --kernel FILE" ||
    fail "policy --help does not show the usage"

echo "policy_check: ok ($hostile hostile rejected for their named rule;" \
    "${clean_count[triton]} Triton, ${clean_count[cuda]} CUDA, ${clean_count[c]} native C clean; bad input exits 2)"
