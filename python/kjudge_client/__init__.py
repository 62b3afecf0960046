"""The client of `kjudge serve` (docs/serve.md), standard library only.

    from kjudge_client import Client
    c = Client("http://127.0.0.1:8000")
    r = c.evaluate(task_source, candidate_source, model="policy")
    reward = r.speedup if r.clean else 0.0
"""
from .client import Client, Result, Timing, ServeError

__all__ = ["Client", "Result", "Timing", "ServeError"]
