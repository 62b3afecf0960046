"""phases.py STORE - where the judge's time went, per attempt of a kjudge
eval store (attempts.env's judge_phases; docs/store.md).

One line per attempt: the judge's seconds, and for its main run the
workers' start, the wait for the device, verify, the benchmark; then the
workers' own phases summed over the attempt (inputs, forward, checks,
write of the outputs, warm-up, the timed loop, profile), the judge's
comparisons, and the disabled-kernels run when there was one.
"""
import json
import sqlite3
import sys


def main(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("SELECT task, model, attempt, status, judge_s, env FROM attempts "
                      "WHERE state = 'done' ORDER BY finished_at").fetchall()
    cols = ("start", "wait", "verify", "bench")
    side = ("inputs_s", "forward_s", "checks_s", "write_s", "warmup_s", "timed_loop_s", "profile_s")
    print(f"{'task':40} {'status':6} {'judge':>6} " + " ".join(f"{c:>6}" for c in cols)
          + " | ref: " + " ".join(f"{s[:-2][:6]:>6}" for s in side)
          + " | cand: " + " ".join(f"{s[:-2][:6]:>6}" for s in side) + " | compare disabled")
    tot = {}
    for task, model, att, status, judge_s, env in rows:
        ph = (json.loads(env) if env else {}).get("judge_phases") or {}
        m = ph.get("main") or {}
        d = m.get("detail") or {}
        vals = [m.get(k) for k in ("start_s", "device_wait_s", "verify_s", "benchmark_s")]
        ref = [(d.get("reference") or {}).get(s) for s in side]
        cand = [(d.get("candidate") or {}).get(s) for s in side]
        dis = ph.get("disabled")
        dis_s = sum((dis or {}).get(k) or 0 for k in ("start_s", "device_wait_s", "verify_s")) if dis else None
        f = lambda v: f"{v:6.2f}" if isinstance(v, (int, float)) else f"{'-':>6}"
        print(f"{task[:40]:40} {status[:6]:6} {f(judge_s)} " + " ".join(f(v) for v in vals)
              + " |      " + " ".join(f(v) for v in ref) + " |       " + " ".join(f(v) for v in cand)
              + f" | {f(d.get('compare_s'))} {f(dis_s)}")
        for k, v in zip(("judge",) + cols + tuple("ref_" + s for s in side) + tuple("cand_" + s for s in side)
                        + ("compare",), [judge_s] + vals + ref + cand + [d.get("compare_s")]):
            if isinstance(v, (int, float)):
                tot[k] = tot.get(k, 0.0) + v
    print("sums:", json.dumps({k: round(v, 2) for k, v in tot.items()}))


if __name__ == "__main__":
    main(sys.argv[1])
