#!/usr/bin/env bash
# platforms.sh — platform names through the real binary (docs/platforms.md).
#   1. Upstream's names for hardware this machine lacks (H20, L20N, MI308X, ZW-M890P) are
#      accepted: `aka optimize` and `aka eval` end with 75 and a message naming the missing
#      device node, not with a usage error. (Each case is skipped where the node exists.)
#   2. Unknown names and an --arch of another vendor exit 2 naming the flag and the value,
#      and write nothing.
#   3. `aka inspect --platform` and `--help` say which hardware is not validated.
#   4. A campaign started with --arch records it in campaign.json; one without keeps the
#      document it always had (no cuda_arch field).
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aka-platforms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
OP=$AKA_SOURCE_DIR/examples/ops/rmsnorm
mkdir -p "$tmp/cwd"

# run WANT NAME CMD...: CMD's exit code must be WANT; its stderr is kept in $tmp/err.
run() {
    local want=$1 name=$2 rc=0
    shift 2
    (cd "$tmp/cwd" && "$@") >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = "$want" ] || { cat "$tmp/err"; fail "$name: exit $rc, expected $want"; }
}
says() { grep -qF -- "$2" "$tmp/err" || { cat "$tmp/err"; fail "$1: stderr lacks '$2'"; }; }

optimize() { # PLATFORM WORKSPACE [FLAGS...]
    local p=$1 ws=$2
    shift 2
    "$AKA_BIN" optimize --repo-root "$AKA_SOURCE_DIR" -- --op-dir "$OP" --platform "$p" \
        --framework Triton --agent-cli builtin --workspace "$ws" --max-iters 1 \
        --no-auto-recovery "$@"
}

# ---- 1. accepted names, missing devices: 75 naming the node --------------------------------------
for case in "H20 /dev/nvidia0 NVIDIA GPU" "L20N /dev/nvidia0 NVIDIA GPU" \
    "MI308X /dev/dri/renderD128 AMD GPU" "ZW-M890P /dev/nvidia0 T-Head PPU"; do
    read -r p node what <<<"$case"
    what=${case#* * }
    if [ -e "$node" ]; then
        echo "skip: $p ($node exists on this machine)"
        continue
    fi
    run 75 "optimize --platform $p" optimize "$p" "$tmp/ws"
    says "optimize --platform $p" "no $what: $node not found"
    run 75 "eval --platform $p" "$AKA_BIN" eval --repo-root "$AKA_SOURCE_DIR" -- --op-dir "$OP" \
        --kernel "$OP/seeds/Triton/kernel.py" --framework Triton --platform "$p"
    says "eval --platform $p" "no $what: $node not found"
    echo "ok: $p is accepted and ends with 75 ($what missing)"
done
ls "$tmp/ws" | grep -qx kernel_opt_rmsnorm_triton_h20 ||
    fail "the workspace name of --platform H20 is not kernel_opt_rmsnorm_triton_h20: $(ls "$tmp/ws")"

# ---- 2. refused: exit 2, the flag and value named, nothing written ------------------------------
refuse() { # NAME FLAG VALUE PLATFORM [FLAGS...]
    local name=$1 flag=$2 value=$3 p=$4
    shift 4
    run 2 "$name" optimize "$p" "$tmp/refused" "$@"
    says "$name" "$flag '$value'"
    [ ! -e "$tmp/refused" ] && [ -z "$(ls -A "$tmp/cwd")" ] || fail "$name: files were written"
    echo "ok: $name exits 2 naming $flag '$value'"
}
refuse "unknown platform" --platform foo foo
refuse "vendor prefix alone" --platform nvidia/ nvidia/
refuse "gfx without digits" --platform gfx gfx
refuse "a name containing gb200" --platform xgb200 xgb200
refuse "an AMD arch on NVIDIA" --arch gfx942 H200 --arch gfx942
refuse "an NVIDIA arch on AMD" --arch sm_90 MI308X --arch sm_90
run 2 "FlyDSL on NVIDIA" "$AKA_BIN" optimize --op-dir "$OP" --platform H20 --framework FlyDSL \
    --agent-cli builtin --workspace "$tmp/refused"
says "FlyDSL on NVIDIA" "--framework FlyDSL: not a framework of --platform H20"
[ ! -e "$tmp/refused" ] || fail "FlyDSL on NVIDIA: files were written"
run 2 "eval --platform foo" "$AKA_BIN" eval --op-dir "$OP" --kernel "$OP/seeds/Triton/kernel.py" \
    --framework Triton --platform foo
says "eval --platform foo" "--platform 'foo'"
run 2 "inspect --platform foo" "$AKA_BIN" inspect --platform foo
says "inspect --platform foo" "--platform 'foo'"

# ---- 3. what is not validated on hardware says so -----------------------------------------------
"$AKA_BIN" inspect --platform MI308X >"$tmp/mi.txt"
grep -q "^platform: *amd/mi308x (AMD), not validated on hardware" "$tmp/mi.txt" ||
    { cat "$tmp/mi.txt"; fail "inspect MI308X does not say 'not validated on hardware'"; }
grep -q "^device nodes: */dev/kfd, /dev/dri/renderD128 (for GPU 0)" "$tmp/mi.txt" ||
    { cat "$tmp/mi.txt"; fail "inspect MI308X: device nodes"; }
grep -q "^timing: *HIP events" "$tmp/mi.txt" || fail "inspect MI308X: timing"
"$AKA_BIN" inspect --platform zwm890p >"$tmp/ppu.txt"
grep -q "not validated on hardware" "$tmp/ppu.txt" && grep -q "^clocks: *never touched" "$tmp/ppu.txt" ||
    { cat "$tmp/ppu.txt"; fail "inspect zwm890p"; }
"$AKA_BIN" inspect --platform H200 >"$tmp/h200.txt"
grep -q "^platform: *nvidia/h200 (NVIDIA), validated on hardware" "$tmp/h200.txt" ||
    { cat "$tmp/h200.txt"; fail "inspect H200"; }
"$AKA_BIN" inspect --op-dir "$OP" --platform MI308X --json >"$tmp/mi.json"
python3 - "$tmp/mi.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["platform"]
assert d["layout"] == "atrex", d["layout"]
assert p["vendor"] == "amd" and p["arch"] == "gfx942" and not p["validated_on_hardware"], p
assert p["frameworks"] == ["Triton", "FlyDSL", "TileLang"], p
PY
"$AKA_BIN" optimize --help | tr -s ' \n' ' ' | grep -q "not validated on hardware" ||
    fail "aka optimize --help does not label unvalidated platforms"
"$AKA_BIN" eval --help | tr -s ' \n' ' ' | grep -q "not validated on hardware" ||
    fail "aka eval --help does not label unvalidated platforms"
echo "ok: inspect and --help label what is not validated on hardware"

# ---- 4. --arch is read and recorded -------------------------------------------------------------
if [ ! -e /dev/nvidia0 ]; then
    run 75 "optimize --arch" optimize H20 "$tmp/arch" --arch sm_90a
    python3 - "$tmp/arch"/kernel_opt_rmsnorm_triton_h20/.aka/campaign.json \
        "$tmp/ws"/kernel_opt_rmsnorm_triton_h20/.aka/campaign.json <<'PY'
import json, sys
with_arch, without = (json.load(open(p)) for p in sys.argv[1:])
assert with_arch["platform"] == "H20" and with_arch["cuda_arch"] == "sm_90a", with_arch
assert without["platform"] == "H20" and "cuda_arch" not in without, without
PY
    echo "ok: --arch is recorded in campaign.json; without it the document is unchanged"
fi
echo "platforms: ok"
