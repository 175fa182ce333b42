#!/usr/bin/env bash
# gateway_load.sh — a bounded loopback load test of `aka gateway serve` (issue 13,
# must-show 2): CLIENTS concurrent clients submit JOBS trivial dev jobs (`true`, run
# through Bubblewrap like any job) and long-poll each until it ends.
#
# usage: bench/gateway_load.sh [AKA_BIN] [JOBS] [CLIENTS] [WORKERS] [EXTRA-JOB-JSON]
#        (defaults: build/aka, 2000, 16, 4, {})
#
# Reports: jobs/s (JOBS over the wall time from the first submit to the last job's end),
# submit-to-done latency p50/p90/p99/max as each client saw it (POST, then GET
# ?wait=true until the job ended), the 1-minute load average before and after, and
# checks that none was lost: every job the clients submitted ended `succeeded`, and the
# gateway's own table (jobs.db, read after it stopped) holds exactly JOBS succeeded jobs.
# GW_WORK_DIR=DIR stages jobs there (e.g. a tmpfs) instead of STATE/work.
# GW_ISOLATION=none runs the jobs without Bubblewrap (the gateway's own cost alone).
# EXTRA-JOB-JSON is merged into each request's `job` (e.g. '{"pids_max": 0}').
set -euo pipefail
AKA=${1:-build/aka}
JOBS=${2:-2000}
CLIENTS=${3:-16}
WORKERS=${4:-4}
EXTRA=${5:-'{}'}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aka-gw-load.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

"$AKA" gateway serve --listen 127.0.0.1:0 --state-dir "$WORK/state" --workers "$WORKERS" \
    --sandbox-isolation "${GW_ISOLATION:-bwrap}" ${GW_WORK_DIR:+--work-dir "$GW_WORK_DIR"} \
    2>"$WORK/server.log" &
PID=$!
for _ in $(seq 100); do [ -s "$WORK/state/listen" ] && break; sleep 0.1; done
URL=$(cat "$WORK/state/listen")
echo "gateway: $URL, $WORKERS workers; $JOBS jobs from $CLIENTS clients; load before: $(cut -d' ' -f1 /proc/loadavg)"

python3 - "$URL" "$WORK/state/token" "$JOBS" "$CLIENTS" "$EXTRA" <<'PY'
import http.client, json, sys, threading, time, urllib.parse
url, token_file, jobs, clients, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5])
token = open(token_file).read().strip()
u = urllib.parse.urlparse(url)
hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
lat, ids, bad, lock = [], [], [], threading.Lock()

def client(n):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    for _ in range(n):
        job = {"argv": ["true"], "timeout_s": 60}
        job.update(extra)
        body = json.dumps({"spec": {"target_hardware": ["local"]}, "job": job})
        t0 = time.perf_counter()
        c.request("POST", "/v1/jobs/dev", body, hdr)
        r = c.getresponse(); acc = json.loads(r.read())
        if r.status != 202:
            with lock: bad.append(("submit", r.status, acc))
            continue
        while True:
            c.request("GET", "/v1/jobs/%s?wait=true&timeout=60" % acc["job_id"], headers=hdr)
            r = c.getresponse(); v = json.loads(r.read())
            if v["status"] in ("succeeded", "failed", "cancelled"):
                break
        t1 = time.perf_counter()
        with lock:
            lat.append(t1 - t0); ids.append(acc["job_id"])
            if v["status"] != "succeeded":
                bad.append(("job", v["status"], v.get("error")))

per = [jobs // clients + (1 if i < jobs % clients else 0) for i in range(clients)]
ths = [threading.Thread(target=client, args=(n,)) for n in per]
t0 = time.perf_counter()
for t in ths: t.start()
for t in ths: t.join()
wall = time.perf_counter() - t0
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
print("jobs ended: %d of %d, distinct ids %d, failures %d" % (len(lat), jobs, len(set(ids)), len(bad)))
for b in bad[:5]: print("  failure:", b)
print("wall %.2f s, throughput %.1f jobs/s" % (wall, len(lat) / wall))
print("submit-to-done latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f" % (q(0.5), q(0.9), q(0.99), lat[-1] * 1000))
sys.exit(0 if len(lat) == jobs and len(set(ids)) == jobs and not bad else 1)
PY
echo "load after: $(cut -d' ' -f1 /proc/loadavg)"
kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
python3 - "$WORK/state/jobs.db" "$JOBS" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = dict(db.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
print("gateway table:", rows)
sys.exit(0 if rows == {"succeeded": int(sys.argv[2])} else 1)
PY
