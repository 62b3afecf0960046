"""serve_check.py - what tests/cli/t0860-serve.sh and t0861-serve-verdicts.sh
check of a real `kjudge serve` on the loopback, through the Python client of
python/ (kjudge_client).

    serve_check.py verdicts   honest and hostile candidates at once: the
                              verdicts their expect.json give (verify's)
    serve_check.py errors     every error answer with its JSON; a drain
    serve_check.py slow       a client that sends a byte a second delays
                              no other
    serve_check.py kill       kill -9 at random moments, 10 times, then a
                              clean run: every accepted evaluation has
                              exactly one result
    serve_check.py warm       workers started before the request are used
                              (the kernel layer's second pair too); killed
                              while they wait, the evaluation starts its
                              own and is charged nothing; --no-warm starts
                              none ahead

Each prints what failed and exits 1; 0 when everything held.  Environment:
KJUDGE (the binary), KJ_TESTS (tests/), the working directory a scratch one.
"""
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["KJ_TESTS"], "..", "python"))
from kjudge_client import Client, ServeError  # noqa: E402

KJUDGE = os.environ["KJUDGE"]
CANDS = os.path.join(os.environ["KJ_TESTS"], "candidates")
TASK = open(os.path.join(CANDS, "addmul_torch.py")).read()


def cand(name):
    return open(os.path.join(CANDS, name, "candidate.py")).read()


# Right, but two and a half seconds a call: still being judged when the test
# drains the server.
SLOW = """import time
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        time.sleep(2.5)
        return x * y + x
"""


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class Server:
    """A kjudge serve on a free port of the loopback."""

    def __init__(self, *args, db="s.db"):
        self.p = subprocess.Popen([KJUDGE, "serve", "--db", db, "--device", "cpu",
                                   "--input_sets", "1"] + list(args),
                                  stdout=subprocess.PIPE, stderr=open("serve.err", "ab"))
        line = self.p.stdout.readline().decode()
        check(line.startswith("listening on http://127.0.0.1:"),
              "the first line is %r (stderr: %s)" % (line, open("serve.err").read()[-500:]))
        self.url = line.split()[-1]

    def term(self, timeout=120):
        self.p.send_signal(signal.SIGTERM)
        return self.p.wait(timeout)

    def kill(self):
        self.p.kill()
        self.p.wait(30)


def raw(url, method, path, body=None, headers=None, data=None):
    """One request as sent, the answer's (status, headers, JSON)."""
    import http.client
    import urllib.parse
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    if body is not None:
        data = json.dumps(body).encode()
    c.request(method, path, body=data, headers=headers or {})
    r = c.getresponse()
    text = r.read()
    c.close()
    try:
        j = json.loads(text)
    except ValueError:
        j = text.decode(errors="replace")
    return r.status, dict(r.getheaders()), j


def expect_error(got, status, code, words=""):
    st, _, j = got
    check(st == status, "expected %d %s, got %d %r" % (status, code, st, j))
    check(isinstance(j, dict) and set(j) >= {"error"} and j["error"]["code"] == code,
          "the body of %d is not {error: {code: %s}}: %r" % (status, code, j))
    check(words in j["error"]["message"], "the message %r lacks %r" % (j["error"]["message"],
                                                                      words))


def verdicts():
    suite = os.path.join(os.environ["KJ_TESTS"], "eval", "suite")
    srv = Server("-j", "2", "--suite", suite)
    c = Client(srv.url)
    names = ["pass", "golden_thief", "crash_forward"]
    # A task of the suite by its name, beside the three given by source.
    wrong = c.submit(None, open(os.path.join(os.environ["KJ_TESTS"], "eval", "cands",
                                              "scale_wrong_on_2.py")).read(),
                     task_name="2_Scale", mode="verify", model="m")
    results = c.evaluate_many([(TASK, cand(n)) for n in names], concurrency=3, mode="verify",
                              model="m", timeout=300)
    r = c.wait(wrong, 300)
    check(r.status == "fail" and r.error_type == "AccuracyError" and r.raw["task"] == "2_Scale",
          "2_Scale by name: %s %s %s" % (r.status, r.error_type, r.message))
    for n, r in zip(names, results):
        want = json.load(open(os.path.join(CANDS, n, "expect.json")))
        check(r.cases_total == want["total_cases"] and r.cases_passed == want["passed_cases"],
              "%s: %s of %s cases passed, expected %s of %s (%s)" % (
                  n, r.cases_passed, r.cases_total, want["passed_cases"],
                  want["total_cases"], r.message))
        if want["exit"] == 0:
            check(r.status == "pass", "%s: %s, expected pass (%s)" % (n, r.status, r.message))
        else:
            check(r.status == "fail" and r.error_type == want["failures"][0]["error_type"],
                  "%s: %s %s, expected fail %s" % (n, r.status, r.error_type,
                                                   want["failures"][0]["error_type"]))
        check("seed" not in json.dumps(r.raw).lower(), "%s: the answer names a seed" % n)
    # The same client id is the same evaluation.
    a = c.submit(TASK, cand("pass"), mode="verify", model="m", id="again")
    b = c.submit(TASK, cand("pass"), mode="verify", model="m", id="again")
    check(a == b == "again", "a repeated id gave %s and %s" % (a, b))
    check(c.wait("again", 300).status == "pass", "the repeated id's verdict")
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    print("verdicts: pass, AccuracyError, ForwardError as verify gives them")


def errors():
    with open("token", "w") as f:
        f.write("sesame\n")
    os.chmod("token", 0o600)
    srv = Server("-j", "1", "--queue-max", "1", "--max-body-mb", "1", "--token-file", "token")
    url, auth = srv.url, {"Authorization": "Bearer sesame"}
    one = {"task": {"source": TASK}, "candidate": {"source": cand("pass")}, "mode": "verify"}
    st, _, j = raw(url, "GET", "/v1/health")
    check(st == 200 and j["status"] == "ok", "health without the token: %s %r" % (st, j))
    expect_error(raw(url, "POST", "/v1/evaluations", one), 401, "unauthorized")
    expect_error(raw(url, "POST", "/v1/evaluations", one, {"Authorization": "Bearer sesamE"}),
                 401, "unauthorized")
    expect_error(raw(url, "POST", "/v1/evaluations", None, auth, b"{not json"), 400,
                 "bad_request", "body: not JSON")
    expect_error(raw(url, "POST", "/v1/evaluations", {"task": {"source": TASK},
                                                      "candidate": {}}, auth),
                 400, "bad_request", "candidate.source: missing")
    expect_error(raw(url, "POST", "/v1/evaluations", dict(one, mode="fast"), auth), 400,
                 "bad_request", "mode: not one of")
    expect_error(raw(url, "POST", "/v1/evaluations", {"evaluations": [one, dict(one, seed=1)]},
                     auth), 400, "bad_request", "evaluations[1].seed: unknown field")
    expect_error(raw(url, "POST", "/v1/evaluations", {"task": {"name": "nope"},
                                                      "candidate": {"source": "x"}}, auth),
                 404, "not_found", "no task 'nope'")
    expect_error(raw(url, "GET", "/v1/evaluations/nope", None, auth), 404, "not_found")
    expect_error(raw(url, "DELETE", "/v1/evaluations/nope", None, auth), 404, "not_found")
    expect_error(raw(url, "POST", "/v1/evaluations", None, auth, b"x" * (1 << 20 | 1)), 413,
                 "too_large")
    expect_error(raw(url, "PUT", "/v1/evaluations", one, auth), 405, "method_not_allowed")
    # -j 1 and --queue-max 1: one judged, one queued, the third is refused.
    slow = dict(one, id="first", candidate={"source": SLOW})
    st, _, first = raw(url, "POST", "/v1/evaluations", slow, auth)
    check(st == 202 and first == {"id": "first", "status": "queued"}, "202: %s %r" % (st, first))
    deadline = time.time() + 30
    while raw(url, "GET", "/v1/evaluations/first", None, auth)[2]["status"] != "running":
        check(time.time() < deadline, "the first never ran")
        time.sleep(0.1)
    st, _, j = raw(url, "POST", "/v1/evaluations", dict(one, id="second", model="b"), auth)
    check(st == 202, "the second: %s %r" % (st, j))
    st, h, j = raw(url, "POST", "/v1/evaluations", dict(one, id="third", model="c"), auth)
    expect_error((st, h, j), 429, "queue_full")
    check(int(h.get("Retry-After", "0")) > 0, "429 without Retry-After: %r" % h)
    # The client waits what Retry-After says and tries again: the queue
    # has room once the second is cancelled.
    client = Client(url, token="sesame", retry_for=60)
    got = {}

    def third():
        t0 = time.monotonic()
        got["id"] = client.submit(TASK, SLOW, mode="verify", model="c", id="third")
        got["waited"] = time.monotonic() - t0
    th = threading.Thread(target=third)
    th.start()
    time.sleep(0.3)
    st, _, j = raw(url, "DELETE", "/v1/evaluations/second", None, auth)
    check(st == 200 and j["status"] == "cancelled", "DELETE of a queued one: %s %r" % (st, j))
    th.join(30)
    check(got.get("id") == "third" and got["waited"] >= 1.5,
          "the client's retry after 429: %r" % got)
    st, _, text = raw(url, "GET", "/metrics", None, auth)
    check(st == 200 and "kjudge_serve_queue_depth 1" in text and
          'kjudge_serve_finished_total{status="cancelled"} 1' in text,
          "/metrics: %s %r" % (st, text))
    # A drain: new work 503, the running one finishes, exit 0.
    srv.p.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    st, h, j = raw(url, "POST", "/v1/evaluations", dict(one, id="fourth"), auth)
    expect_error((st, h, j), 503, "draining")
    check(int(h.get("Retry-After", "0")) > 0, "503 without Retry-After: %r" % h)
    try:
        Client(url, token="sesame", retry_for=0).submit(TASK, SLOW, id="fifth")
        fail("the client did not raise on 503")
    except ServeError as e:
        check(e.status == 503 and e.code == "draining", "the client's error: %s" % e)
    except OSError:
        pass  # the drain had ended: nothing answers any more
    check(srv.p.wait(120) == 0, "the drain: exit %s" % srv.p.returncode)
    db = sqlite3.connect("s.db")
    rows = dict(db.execute("SELECT eval_id, state FROM serve_requests"))
    check(rows == {"first": "done", "second": "cancelled", "third": "queued"},
          "the store: %r" % rows)
    check(db.execute("SELECT state, status FROM attempts").fetchall() == [("done", "pass")],
          "the drained evaluation's attempt")
    print("errors: 400 401 404 405 413 429 503, each with its JSON; the drain finished")


# Right, but a minute a call: cancelled long before it could end.
STUCK = SLOW.replace("time.sleep(2.5)", "time.sleep(60)")


def cancel():
    """DELETE of an evaluation being judged: 202 cancelling, its judging
    child and workers killed (the one slot of -j 1 free again at once), the
    evaluation cancelled with nothing charged, no attempt counted."""
    srv = Server("-j", "1")
    url = srv.url
    one = {"task": {"source": TASK}, "candidate": {"source": STUCK}, "mode": "verify",
           "id": "stuck"}
    st, _, j = raw(url, "POST", "/v1/evaluations", one)
    check(st == 202, "the stuck one: %s %r" % (st, j))
    deadline = time.time() + 60
    while raw(url, "GET", "/v1/evaluations/stuck")[2]["status"] != "running":
        check(time.time() < deadline, "the stuck one never ran")
        time.sleep(0.1)
    time.sleep(1.0)  # its workers started
    st, _, j = raw(url, "DELETE", "/v1/evaluations/stuck")
    check(st == 202 and j == {"id": "stuck", "status": "cancelling"},
          "DELETE of a running one: %s %r" % (st, j))
    t0 = time.time()
    st, _, j = raw(url, "GET", "/v1/evaluations/stuck?wait=30")
    check(st == 200 and j["status"] == "cancelled" and j["result"]["status"] == "cancelled"
          and j["result"]["charged"] == "nobody" and time.time() - t0 < 10,
          "after the DELETE: %s %r in %.1f s" % (st, j, time.time() - t0))
    st, _, j = raw(url, "DELETE", "/v1/evaluations/stuck")
    check(st == 200 and j["status"] == "cancelled", "a second DELETE: %s %r" % (st, j))
    # The one slot is free: the next evaluation is judged now, not after
    # the stuck one's minute.
    c = Client(url)
    t0 = time.time()
    r = c.evaluate(TASK, cand("pass"), mode="verify", model="after")
    check(r.status == "pass" and time.time() - t0 < 45,
          "the next one: %s in %.1f s" % (r.status, time.time() - t0))
    st, _, text = raw(url, "GET", "/metrics")
    check('kjudge_serve_finished_total{status="cancelled"} 1' in text, "/metrics: %r" % text)
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    db = sqlite3.connect("s.db")
    rows = dict(db.execute("SELECT eval_id, state FROM serve_requests"))
    check(rows.get("stuck") == "cancelled", "the store: %r" % rows)
    done = db.execute("SELECT count(*) FROM attempts WHERE state = 'done'").fetchone()[0]
    check(done == 1, "%d attempts done (only the next one's may be)" % done)
    print("cancel: the running evaluation killed and cancelled, its slot free at once")


def slow():
    srv = Server()
    u = srv.url.split("//")[1]
    host, port = u.split(":")
    s = socket.create_connection((host, int(port)))
    s.sendall(b"POST /v1/evaluations HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n")
    stop = threading.Event()

    def drip():
        while not stop.is_set():
            try:
                s.sendall(b" ")
            except OSError:
                return
            time.sleep(1)
    t = threading.Thread(target=drip, daemon=True)
    t.start()
    time.sleep(1.5)
    for _ in range(5):
        t0 = time.time()
        st, _, j = raw(srv.url, "GET", "/v1/health")
        st2, _, _ = raw(srv.url, "GET", "/v1/evaluations/none")
        took = time.time() - t0
        check(st == 200 and st2 == 404 and took < 1.0,
              "with a slow client: %s %s in %.2f s" % (st, st2, took))
        time.sleep(0.5)
    stop.set()
    s.close()
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    print("slow: others answered at once beside a client of a byte a second")


def kill():
    rng = random.Random(int(os.environ.get("KJ_SERVE_SEED", "0")) or None)
    accepted = []
    srv = Server("-j", "2")
    c = Client(srv.url)
    for k in range(2):
        accepted.append(c.submit(TASK, cand("pass"), mode="verify", model="m%d" % k))
    for cycle in range(10):
        time.sleep(rng.uniform(0.1, 1.5))
        srv.kill()
        srv = Server("-j", "2")
        c = Client(srv.url)
        if cycle == 4:
            accepted.append(c.submit(TASK, cand("crash_forward"), mode="verify",
                                     model="m%d" % cycle, attempt=cycle))
    for i in accepted:
        r = c.wait(i, 300)
        check(r.status in ("pass", "fail"), "%s: %s (%s)" % (i, r.status, r.message))
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    db = sqlite3.connect("s.db")
    rows = db.execute("SELECT r.eval_id, r.state, count(a.attempt_key), a.state FROM "
                      "serve_requests r LEFT JOIN attempts a ON a.attempt_key = r.attempt_key "
                      "GROUP BY r.eval_id").fetchall()
    check(sorted(r[0] for r in rows) == sorted(accepted), "the requests: %r" % rows)
    check(all(r[1] == "done" and r[2] == 1 and r[3] == "done" for r in rows),
          "not exactly one result each: %r" % rows)
    n = db.execute("SELECT count(*) FROM attempts").fetchone()[0]
    check(n == len(accepted), "%d attempts for %d evaluations" % (n, len(accepted)))
    print("kill: %d evaluations, 10 kills, one result each" % len(accepted))


def descendants(pid):
    """The processes under pid, by /proc's parent links."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open("/proc/%s/stat" % d).read()
            except OSError:
                continue
            kids.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def workers(pid):
    """The torch workers under pid (a server), by their command lines (the
    worker template, which runs the same script with --template, is not a
    worker: docs/ARCHITECTURE.md, "Worker templates")."""
    found = []
    for p in descendants(pid):
        try:
            cmd = open("/proc/%d/cmdline" % p, "rb").read()
            if b"kjudge_worker.py" in cmd and b"--template" not in cmd.split(b"\0"):
                found.append(p)
        except OSError:
            pass
    return found


def phases(db, eval_id, run="main"):
    """The judge's phases of a run of an evaluation's attempt (attempts.env:
    "main", or "disabled", the kernel layer's)."""
    env = sqlite3.connect(db).execute(
        "SELECT a.env FROM serve_requests r JOIN attempts a USING (attempt_key) "
        "WHERE r.eval_id = ?", (eval_id,)).fetchone()
    return json.loads(env[0])["judge_phases"].get(run, {}) if env and env[0] else {}


def warm():
    """Workers started before the request: used, and a warm worker that
    died while it waited costs the next evaluation nothing but a start."""
    srv = Server("-j", "1")
    c = Client(srv.url)
    deadline = time.time() + 120
    while len(workers(srv.p.pid)) < 2 and time.time() < deadline:
        time.sleep(0.2)
    check(len(workers(srv.p.pid)) == 2, "no two workers waiting: %r" % workers(srv.p.pid))
    time.sleep(1)  # their hello answered
    a = c.submit(TASK, cand("pass"), mode="verify", model="m", id="warm-a")
    r = c.wait(a, 300)
    check(r.status == "pass", "with warm workers: %s (%s)" % (r.status, r.message))
    ph = phases("s.db", a)
    check(ph.get("detail", {}).get("prestart_s", 0) > 0,
          "the attempt did not use the workers started ahead: %r" % ph)
    # Where its start went: no worker started after the request came, the
    # task's and the module's loading each said.
    d = ph.get("detail", {})
    check(d.get("start_spawn_s", 1) < 0.05 and d.get("start_task_s", -1) >= 0
          and d.get("start_module_s", -1) >= 0, "a warm start's steps: %r" % d)
    # The next ones wait; killed before any request comes, they are
    # started again by the evaluation that finds them gone.
    deadline = time.time() + 120
    while len(workers(srv.p.pid)) < 2 and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    gone = workers(srv.p.pid)
    check(len(gone) == 2, "no two workers waiting again: %r" % gone)
    for p in gone:
        os.kill(p, signal.SIGKILL)
    b = c.submit(TASK, cand("pass"), mode="verify", model="m", id="warm-b")
    r = c.wait(b, 300)
    check(r.status == "pass" and r.charged in (None, "", "none"),
          "after its warm workers died: %s charged %s (%s)" % (r.status, r.charged, r.message))
    # A second pair for the kernel layer, once the child has waited: a
    # clean pass of a Triton kernel ("full") takes both.
    deadline = time.time() + 120
    while len(workers(srv.p.pid)) < 4 and time.time() < deadline:
        time.sleep(0.2)
    check(len(workers(srv.p.pid)) == 4, "no four workers waiting: %r" % workers(srv.p.pid))
    time.sleep(1)
    evals = os.path.join(os.environ["KJ_TESTS"], "eval")
    f = c.submit(open(os.path.join(evals, "suite", "ops", "relu_torch.py")).read(),
                 open(os.path.join(evals, "cands", "relu_triton.py")).read(), mode="full",
                 model="m", id="warm-full")
    r = c.wait(f, 300)
    check(r.status == "pass" and r.clean, "full: %s clean %s %s (%s)" % (
        r.status, r.clean, r.error_type, r.message))
    for run in ("main", "disabled"):
        ph = phases("s.db", f, run)
        check(ph.get("detail", {}).get("prestart_s", 0) > 0,
              "the %s run did not use workers started ahead: %r" % (run, ph))
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    # Without warm workers, nothing is started ahead.
    srv = Server("-j", "1", "--no-warm", db="cold.db")
    c = Client(srv.url)
    time.sleep(2)
    check(workers(srv.p.pid) == [], "--no-warm started workers: %r" % workers(srv.p.pid))
    r = c.wait(c.submit(TASK, cand("pass"), mode="verify", model="m", id="cold"), 300)
    check(r.status == "pass", "--no-warm: %s (%s)" % (r.status, r.message))
    d = phases("cold.db", "cold").get("detail", {})
    check("prestart_s" not in d, "--no-warm prestarted")
    check(d.get("start_spawn_s", 0) > 0 and d.get("start_task_s", -1) >= 0,
          "a cold start's steps: %r" % d)
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    # Back to back with two jobs: the next request goes to the child that
    # has waited ready, not to the fresh one forked where the last ended
    # (which would make it wait for a whole start).
    srv = Server("-j", "2", db="pick.db")
    c = Client(srv.url)
    deadline = time.time() + 120
    while len(workers(srv.p.pid)) < 4 and time.time() < deadline:
        time.sleep(0.2)
    check(len(workers(srv.p.pid)) >= 4, "no two warm pairs: %r" % workers(srv.p.pid))
    time.sleep(1)
    r = c.wait(c.submit(TASK, cand("pass"), mode="verify", model="m", id="pick-a"), 300)
    check(r.status == "pass", "pick-a: %s (%s)" % (r.status, r.message))
    r = c.wait(c.submit(TASK, cand("pass"), mode="verify", model="m", id="pick-b"), 300)
    check(r.status == "pass", "pick-b: %s (%s)" % (r.status, r.message))
    d = phases("pick.db", "pick-b").get("detail", {})
    check(d.get("warm_age_s", 0) > 0.5 and d.get("start_spawn_s", 1) < 0.05,
          "the request right after another did not go to the pair that waited ready: %r" % d)
    check(srv.term() == 0, "SIGTERM: exit %s" % srv.p.returncode)
    print("warm: workers started ahead used; killed ones started again; the next request "
          "goes to a ready pair; --no-warm starts none")


if __name__ == "__main__":
    {"verdicts": verdicts, "errors": errors, "slow": slow, "kill": kill,
     "cancel": cancel, "warm": warm}[sys.argv[1]]()
