#!/bin/bash
# gateway.sh — `aka gateway serve` and the gateway transport against the real server on a
# loopback port (docs/gateway.md):
#   1. the token file is created 0600; /healthz answers without it; every /v1 route
#      answers 401 without the token or with a wrong one;
#   2. every route: env, env/local (other names 404), submit eval/profile/dev and the
#      legacy /v1/evals, get (and /v1/evals/{id}), list with filters, cancel, disassemble
#      (501), unknown routes (404);
#   3. an idempotent resubmission returns the same job; the same key with another body 409;
#   4. a long-poll returns when the job ends, not after its timeout;
#   5. cancel ends the job's whole process group (a job whose children sleep: none left);
#   6. bad input is a 4xx naming the field (malformed JSON, unknown kind, unknown field,
#      missing argv, oversize body 413); output over --max-output-mb fails the job
#      (output_too_large); CLI misuse exits 2;
#   7. lock_clocks calls (a fake, recording) nvidia-smi only when a request asks;
#   8. SIGKILL of the gateway mid-job: after a restart every job is accounted for (the
#      running one failed with reason scheduler_restarted, no process of it left, the
#      queued ones completed);
#   9. the client: `aka eval` of the bundled native example through --sandbox gateway gives
#      the local verdict (a pass, and a wrong candidate's failure); artifacts come back;
#      SIGINT cancels the job (exit 130, nothing left); a refused connection and a wrong
#      token are exit 75; every request is recorded and `aka sandbox replay` re-runs it,
#      refusing changed runtime pins (exit 2).
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -uo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-gateway-test.XXXXXX")
SERVER_PID=
stop_server() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=
}
trap 'stop_server; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }

ISO=bwrap
if ! "$AKA" sandbox run -- true >/dev/null 2>&1; then
    ISO=none
    echo "note: bwrap cannot run here; the gateway runs jobs with --sandbox-isolation none"
fi

# A fake nvidia-smi first on the gateway's PATH: it records its arguments.
mkdir -p "$TMP/fakebin"
cat >"$TMP/fakebin/nvidia-smi" <<EOS
#!/bin/sh
echo "\$*" >>"$TMP/smi.log"
case "\$*" in *query-supported-clocks*) printf '1410\n1980\n1005\n' ;; esac
EOS
chmod +x "$TMP/fakebin/nvidia-smi"
: >"$TMP/smi.log"

# start_server STATE [ARGS...]: serve on a free loopback port; URL and TOKEN set.
start_server() {
    local state=$1
    shift
    rm -f "$state/listen"
    PATH="$TMP/fakebin:$PATH" "$AKA" gateway serve --listen 127.0.0.1:0 --state-dir "$state" \
        --sandbox-isolation "$ISO" "$@" >>"$TMP/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do [ -s "$state/listen" ] && break; sleep 0.1; done
    URL=$(cat "$state/listen" 2>/dev/null)
    TOKEN=$(cat "$state/token" 2>/dev/null)
    [ -n "$URL" ] || { cat "$TMP/server.log"; echo "FAIL: the gateway did not start"; exit 1; }
}

# api METHOD PATH [BODY-FILE] [TOKEN]: the status on stdout, the body in $TMP/body.
api() {
    local tok=${4-$TOKEN} data=()
    [ -n "${3:-}" ] && data=(--data-binary "@$3")
    curl -s -o "$TMP/body" -w '%{http_code}' -X "$1" ${tok:+-H "Authorization: Bearer $tok"} \
        "${data[@]}" "$URL$2"
}
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$TMP/body" "$1"; }

# body FILE ARGV-JSON [EXTRA-PYTHON-DICT]: a dev request running ARGV.
body() {
    python3 - "$@" <<'PY'
import json, sys
out, argv = sys.argv[1], json.loads(sys.argv[2])
extra = eval(sys.argv[3]) if len(sys.argv) > 3 else {}
req = {"spec": {"target_hardware": ["local"]}, "job": {"argv": argv, "timeout_s": 120}}
for k, v in extra.items():
    if k.startswith("job."):
        req["job"][k[4:]] = v
    else:
        req[k] = v
json.dump(req, open(out, "w"))
PY
}
# wait_status ID STATUS: long-poll until the job has STATUS.
wait_status() {
    local code
    code=$(api GET "/v1/jobs/$1?wait=true&timeout=60")
    [ "$code" = 200 ] && [ "$(field 'd["status"]')" = "$2" ]
}

STATE=$TMP/state
start_server "$STATE" --workers 2 --gpus 0,1 --max-request-mb 1 --max-output-mb 1

# ---- 1. token and auth ----
mode=$(stat -c %a "$STATE/token")
[ "$mode" = 600 ] && ok "token file created 0600" || fail "token file mode $mode"
[ "$(api GET /healthz "" "")" = 200 ] && [ "$(cat "$TMP/body")" = ok ] && ok "/healthz" ||
    fail "/healthz"
for route in /v1/env /v1/jobs /v1/jobs/dv_000000000000; do
    a=$(api GET $route "" "")
    b=$(api GET $route "" wrong-token-wrong-token)
    [ "$a" = 401 ] && [ "$b" = 401 ] && ok "401 on $route without and with a wrong token" ||
        fail "$route: $a without the token, $b with a wrong one"
done
body "$TMP/true.json" '["true"]'
[ "$(api POST /v1/jobs/dev "$TMP/true.json" "")" = 401 ] && ok "401 on submit without token" ||
    fail "submit without the token was not refused"
[ "$(curl -s "$URL/v1/jobs" | grep -c '"job_id"')" = 0 ] || fail "a job list leaked without token"

# ---- 2. every route ----
[ "$(api GET /v1/env)" = 200 ] && [ "$(field 'd["env"][0]["gpu"]')" = local ] &&
    [ "$(field 'd["env"][0]["workers"]')" = 2 ] && ok "GET /v1/env" || fail "GET /v1/env"
[ "$(api GET /v1/env/local)" = 200 ] && ok "GET /v1/env/local" || fail "GET /v1/env/local"
[ "$(api GET /v1/env/h100)" = 404 ] && ok "GET /v1/env/other: 404" || fail "/v1/env/other"
declare -A ids
for route in /v1/jobs/eval /v1/jobs/profile /v1/jobs/dev /v1/evals; do
    body "$TMP/r.json" '["sh","-c","echo route-'"${route##*/}"'"]'
    code=$(api POST $route "$TMP/r.json")
    ids[$route]=$(field 'd.get("job_id","")')
    [ "$code" = 202 ] && [ -n "${ids[$route]}" ] && ok "POST $route: 202" ||
        fail "POST $route: $code $(cat "$TMP/body")"
done
[ "${ids[/v1/jobs/eval]:0:3}" = ev_ ] && [ "${ids[/v1/jobs/profile]:0:3}" = pf_ ] &&
    [ "${ids[/v1/jobs/dev]:0:3}" = dv_ ] && [ "${ids[/v1/evals]:0:3}" = ev_ ] &&
    ok "job ids by kind (ev_, pf_, dv_; /v1/evals is eval)" || fail "job id prefixes: ${ids[*]}"
if wait_status "${ids[/v1/jobs/dev]}" succeeded &&
    [ "$(field 'd["result"]["stdout"]')" = route-dev ] &&
    [ "$(field 'd["result"]["isolation"]')" = "$ISO" ]; then
    ok "GET /v1/jobs/{id}: the result with the job's stdout and the isolation used"
else fail "GET dev job: $(cat "$TMP/body")"; fi
wait_status "${ids[/v1/evals]}" succeeded
[ "$(api GET "/v1/evals/${ids[/v1/evals]}")" = 200 ] && [ "$(field 'd["kind"]')" = eval ] &&
    ok "GET /v1/evals/{id}" || fail "GET /v1/evals/{id}"
[ "$(api GET /v1/jobs/dv_nosuchjob000)" = 404 ] && ok "unknown job: 404" || fail "unknown job"
wait_status "${ids[/v1/jobs/profile]}" succeeded
wait_status "${ids[/v1/jobs/eval]}" succeeded
[ "$(api GET '/v1/jobs?kind=eval&limit=200&sort=created_at')" = 200 ] &&
    [ "$(field 'len(d["jobs"])')" = 2 ] && [ "$(field 'd["jobs"][0]["job_id"]')" = "${ids[/v1/jobs/eval]}" ] &&
    ok "GET /v1/jobs?kind=eval (oldest first)" || fail "list by kind: $(cat "$TMP/body")"
[ "$(api GET '/v1/jobs?status=succeeded')" = 200 ] && [ "$(field 'len(d["jobs"])')" -ge 4 ] &&
    ok "GET /v1/jobs?status=succeeded" || fail "list by status"
for q in kind=bogus status=bogus limit=0 limit=201 sort=name; do
    [ "$(api GET "/v1/jobs?$q")" = 400 ] || fail "GET /v1/jobs?$q was not 400"
done
ok "list filters out of range: 400"
[ "$(api POST /v1/jobs/disassemble "$TMP/true.json")" = 501 ] &&
    [ "$(field 'd["error"]["reason"]')" = kind_not_supported ] && ok "disassemble: 501" ||
    fail "disassemble"
[ "$(api GET /v2/nothing)" = 404 ] && [ "$(api POST /v1/jobs/bogus "$TMP/true.json")" = 404 ] &&
    ok "unknown routes (and job kinds): 404" || fail "unknown routes"
[ "$(api POST "/v1/jobs/${ids[/v1/jobs/dev]}/cancel")" = 200 ] &&
    [ "$(field 'd["status"]')" = succeeded ] && ok "cancel of an ended job leaves it as it was" ||
    fail "cancel of an ended job"

# ---- 3. idempotency ----
body "$TMP/k1.json" '["true"]' '{"idempotency_key": "key-1"}'
body "$TMP/k2.json" '["false"]' '{"idempotency_key": "key-1"}'
api POST /v1/jobs/dev "$TMP/k1.json" >/dev/null; first=$(field 'd["job_id"]')
api POST /v1/jobs/dev "$TMP/k1.json" >/dev/null; second=$(field 'd["job_id"]')
[ "$first" = "$second" ] && ok "same key, same body: the same job ($first)" ||
    fail "idempotent resubmission made $first and $second"
[ "$(api POST /v1/jobs/dev "$TMP/k2.json")" = 409 ] && ok "same key, another body: 409" ||
    fail "key reuse with another body: $(cat "$TMP/body")"
n=$(api GET '/v1/jobs?limit=200' >/dev/null; field 'sum(1 for j in d["jobs"] if j["idempotency_key"] == "key-1")')
[ "$n" = 1 ] && ok "one row for the key" || fail "$n rows for key-1"

# ---- 4. long-poll returns on completion ----
body "$TMP/sleep.json" '["sleep","1"]'
api POST /v1/jobs/dev "$TMP/sleep.json" >/dev/null; id=$(field 'd["job_id"]')
t0=$(date +%s%N)
api GET "/v1/jobs/$id?wait=true&timeout=60" >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$(field 'd["status"]')" = succeeded ] && [ "$ms" -lt 10000 ]; then
    ok "long-poll returned ${ms} ms after submit, when the job ended (timeout was 60 s)"
else fail "long-poll: status $(field 'd["status"]') after $ms ms"; fi
api GET "/v1/jobs/$id" >/dev/null
[ "$(field 'd["status"]')" = succeeded ] || fail "plain GET after the long-poll"

# ---- 5. cancel ends the job's process group ----
body "$TMP/hang.json" '["sh","-c","sleep 3141 & sleep 3142 & wait"]'
api POST /v1/jobs/dev "$TMP/hang.json" >/dev/null; id=$(field 'd["job_id"]')
for _ in $(seq 100); do pgrep -f 'sleep 3142' >/dev/null && break; sleep 0.1; done
pgrep -f 'sleep 314[12]' >/dev/null || fail "the job's processes never appeared"
[ "$(api POST "/v1/jobs/$id/cancel")" = 200 ] && [ "$(field 'd["status"]')" = cancelled ] &&
    ok "cancel: 200, cancelled" || fail "cancel: $(cat "$TMP/body")"
for _ in $(seq 50); do pgrep -f 'sleep 314[12]' >/dev/null || break; sleep 0.1; done
if pgrep -f 'sleep 314[12]' >/dev/null; then
    fail "processes of the cancelled job are left: $(pgrep -af 'sleep 314[12]')"
    pkill -f 'sleep 314[12]'
else ok "cancel ended every process of the job's group"; fi
wait_status "$id" cancelled && ok "the cancelled job stays cancelled after its worker ends" ||
    fail "status after cancel: $(field 'd["status"]')"

# ---- 6. bad input ----
printf '{"spec": ' >"$TMP/bad.json"
[ "$(api POST /v1/jobs/dev "$TMP/bad.json")" = 400 ] && field 'd["error"]["message"]' | grep -q 'request body: invalid JSON' &&
    ok "malformed JSON: 400 naming the request body" || fail "malformed JSON: $(cat "$TMP/body")"
check_422() { # NAME FIELD ARGV EXTRA
    body "$TMP/v.json" "$3" "${4:-{\}}"
    local code
    code=$(api POST /v1/jobs/dev "$TMP/v.json")
    if [ "$code" = 422 ] && field 'd["error"]["message"]' | grep -qF "$2"; then ok "$1: 422 naming $2"
    else fail "$1: $code $(cat "$TMP/body")"; fi
}
check_422 "unknown job kind" "job.kind" '["true"]' '{"job.kind": "bogus"}'
check_422 "unknown field" "job.argvs" '["true"]' '{"job.argvs": ["x"]}'
check_422 "empty command" "job.argv" '[]'
check_422 "traversal in a file path" "job.files[0].path" '["true"]' '{"job.files": [{"path": "../x", "content_b64": ""}]}'
check_422 "bad base64" "job.files[0].content_b64" '["true"]' '{"job.files": [{"path": "x", "content_b64": "%%%"}]}'
check_422 "a never-shipped file" "job.files[0].path" '["true"]' '{"job.files": [{"path": ".git/config", "content_b64": ""}]}'
check_422 "too many GPUs" "spec.num_gpus" '["true"]' '{"spec": {"target_hardware": ["local"], "num_gpus": 2}}'
check_422 "unknown hardware" "spec.target_hardware" '["true"]' '{"spec": {"target_hardware": ["h100"]}}'
check_422 "bad env name" "job.env" '["true"]' '{"job.env": ["1X=y"]}'
check_422 "timeout out of range" "job.timeout_s" '["true"]' '{"job.timeout_s": 0}'
python3 -c 'import json; json.dump({"spec":{"target_hardware":["local"]},"job":{"argv":["true"],"env":["PAD="+"x"*(2<<20)]}}, open("'"$TMP/big.json"'","w"))'
[ "$(api POST /v1/jobs/dev "$TMP/big.json")" = 413 ] && field 'd["error"]["message"]' | grep -q 'request body' &&
    ok "a body over --max-request-mb: 413" || fail "oversize body: $(head -c 300 "$TMP/body")"
# The same body chunked (no Content-Length): refused as the bytes arrive.
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    -H 'Transfer-Encoding: chunked' --data-binary "@$TMP/big.json" "$URL/v1/jobs/dev")
[ "$code" = 413 ] && ok "a chunked body over the limit: 413" || fail "chunked oversize body: $code"
body "$TMP/loud.json" '["sh","-c","head -c 3000000 /dev/zero | tr \"\\0\" x"]'
api POST /v1/jobs/dev "$TMP/loud.json" >/dev/null; id=$(field 'd["job_id"]')
wait_status "$id" failed && [ "$(field 'd["error"]["reason"]')" = output_too_large ] &&
    ok "output over --max-output-mb: failed, output_too_large" ||
    fail "loud job: $(field 'd["status"], d["error"]')"
usage() { # NAME ARGS...: exit 2
    local name=$1
    shift
    "$AKA" "$@" >/dev/null 2>"$TMP/usage.err"
    local rc=$?
    [ "$rc" = 2 ] && ok "$name: exit 2 ($(head -c 120 "$TMP/usage.err"))" || fail "$name: exit $rc"
}
usage "--workers 0" gateway serve --workers 0 --state-dir "$TMP/u"
usage "a non-loopback address" gateway serve --listen 0.0.0.0:0 --state-dir "$TMP/u"
usage "--listen without a port" gateway serve --listen 127.0.0.1 --state-dir "$TMP/u"
usage "GPUs not split evenly" gateway serve --gpus 0,1,2 --workers 2 --state-dir "$TMP/u"
usage "an unknown subcommand" gateway bogus
mkdir -p "$TMP/open"; echo 0123456789abcdef0123 >"$TMP/open/token"; chmod 644 "$TMP/open/token"
usage "a token file others can read" gateway serve --listen 127.0.0.1:0 --state-dir "$TMP/open" --token-file "$TMP/open/token"
usage "sandbox replay without FILE" sandbox replay
usage "sandbox replay of a missing file" sandbox replay "$TMP/nothing.json"
usage "--sandbox gateway without --sandbox-url" sandbox run --sandbox gateway --sandbox-hardware local -- true
usage "--sandbox-profile without its URL" sandbox run --sandbox-profile pre --sandbox-hardware local -- true
[ "$(ls "$TMP/u" 2>/dev/null | wc -l)" = 0 ] && ok "misuse wrote nothing" || fail "misuse left $(ls "$TMP/u")"

# ---- 7. clock locking, opt-in ----
[ ! -s "$TMP/smi.log" ] && ok "no request asked: nvidia-smi never ran" ||
    fail "nvidia-smi ran unasked: $(cat "$TMP/smi.log")"
body "$TMP/lock.json" '["true"]' '{"lock_clocks": True}'
api POST /v1/jobs/dev "$TMP/lock.json" >/dev/null; id=$(field 'd["job_id"]')
wait_status "$id" succeeded
if grep -qE -- '^-i [01] --lock-gpu-clocks=1980,1980$' "$TMP/smi.log" &&
    grep -qE -- '^-i [01] --reset-gpu-clocks$' "$TMP/smi.log"; then
    ok "lock_clocks: locked at the highest supported clock, reset after ($(tr '\n' ';' <"$TMP/smi.log"))"
else fail "lock_clocks: nvidia-smi calls: $(cat "$TMP/smi.log")"; fi
stop_server

# ---- 8. SIGKILL mid-job, restart ----
KS=$TMP/kstate
start_server "$KS" --workers 1
body "$TMP/long.json" '["sh","-c","sleep 2718"]'
api POST /v1/jobs/dev "$TMP/long.json" >/dev/null; running=$(field 'd["job_id"]')
queued=()
for i in 1 2 3; do
    body "$TMP/q.json" '["sh","-c","echo queued-'$i'"]'
    api POST /v1/jobs/dev "$TMP/q.json" >/dev/null; queued+=("$(field 'd["job_id"]')")
done
for _ in $(seq 100); do pgrep -f 'sleep 2718' >/dev/null && break; sleep 0.1; done
api GET "/v1/jobs/$running" >/dev/null
[ "$(field 'd["status"]')" = running ] || fail "the long job is not running"
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=
start_server "$KS" --workers 1
api GET "/v1/jobs/$running" >/dev/null
if [ "$(field 'd["status"]')" = failed ] && [ "$(field 'd["error"]["reason"]')" = scheduler_restarted ] &&
    [ "$(field 'd["error"]["error_class"]')" = interrupted ]; then
    ok "the job running at SIGKILL: failed, scheduler_restarted ($(field 'd["error"]["message"]' | head -c 80)...)"
else fail "the interrupted job: $(cat "$TMP/body")"; fi
for i in 0 1 2; do
    wait_status "${queued[$i]}" succeeded && [ "$(field 'd["result"]["stdout"]')" = "queued-$((i + 1))" ] ||
        fail "queued job ${queued[$i]} after the restart: $(field 'd["status"]')"
done
ok "the queued jobs ran after the restart"
api GET '/v1/jobs?limit=200' >/dev/null
[ "$(field 'len(d["jobs"])')" = 4 ] && ok "all 4 jobs accounted for" || fail "job count $(field 'len(d["jobs"])')"
pgrep -f 'sleep 2718' >/dev/null && { fail "the killed gateway's job is still running"; pkill -f 'sleep 2718'; } ||
    ok "no process of the interrupted job is left"
stop_server

# ---- 9. the client transport ----
start_server "$STATE" --workers 2
export ATREX_SANDBOX_TOKEN_FILE=$STATE/token ATREX_SANDBOX_REQUEST_DIR=$TMP/requests
unset ATREX_SANDBOX_ATREX_BENCH_VERSION ATREX_SANDBOX_REQUIREMENTS_FILE
GW=(--sandbox gateway --sandbox-url "$URL" --sandbox-hardware local)
OPS=$SRC/examples/ops
EV=(--op-dir "$OPS/vector_add" --framework C --platform cpu --timed-runs 4 --warmup 1)
verdict() { python3 -c 'import json,sys; r=[json.loads(l.split("=",1)[1]) for l in open(sys.argv[1]) if l.startswith("RESULT_JSON=")][-1]; print(r["all_pass"], r["passed"], r["total"])' "$1"; }
for cand in "$OPS/vector_add/seeds/C/kernel.c" "$SRC/tests/redteam/native/wrong_result.c"; do
    [ -f "$cand" ] || cand=$(ls "$SRC"/tests/redteam/native/*.c | head -1)
    "$AKA" eval "${EV[@]}" --kernel "$cand" --sandbox-isolation "$ISO" >"$TMP/local.out" 2>"$TMP/local.err"; lrc=$?
    "$AKA" eval "${EV[@]}" --kernel "$cand" "${GW[@]}" >"$TMP/gw.out" 2>"$TMP/gw.err"; grc=$?
    lv=$(verdict "$TMP/local.out" 2>/dev/null); gv=$(verdict "$TMP/gw.out" 2>/dev/null)
    if [ "$lrc" = "$grc" ] && [ -n "$gv" ] && [ "$lv" = "$gv" ]; then
        ok "aka eval $(basename "$cand") through the gateway: exit $grc, verdict '$gv' as local"
    else fail "$(basename "$cand"): local exit $lrc '$lv', gateway exit $grc '$gv': $(tail -3 "$TMP/gw.err")"; fi
done
grep -q 'sandbox bwrap\|sandbox none' "$TMP/gw.err" || true
# The heartbeat goes on while the client long-polls the gateway: a candidate that waits
# 300 ms a call makes a job of several seconds.
cat >"$TMP/slow_kernel.c" <<'EOF_C'
/* vector_add, but every call first waits 300 ms. */
#define _POSIX_C_SOURCE 199309L
#include "aka_native_abi.h"
#include <time.h>

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    struct timespec ts = {0, 300000000L};
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    nanosleep(&ts, NULL);
    const float *x = inputs[0].data, *y = inputs[1].data;
    float *z = outputs[0].data;
    for (int64_t i = 0; i < outputs[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
EOF_C
"$AKA" eval "${EV[@]}" --shape-id n4k --kernel "$TMP/slow_kernel.c" "${GW[@]}" --heartbeat 1 \
    >"$TMP/hb.out" 2>"$TMP/hb.err"
grep -q '^aka eval: the job is still running ([0-9]* s)$' "$TMP/hb.err" &&
    ok "heartbeat through the gateway: the client says the job is still running" ||
    fail "heartbeat through the gateway: no 'still running' line: $(tail -3 "$TMP/hb.err")"
echo hello >"$TMP/in.txt"
(cd "$TMP" && "$AKA" sandbox run "${GW[@]}" --input in.txt --sync out/r.txt --artifact-dir "$TMP/arts" \
    -- sh -c 'mkdir out; cat in.txt > out/r.txt; echo shipped; exit 3' >"$TMP/run.out" 2>&1); rc=$?
[ "$rc" = 3 ] && [ "$(cat "$TMP/arts/out/r.txt" 2>/dev/null)" = hello ] && grep -q shipped "$TMP/run.out" &&
    ok "sandbox run through the gateway: exit status, stdout and artifacts come back" ||
    fail "sandbox run via gateway: rc $rc $(cat "$TMP/run.out")"
rec=$(ls -t "$TMP"/requests/*.json | head -1)
[ "$(stat -c %a "$rec")" = 600 ] && ok "request recorded 0600" || fail "record mode"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); b=r["body"]; assert "num_gpus" in b["spec"] and "runtime" in b, b.keys()' "$rec" &&
    ok "the recorded request carries num_gpus and the runtime pins" || fail "record content"
out=$(cd "$TMP" && "$AKA" sandbox replay "$rec" 2>/dev/null); rc=$?
[ "$rc" = 3 ] && [ "$out" = shipped ] && ok "sandbox replay re-ran it (exit 3, same stdout)" || fail "replay: $rc '$out'"
ATREX_SANDBOX_ATREX_BENCH_VERSION=9.9.9 "$AKA" sandbox replay "$rec" >/dev/null 2>"$TMP/replay.err"; rc=$?
[ "$rc" = 2 ] && grep -q ATREX_SANDBOX_ATREX_BENCH_VERSION "$TMP/replay.err" &&
    ok "replay with another pinned runtime: exit 2" || fail "replay with changed pins: $rc"
# SIGINT while the job runs: exit 130, the job cancelled at the gateway, nothing left.
"$AKA" sandbox run "${GW[@]}" -- sh -c 'sleep $((1600 + 18))' >/dev/null 2>&1 &
cpid=$!
for _ in $(seq 100); do pgrep -f 'sleep 1618' >/dev/null && break; sleep 0.1; done
kill -INT $cpid; wait $cpid; rc=$?
sleep 0.5
api GET '/v1/jobs?limit=1' >/dev/null
[ "$rc" = 130 ] && [ "$(field 'd["jobs"][0]["status"]')" = cancelled ] && ! pgrep -f 'sleep 1618' >/dev/null &&
    ok "SIGINT: exit 130, the gateway job cancelled, no process left" ||
    { fail "SIGINT: exit $rc, job $(field 'd["jobs"][0]["status"]')"; pkill -f 'sleep 1618'; }
AGATE_TOKEN=not-the-token-at-all "$AKA" sandbox run "${GW[@]}" -- true >/dev/null 2>&1; rc=$?
[ "$rc" = 75 ] && ok "a wrong token: exit 75 (the environment's, not the candidate's)" || fail "wrong token: $rc"
stop_server
"$AKA" sandbox run "${GW[@]}" -- true >/dev/null 2>"$TMP/down.err"; rc=$?
[ "$rc" = 75 ] && ok "gateway down (connection refused, retried): exit 75" || fail "gateway down: $rc"

echo "gateway: $failures failure(s)"
[ "$failures" = 0 ]
