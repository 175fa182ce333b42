#!/usr/bin/env bash
# inspect.sh — `aka inspect` against every example operator and a few malformed ones.
#
# Checks, for each example: exit 0, the text view names the right layout, the
# --json view is valid JSON with the right "layout", and the operator directory
# is byte-for-byte unchanged afterwards. For malformed directories: exit 2,
# exactly one line on stderr naming the file and field, nothing on stdout, and
# nothing written into the directory.
set -euo pipefail

: "${AKA_BIN:?AKA_BIN must name the aka binary (ctest sets it)}"
: "${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree (ctest sets it)}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aka-inspect-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Keep the environment's pins out of the expectations below.
unset ATREX_SANDBOX_ATREX_BENCH_VERSION ATREX_SANDBOX_REQUIREMENTS_FILE

fail() {
    echo "inspect.sh: FAIL: $*" >&2
    exit 1
}

# Names, types and sha256 of everything under a directory, in a stable order.
digest() {
    (cd "$1" && find . -printf '%y %p\n' | LC_ALL=C sort &&
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
}

check_example() { # NAME LAYOUT
    local dir="$AKA_SOURCE_DIR/examples/ops/$1" want="$2" before after
    before=$(digest "$dir")
    "$AKA_BIN" inspect --op-dir "$dir" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
        fail "$1: inspect exited $? ($(cat "$tmp/err.txt"))"
    grep -Eq "^layout: +$want\$" "$tmp/out.txt" || fail "$1: text view does not say layout $want"
    grep -q '^distributed:' "$tmp/out.txt" || fail "$1: text view lacks the distributed decision"
    grep -q '^runtime pins:' "$tmp/out.txt" || fail "$1: text view lacks the runtime pins"
    "$AKA_BIN" inspect --op-dir "$dir" --json >"$tmp/out.json" 2>"$tmp/err.txt" ||
        fail "$1: inspect --json exited $? ($(cat "$tmp/err.txt"))"
    python3 -m json.tool "$tmp/out.json" >/dev/null || fail "$1: --json output is not valid JSON"
    python3 - "$tmp/out.json" "$want" <<'EOF' || fail "$1: --json view is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["layout"] == sys.argv[2], "layout is %r, expected %r" % (d["layout"], sys.argv[2])
for key in ("name", "inputs", "outputs", "shape_count", "tolerances", "distributed",
            "source_policy", "pins"):
    assert key in d, "missing key %r" % key
assert d["shape_count"] >= 1 and d["outputs"], "no shapes or no outputs"
EOF
    after=$(digest "$dir")
    [[ $before == "$after" ]] || fail "$1: inspect changed the operator directory"
    echo "ok: $1 ($want)"
}

check_bad() { # DIR EXPECTED-SUBSTRING
    local dir="$1" want="$2" before after rc=0
    before=$(digest "$dir")
    "$AKA_BIN" inspect --op-dir "$dir" >"$tmp/out.txt" 2>"$tmp/err.txt" || rc=$?
    [[ $rc -eq 2 ]] || fail "$dir: expected exit 2, got $rc ($(cat "$tmp/err.txt"))"
    [[ ! -s $tmp/out.txt ]] || fail "$dir: printed to stdout on error"
    [[ $(wc -l <"$tmp/err.txt") -eq 1 ]] || fail "$dir: error is not one line: $(cat "$tmp/err.txt")"
    grep -qF -- "$want" "$tmp/err.txt" || fail "$dir: error lacks '$want': $(cat "$tmp/err.txt")"
    after=$(digest "$dir")
    [[ $before == "$after" ]] || fail "$dir: inspect wrote into the directory"
    echo "ok: rejected $(basename "$dir"): $(cat "$tmp/err.txt")"
}

# ---- every example -------------------------------------------------------------------------
declare -A layouts=(
    [vector_add]=native [row_softmax]=native [matmul]=native [row_sum_cuda]=native
    [rmsnorm]=atrex [silu_and_mul]=atrex [allreduce_sum]=atrex [rope]=sol
)
for name in "${!layouts[@]}"; do
    [[ -d $AKA_SOURCE_DIR/examples/ops/$name ]] || fail "example $name is missing"
done
for d in "$AKA_SOURCE_DIR"/examples/ops/*/; do
    name=$(basename "$d")
    if [[ -n ${layouts[$name]:-} ]]; then
        check_example "$name" "${layouts[$name]}"
    else # an example added later: it must load as whatever layout it has
        check_example "$name" "$("$AKA_BIN" inspect --op-dir "$d" | sed -n 's/^layout: *//p')"
    fi
done

# The distributed example pins torchrun on 2 GPUs and turns source-policy inspection off.
"$AKA_BIN" inspect --op-dir "$AKA_SOURCE_DIR/examples/ops/allreduce_sum" --json >"$tmp/d.json"
python3 - "$tmp/d.json" <<'EOF' || fail "allreduce_sum: distributed decision is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["distributed"]["world_size"] == 2 and d["distributed"]["enabled"], d["distributed"]
assert d["source_policy"]["inspection"] is False, d["source_policy"]
EOF

# ---- flags ---------------------------------------------------------------------------------
"$AKA_BIN" inspect --help | grep -q -- '--op-dir' || fail "--help does not describe --op-dir"
rc=0
"$AKA_BIN" inspect >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "inspect without --op-dir exited $rc, expected 2"

# ---- runtime pins in force -----------------------------------------------------------------
printf 'torch==2.5.1\n# a comment\nnumpy>=1.26\n' >"$tmp/req.txt"
ATREX_SANDBOX_ATREX_BENCH_VERSION=0.3.1 ATREX_SANDBOX_REQUIREMENTS_FILE="$tmp/req.txt" \
    "$AKA_BIN" inspect --op-dir "$AKA_SOURCE_DIR/examples/ops/rmsnorm" --json >"$tmp/p.json"
python3 - "$tmp/p.json" <<'EOF' || fail "pins are not reported"
import json, sys
p = json.load(open(sys.argv[1]))["pins"]
assert p["atrex_bench_version"] == "0.3.1", p
assert len(p["requirements"]) == 2, p
EOF
rc=0
ATREX_SANDBOX_REQUIREMENTS_FILE="$tmp/missing.txt" \
    "$AKA_BIN" inspect --op-dir "$AKA_SOURCE_DIR/examples/ops/rmsnorm" >/dev/null 2>"$tmp/err.txt" || rc=$?
[[ $rc -eq 2 ]] || fail "a missing requirements file exited $rc, expected 2"
grep -qF "$tmp/missing.txt" "$tmp/err.txt" || fail "the pin error does not name the file"

# ---- malformed directories -----------------------------------------------------------------
mkdir "$tmp/empty"
check_bad "$tmp/empty" "expected an operator directory of one layout; got none"

cp -r "$AKA_SOURCE_DIR/examples/ops/vector_add" "$tmp/bad_schema"
sed -i 's/"aka.native.v1"/"aka.native.v0"/' "$tmp/bad_schema/operator.json"
check_bad "$tmp/bad_schema" "bad_schema/operator.json: schema: expected \"aka.native.v1\"; got \"aka.native.v0\""

cp -r "$AKA_SOURCE_DIR/examples/ops/matmul" "$tmp/bad_dim"
sed -i 's/"shape": \["M", "K"\]/"shape": ["M", "Q"]/' "$tmp/bad_dim/operator.json"
check_bad "$tmp/bad_dim" "bad_dim/operator.json: tensors[0].shape[1]: expected an expression over dims"

cp -r "$AKA_SOURCE_DIR/examples/ops/rope" "$tmp/bad_workload"
echo '{"uuid": "x", "axes": {"tokens": -1}, "inputs": {}}' >>"$tmp/bad_workload/workload.jsonl"
check_bad "$tmp/bad_workload" "bad_workload/workload.jsonl:5: axes.tokens: expected an integer >= 0; got -1"

cp -r "$AKA_SOURCE_DIR/examples/ops/rmsnorm" "$tmp/ambiguous"
cp "$AKA_SOURCE_DIR/examples/ops/vector_add/operator.json" "$tmp/ambiguous/"
check_bad "$tmp/ambiguous" "expected exactly one operator layout; got 2: atrex"

cp -r "$AKA_SOURCE_DIR/examples/ops/rmsnorm" "$tmp/leaky"
python3 - "$tmp/leaky" <<'EOF'
import json, sys
p = sys.argv[1] + "/agent_problem.json"
d = json.load(open(p))
d["development_cases"].append(json.load(open(sys.argv[1] + "/shapes.json"))["2"])
json.dump(d, open(p, "w"), indent=2)
EOF
check_bad "$tmp/leaky" "leaky/agent_problem.json: development_cases[2]: expected no exact private case"

echo "inspect.sh: all checks passed"
