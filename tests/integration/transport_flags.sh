#!/usr/bin/env bash
# transport_flags.sh — `aka eval`, `aka sandbox run` and `aka optimize` take the same
# transport flags from one table and get their transport from one factory:
#   - every command accepts every transport flag and documents it in --help;
#   - with default flags, --sandbox-ssh HOST --sandbox-ssh-gpu 0 passes validation and
#     ends with exit 75 naming the host that cannot be reached (it does not resolve), a
#     gateway that cannot be reached with exit 75 naming it (a profile without its URL:
#     2), a Slurm partition with exit 75 naming the transport that is not built yet, all
#     writing nothing;
#   - a bad combination or value is a usage error (2) naming the flag, or the
#     environment variable that supplied it;
#   - the ATREX_SANDBOX_SSH* variables stand in for absent flags, and a transport
#     chosen on the command line wins over the environment's.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aka-transport-flags.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset ATREX_SANDBOX_SSH ATREX_SANDBOX_SSH_GPU ATREX_SANDBOX_SSH_INIT \
  ATREX_SANDBOX_SSH_RUNTIME_BINDS ATREX_SANDBOX_HEALTH_COMMAND ATREX_SANDBOX_URL \
  ATREX_SANDBOX_PROFILE ATREX_SANDBOX_GPU ATREX_AKA_WORKSPACE
OP=$AKA_SOURCE_DIR/examples/ops/vector_add
printf 'void vector_add(void) {}\n' >"$tmp/kernel.c"
mkdir -p "$tmp/cwd"

# run COMMAND TRANSPORT-ARGS...: one command with its own required arguments around
# the transport flags; output in $tmp/out, exit status in $rc.
run() {
  local cmd=$1; shift
  local -a argv
  case $cmd in
  eval) argv=(eval --op-dir "$OP" --kernel "$tmp/kernel.c" --framework C --platform cpu "$@") ;;
  sandbox) argv=(sandbox run "$@" -- true) ;;
  optimize) argv=(optimize --op-dir "$OP" --platform cpu --framework C --agent-cli builtin
    --agent-sandbox none --workspace "$tmp/ws" "$@") ;;
  esac
  rc=0
  (cd "$tmp/cwd" && "$AKA_BIN" "${argv[@]}") >"$tmp/out" 2>&1 || rc=$?
}

# expect CODE TEXT TRANSPORT-ARGS...: every command exits CODE and says TEXT; nothing
# is written (no workspace, nothing in the current directory).
expect() {
  local want=$1 text=$2; shift 2
  for cmd in eval sandbox optimize; do
    run "$cmd" "$@"
    [ "$rc" = "$want" ] || { cat "$tmp/out"; fail "aka $cmd $*: exit $rc, expected $want"; }
    grep -qF -- "$text" "$tmp/out" || { cat "$tmp/out"; fail "aka $cmd $*: does not say '$text'"; }
    [ ! -e "$tmp/ws" ] && [ -z "$(ls -A "$tmp/cwd")" ] || fail "aka $cmd $*: files were written"
  done
  echo "ok: $want: $* -> $text"
}

# ---- default flags are valid on every transport ------------------------------------
expect 75 "ssh gpu-host (GPU 0): connecting" --sandbox-ssh gpu-host --sandbox-ssh-gpu 0
expect 75 "gpu-host (GPU 3)" --sandbox-ssh=gpu-host --sandbox-ssh-gpu=3
expect 75 "ssh u@h (GPU 0): connecting" --sandbox ssh --sandbox-ssh u@h --sandbox-ssh-gpu 0 \
  --sandbox-ssh-runtime-bind /opt/conda=/opt/py --sandbox-ssh-runtime-bind /opt/cuda \
  --sandbox-ssh-init 'module load cuda' --sandbox-health-command nvidia-smi
expect 75 "gateway https://gw.example: GET /v1/env: " --sandbox-url https://gw.example \
  --sandbox-hardware H200
ATREX_SANDBOX_PROFILE_PRE_URL=https://gw.example expect 75 "gateway https://gw.example: GET /v1/env: " \
  --sandbox gateway --sandbox-profile pre --sandbox-hardware H200
expect 2 "--sandbox-profile pre: set ATREX_SANDBOX_PROFILE_PRE_URL" --sandbox-profile pre \
  --sandbox-hardware H200
# slurm stages its jobs in --sandbox-tmp (shared with the nodes): checked before anything runs.
expect 75 "/nonexistent/aka-slurm-tmp" --sandbox slurm --slurm-partition gpu \
  --slurm-account a --slurm-qos q --slurm-time 00:10:00 --sandbox-tmp /nonexistent/aka-slurm-tmp

# ---- bad combinations and values name the flag ------------------------------------
expect 2 "--sandbox-ssh-gpu: only applies to --sandbox ssh" --sandbox-ssh-gpu 0
expect 2 "--sandbox-ssh-runtime-bind: only applies to --sandbox ssh" --sandbox-ssh-runtime-bind /opt
expect 2 "--sandbox-ssh-init: only applies to --sandbox ssh" --sandbox-ssh-init true
expect 2 "--sandbox-url: requires --sandbox gateway; got --sandbox local" --sandbox local \
  --sandbox-url https://gw.example
expect 2 "--sandbox-ssh: requires --sandbox ssh; got --sandbox gateway" --sandbox gateway \
  --sandbox-ssh u@h
expect 2 "mutually exclusive" --sandbox-url https://gw.example --sandbox-profile pre
expect 2 "mutually exclusive" --sandbox-ssh u@h --sandbox-url https://gw.example
expect 2 "--sandbox-ssh-gpu: expected an integer in [0, 31]; got 'one'" --sandbox-ssh u@h \
  --sandbox-ssh-gpu one
expect 2 "--sandbox-ssh-gpu: expected an integer in [0, 31]; got '32'" --sandbox-ssh u@h \
  --sandbox-ssh-gpu 32
expect 2 "--sandbox-ssh-gpu: required with --sandbox-ssh u@h" --sandbox-ssh u@h
expect 2 "--sandbox-ssh: a host may not start with '-'" --sandbox-ssh -oProxyCommand=x \
  --sandbox-ssh-gpu 0
expect 2 "--sandbox-ssh-runtime-bind: expected SRC[=DST] with absolute paths" --sandbox-ssh u@h \
  --sandbox-ssh-gpu 0 --sandbox-ssh-runtime-bind opt/conda
expect 2 "--sandbox-health-command: expected a non-empty command" --sandbox-ssh u@h \
  --sandbox-ssh-gpu 0 --sandbox-health-command ''
expect 2 "--sandbox-isolation: only applies to --sandbox local; got --sandbox ssh" \
  --sandbox-isolation none --sandbox-ssh u@h --sandbox-ssh-gpu 0
expect 2 "--sandbox-tmp: only applies to --sandbox local" --sandbox-tmp /tmp \
  --sandbox-url https://gw.example --sandbox-hardware H200
expect 2 "--sandbox-url: expected an http:// or https:// URL" --sandbox-url gw.example \
  --sandbox-hardware H200
expect 2 "--sandbox gateway: needs --sandbox-url URL or --sandbox-profile P" --sandbox gateway
expect 2 "--sandbox-hardware: only applies to --sandbox gateway" --sandbox-hardware H200
expect 2 "--sandbox slurm: needs --slurm-partition P" --sandbox slurm
expect 2 "--slurm-partition: only applies to --sandbox slurm" --slurm-partition gpu
expect 2 "--sandbox: expected one of local, ssh, gateway, slurm; got 'cloud'" --sandbox cloud
expect 2 "--sandbox-isolation: expected one of bwrap, none; got 'docker'" --sandbox-isolation docker
expect 2 "--sandbox-ssh: expected a value" --sandbox-ssh

# ---- the environment stands in for absent flags -----------------------------------
export ATREX_SANDBOX_SSH=envhost ATREX_SANDBOX_SSH_GPU=2
expect 75 "envhost (GPU 2)" --sandbox-ssh-init true
ATREX_SANDBOX_SSH_GPU=x expect 2 "ATREX_SANDBOX_SSH_GPU: expected an integer in [0, 31]; got 'x'"
ATREX_SANDBOX_SSH_GPU= expect 2 "--sandbox-ssh-gpu: required with --sandbox-ssh envhost (or set ATREX_SANDBOX_SSH_GPU)"
ATREX_SANDBOX_SSH_RUNTIME_BINDS='["/opt/conda", "/usr/local/cuda=/cuda"]' \
  expect 75 "ssh envhost (GPU 2): connecting"
ATREX_SANDBOX_SSH_RUNTIME_BINDS='/opt/conda' \
  expect 2 "ATREX_SANDBOX_SSH_RUNTIME_BINDS (for --sandbox-ssh-runtime-bind): expected a JSON array of strings"
ATREX_SANDBOX_SSH_RUNTIME_BINDS='["relative"]' \
  expect 2 "ATREX_SANDBOX_SSH_RUNTIME_BINDS: expected SRC[=DST] with absolute paths"
ATREX_SANDBOX_SSH='-oProxyCommand=x' expect 2 "ATREX_SANDBOX_SSH: a host may not start with '-'"
# A flag wins over its variable.
expect 75 "flaghost (GPU 5)" --sandbox-ssh flaghost --sandbox-ssh-gpu 5
ATREX_SANDBOX_URL=https://gw.example expect 2 "ATREX_SANDBOX_SSH and ATREX_SANDBOX_URL are both set"
# A transport chosen on the command line ignores the environment's: local runs.
run sandbox --sandbox local
[ "$rc" = 0 ] || { cat "$tmp/out"; fail "--sandbox local with ATREX_SANDBOX_SSH set: exit $rc"; }
run sandbox --sandbox-url https://gw.example --sandbox-hardware H200
grep -qF "gateway https://gw.example: GET /v1/env: " "$tmp/out" ||
  { cat "$tmp/out"; fail "--sandbox-url with ATREX_SANDBOX_SSH set did not choose the gateway"; }
unset ATREX_SANDBOX_SSH ATREX_SANDBOX_SSH_GPU
echo "ok: the environment fills absent flags; flags win"

# ---- an episode's evaluations run where its campaign does -------------------------
# An agent's `aka eval` inherits the supervisor's environment: ATREX_SANDBOX_* set
# there must not move it off the campaign's (local) transport; a flag still does.
ws=$tmp/ws-episode wt=$tmp/wt
mkdir -p "$ws/.aka" "$wt"
echo "gitdir: $ws/.git/worktrees/e0001" >"$wt/.git"
cp "$OP/seeds/C/kernel.c" "$wt/kernel.c"
printf '{"op_dir": "%s", "framework": "C", "platform": "cpu", "kernel": "kernel.c", "sandbox_isolation": "none", "mode": "development"}\n' \
  "$OP" >"$ws/.aka/campaign.json"
rc=0
(cd "$wt" && ATREX_SANDBOX_SSH=envhost ATREX_SANDBOX_SSH_GPU=0 ATREX_AKA_WORKSPACE=$ws \
  ATREX_AKA_EPISODE=e0001 "$AKA_BIN" eval --shape-id n4k --timed-runs 1 --warmup 0) \
  >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/out"; fail "episode eval with ATREX_SANDBOX_SSH inherited: exit $rc"; }
grep -q '"all_pass": *true' "$wt/.aka/evaluations.jsonl" || fail "episode eval: no passing record"
rc=0
(cd "$wt" && ATREX_AKA_WORKSPACE=$ws ATREX_AKA_EPISODE=e0001 "$AKA_BIN" eval --shape-id n4k \
  --sandbox-ssh h --sandbox-ssh-gpu 0) >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 75 ] || { cat "$tmp/out"; fail "episode eval --sandbox-ssh: exit $rc, expected 75"; }
echo "ok: an episode's aka eval ignores an inherited transport choice, not a typed one"
sed -i 's/"sandbox_isolation": "none"/"sandbox_isolation": "docker"/' "$ws/.aka/campaign.json"
rc=0
(cd "$wt" && ATREX_AKA_WORKSPACE=$ws "$AKA_BIN" eval --shape-id n4k) >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -qF "$ws/.aka/campaign.json: sandbox_isolation: expected bwrap or none; got 'docker'" "$tmp/out" ||
  { cat "$tmp/out"; fail "a campaign's bad sandbox_isolation: exit $rc"; }
echo "ok: a campaign's bad sandbox_isolation is exit 2 naming the file and field"

# ---- one table: every command documents every transport flag ----------------------
for cmd in "eval --help" "sandbox run --help" "optimize --help"; do
  # shellcheck disable=SC2086
  "$AKA_BIN" $cmd >"$tmp/help"
  for flag in --sandbox --sandbox-isolation --sandbox-tmp --sandbox-ssh --sandbox-ssh-gpu \
    --sandbox-ssh-runtime-bind --sandbox-ssh-init --sandbox-health-command --sandbox-url \
    --sandbox-profile --sandbox-hardware --slurm-partition --slurm-account --slurm-qos \
    --slurm-time; do
    grep -qE -- "^  $flag " "$tmp/help" || fail "aka $cmd lacks $flag"
  done
  grep -qF "ATREX_SANDBOX_SSH_RUNTIME_BINDS" "$tmp/help" || fail "aka $cmd does not name the variables"
done
echo "ok: --help of eval, sandbox run and optimize lists every transport flag"

# The local transport still runs, with its flags, from every command's parser.
run sandbox --sandbox-isolation none --sandbox-tmp "$tmp"
[ "$rc" = 0 ] || { cat "$tmp/out"; fail "aka sandbox run --sandbox-isolation none: exit $rc"; }
echo "transport_flags: ok"
