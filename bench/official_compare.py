"""official_compare.py — one summary line per evaluation for bench/h200_official.sh.

    python3 bench/official_compare.py KIND NAME RC START_EPOCH FILE

KIND is "aka" (FILE: `aka eval --json` output), "sol" (FILE: sol-execbench's traces
JSONL) or "atrex" (FILE: Atrex-Bench's eval_result.json). Prints the wall time since
START_EPOCH, the verdict and per shape the latency in microseconds (aka: its latency by
the owner's statistic, with the median beside a mean; sol: the trace's latency and the
reference's; atrex: mean and median of the samples), so that the three can be put in one
table by hand.
"""
import json
import statistics
import sys
import time


def aka(path):
    doc = json.load(open(path))
    r = doc.get("result", doc)
    timing = r.get("timing") or {}
    lat = {k: round(v, 2) for k, v in (r.get("latency_us_by_shape") or {}).items()}
    ref = {k: round(v, 2) for k, v in (r.get("reference_latency_us_by_shape") or {}).items()}
    fails = [str(f)[:200] for f in (r.get("failures") or [])[:2]]
    diags = [str(d)[:200] for d in (r.get("diagnostics") or []) if "timing" in str(d)][:3]
    return (f"pass={r.get('all_pass')} method={timing.get('method')} "
            f"stat={r.get('latency_statistic') or timing.get('statistic')} lat={lat} ref={ref} "
            f"fail={fails} diag={diags}")


def sol(path):
    rows = []
    for line in open(path):
        if not line.strip().startswith("{"):
            continue
        t = json.loads(line)
        ev = t.get("evaluation") or {}
        perf = ev.get("performance") or {}
        uuid = str((t.get("workload") or {}).get("uuid") or "?")
        rows.append(f"{uuid[-4:]}:{ev.get('status')}:"
                    f"{1e3 * float(perf.get('latency_ms') or 0):.2f}/"
                    f"{1e3 * float(perf.get('reference_latency_ms') or 0):.2f}")
    return "lat/ref " + " ".join(rows)


def atrex(path):
    doc = json.load(open(path))
    perf = (doc.get("performance") or {}).get("shapes") or {}
    passed = (doc.get("passed") or {}).get("correctness") or {}
    rows = []
    for sid, p in perf.items():
        s = [1e3 * float(x["end_to_end_time_ms"]) for x in p.get("samples") or []
             if isinstance(x.get("end_to_end_time_ms"), (int, float))]
        verdict = (passed.get(sid) or {}).get("status")
        if s:
            rows.append(f"{sid}:{verdict}:mean {statistics.fmean(s):.2f} "
                        f"median {statistics.median(s):.2f}")
        else:
            rows.append(f"{sid}:{verdict}:{p.get('error')}")
    return "; ".join(rows) or f"error={doc.get('error')}"


def main():
    kind, name, rc, start, path = sys.argv[1:6]
    wall = time.time() - float(start)
    try:
        body = {"aka": aka, "sol": sol, "atrex": atrex}[kind](path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        body = f"(unreadable {path}: {exc})"
    print(f"{name} rc={rc} wall={wall:.1f}s {body}")


if __name__ == "__main__":
    main()
