"""kjudge_client.client - the HTTP calls of kjudge serve's API, typed.

Every call retries on 429 (queue full) and 503 (draining) as long as its
own deadline allows, waiting what the server's Retry-After says; any
other error answer raises ServeError with the server's code and message.
"""
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.client import HTTPConnection
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple


class ServeError(Exception):
    """An answer of the server that is an error: HTTP status, code, message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__("%d %s: %s" % (status, code, message))
        self.status = status
        self.code = code
        self.message = message


@dataclass
class Timing:
    """One timed case: both sides' latencies (ms) and the speedup's bound."""

    case_idx: int
    ref_median_ms: Optional[float] = None
    impl_median_ms: Optional[float] = None
    ref_judge_ms: Optional[float] = None
    impl_judge_ms: Optional[float] = None
    judge_speedup: Optional[float] = None
    judge_speedup_hi: Optional[float] = None
    speedup: Optional[float] = None
    ref_samples: Optional[int] = None
    impl_samples: Optional[int] = None


@dataclass
class Result:
    """An evaluation's verdict, as GET /v1/evaluations/ID says it.

    status: pass, fail, task_error or judge_error (the attempt's), or the
    evaluation's own 'cancelled' / 'expired' when it was not judged."""

    id: str
    status: str
    clean: bool = False
    error_type: Optional[str] = None
    category: Optional[str] = None
    charged: Optional[str] = None
    message: Optional[str] = None
    cases_total: Optional[int] = None
    cases_passed: Optional[int] = None
    speedup: Optional[float] = None
    judge_s: Optional[float] = None
    device: Optional[str] = None
    layers: Dict[str, Any] = field(default_factory=dict)
    timings: List[Timing] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @classmethod
    def of(cls, answer: Dict[str, Any]) -> "Result":
        res = answer.get("result") or {}
        status = res.get("status") or answer.get("status")
        known = {f for f in Timing.__dataclass_fields__}
        return cls(
            id=answer["id"], status=status, clean=bool(res.get("clean")),
            error_type=res.get("error_type"), category=res.get("category"),
            charged=res.get("charged"), message=res.get("message"),
            cases_total=res.get("cases_total"), cases_passed=res.get("cases_passed"),
            speedup=res.get("speedup"), judge_s=res.get("judge_s"), device=res.get("device"),
            layers={k: {"ok": res.get(k + "_ok"), "message": res.get(k + "_msg")}
                    for k in ("static", "disabled", "profile")},
            timings=[Timing(**{k: v for k, v in t.items() if k in known})
                     for t in res.get("timings") or []],
            raw=answer)


class Client:
    """A client of one server: url 'http://HOST:PORT' or 'unix:PATH'."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 120.0,
                 retry_for: float = 600.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retry_for = retry_for

    # --- transport -------------------------------------------------------------
    def _conn(self, timeout: float) -> HTTPConnection:
        if self.url.startswith("unix:"):
            path = self.url[5:]

            class Unix(HTTPConnection):
                def connect(self):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.settimeout(timeout)
                    s.connect(path)
                    self.sock = s
            return Unix("localhost", timeout=timeout)
        u = urllib.parse.urlsplit(self.url)
        return HTTPConnection(u.hostname, u.port or 80, timeout=timeout)

    def _once(self, method: str, path: str, body: Optional[Any], timeout: float):
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        c = self._conn(timeout)
        try:
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            text = r.read()
            return r.status, r.getheader("Retry-After"), text
        finally:
            c.close()

    def request(self, method: str, path: str, body: Optional[Any] = None,
                timeout: Optional[float] = None) -> Any:
        """One call, retried on 429 and 503 (Retry-After) for retry_for s."""
        until = time.monotonic() + self.retry_for
        while True:
            status, retry_after, text = self._once(method, path, body,
                                                   timeout or self.timeout)
            if status < 400:
                return json.loads(text) if text else None
            try:
                err = json.loads(text)["error"]
                code, message = err.get("code", ""), err.get("message", "")
            except (ValueError, KeyError, TypeError):
                code, message = "http", text.decode(errors="replace")[:200]
            if status in (429, 503):
                try:
                    wait = max(0.1, float(retry_after)) if retry_after else 1.0
                except ValueError:
                    wait = 1.0
                if time.monotonic() + wait < until:
                    time.sleep(wait)
                    continue
            raise ServeError(status, code, message)

    # --- the API ------------------------------------------------------------------
    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/health")

    @staticmethod
    def _body(task_source=None, candidate_source=None, task_name=None, cases=None,
              mode=None, model=None, attempt=None, id=None, deadline_s=None, options=None):
        task: Dict[str, Any] = {"name": task_name} if task_name else {"source": task_source}
        if cases is not None:
            task["cases"] = cases
        b: Dict[str, Any] = {"task": task, "candidate": {"source": candidate_source}}
        for k, v in (("mode", mode), ("model", model), ("attempt", attempt), ("id", id),
                     ("deadline_s", deadline_s), ("options", options)):
            if v is not None:
                b[k] = v
        return b

    def submit(self, task_source: Optional[str] = None, candidate_source: str = "",
               **opts) -> str:
        """Submit one evaluation; its id once the server has committed it."""
        return self.request("POST", "/v1/evaluations",
                            self._body(task_source, candidate_source, **opts))["id"]

    def submit_many(self, items: Sequence[Dict[str, Any]]) -> List[str]:
        """Submit many at once ({"evaluations": [...]}): their ids, in order."""
        body = {"evaluations": [self._body(**it) for it in items]}
        return [e["id"] for e in self.request("POST", "/v1/evaluations", body)["evaluations"]]

    def result(self, id: str, wait: Optional[float] = None) -> Optional[Result]:
        """The evaluation's result, or None while it is queued or running
        (after waiting up to `wait` seconds, at most 60 a call)."""
        q = "?wait=%g" % min(wait, 60.0) if wait else ""
        a = self.request("GET", "/v1/evaluations/" + urllib.parse.quote(id, safe="") + q,
                         timeout=(min(wait, 60.0) if wait else 0) + self.timeout)
        if a["status"] in ("queued", "running"):
            return None
        return Result.of(a)

    def cancel(self, id: str) -> str:
        return self.request("DELETE", "/v1/evaluations/" + urllib.parse.quote(id, safe=""))[
            "status"]

    def wait(self, id: str, timeout: Optional[float] = None) -> Result:
        until = None if timeout is None else time.monotonic() + timeout
        while True:
            left = 60.0 if until is None else max(0.0, until - time.monotonic())
            r = self.result(id, wait=min(60.0, left) or None)
            if r is not None:
                return r
            if until is not None and time.monotonic() >= until:
                raise TimeoutError("evaluation %s: no result in %g s" % (id, timeout))

    def evaluate(self, task_source: Optional[str], candidate_source: str,
                 timeout: Optional[float] = None, **opts) -> Result:
        """Submit and wait: the verdict."""
        return self.wait(self.submit(task_source, candidate_source, **opts), timeout)

    def evaluate_many(self, pairs: Iterable[Tuple[str, str]], concurrency: int = 8,
                      **opts) -> List[Result]:
        """Each (task_source, candidate_source) evaluated, concurrency at a
        time; the results in the order of pairs."""
        pairs = list(pairs)
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as ex:
            return list(ex.map(lambda p: self.evaluate(p[0], p[1], **opts), pairs))
