"""Alerts (``[alerts]``): what a deployment wants to hear at once, handed to a hook it names
("package.module:function", called with each alert) or POSTed as JSON to a webhook on a
loopback address (its own relay sends it on). Kinds:

- ``write_blocked``: writes the gate blocked, one alert per call with each write's scope,
  actor, source kind and rule ids;
- ``injection_held``: writes held for review because an injection rule fired, with their
  memory ids (``rt.review`` finds them);
- ``folder_refused``: ``connect`` refused a data folder whose ledger or L2 fails its checks;
- ``verify_failed``: ``rt.audit.verify()`` found a broken chain or a table that disagrees.

An alert is a dict: ``kind``, ``ts`` (microseconds), ``data_dir`` and the fields above: ids,
scopes, rule ids, counts, never content. Delivery runs in a thread of its own, off every
caller's path, from a bounded queue (an alert that finds it full is counted in ``dropped``);
a hook that raises or a webhook that does not answer within ``timeout_s`` is counted in
``failed`` and logged, never raised into a write.
"""

from __future__ import annotations

import importlib
import logging
import queue
import threading
import time

import orjson

from ..core.config import AlertsConfig
from ..core.errors import ConfigError

log = logging.getLogger("memactors.alerts")
QUEUE_MAX = 1_000
ITEMS_MAX = 100  # writes listed in one alert (``count`` says how many there were)


def load_hook(path: str):
    module, _, attr = path.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"[alerts].hook cannot be loaded ({type(exc).__name__}); give "
                          "'package.module:function' taking one alert (a dict)") from None
    if not callable(fn):
        raise ConfigError("[alerts].hook must name a callable")
    return fn


class Alerts:
    def __init__(self, cfg: AlertsConfig, data_dir: str) -> None:
        self._hook = load_hook(cfg.hook) if cfg.hook else None
        self._webhook = cfg.webhook or None
        self._timeout = cfg.timeout_s
        self._dir = data_dir
        self._q: queue.Queue = queue.Queue(QUEUE_MAX)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.sent = self.failed = self.dropped = 0

    @property
    def on(self) -> bool:
        return self._hook is not None or self._webhook is not None

    def emit(self, kind: str, **fields) -> None:
        if not self.on:
            return
        alert = {"kind": kind, "ts": time.time_ns() // 1000, "data_dir": self._dir, **fields}
        try:
            self._q.put_nowait(alert)
        except queue.Full:
            self.dropped += 1
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._deliver_loop, name="memactors-alerts", daemon=True)
                self._thread.start()

    # --- what raises an alert -------------------------------------------------------------------

    def writes(self, reqs: list, results: list) -> None:
        """Blocked writes and held injections among one call's results (one alert per kind)."""
        if not self.on:
            return
        blocked, held = [], []
        for req, res in zip(reqs, results):
            decision, gate = getattr(res, "decision", None), getattr(res, "gate", None) or {}
            rules = sorted({h.get("rule") for h in gate.get("hits") or [] if isinstance(h, dict)})
            item = {"scope": req.scope, "actor": req.actor, "source": req.source, "rules": rules}
            if decision == "blocked":
                blocked.append(item)
            elif decision == "pending" and any(h.get("category") == "injection" for h in gate.get("hits") or []):
                held.append(dict(item, memory_id=res.memory_id))
        for kind, items in (("write_blocked", blocked), ("injection_held", held)):
            if items:
                self.emit(kind, count=len(items), writes=items[:ITEMS_MAX])

    def folder_refused(self, exc: BaseException) -> None:
        """``connect`` refused the folder: delivered before connect raises (the process may end)."""
        self.emit("folder_refused", error=type(exc).__name__, reason=str(exc)[:1000])
        self.drain()

    def verify_failed(self, result: dict) -> None:
        self.emit("verify_failed", first_bad_seq=result.get("first_bad_seq"), table=result.get("table"),
                  reason=str(result.get("reason"))[:1000], events=result.get("events"))

    # --- delivery -------------------------------------------------------------------------------

    def _deliver_loop(self) -> None:
        while True:
            alert = self._q.get()
            try:
                self._deliver(alert)
                self.sent += 1
            except Exception:  # noqa: BLE001 - an alert sink's failure never reaches a write
                self.failed += 1
                log.warning("alert %s not delivered", alert.get("kind"), exc_info=True)
            finally:
                self._q.task_done()

    def _deliver(self, alert: dict) -> None:
        if self._hook is not None:
            self._hook(alert)
        if self._webhook is not None:
            import urllib.request  # with http and email: 20 ms of every start, for a webhook only

            req = urllib.request.Request(self._webhook, data=orjson.dumps(alert), method="POST",
                                         headers={"Content-Type": "application/json"})
            # No proxies: a loopback URL must not be handed to one from the environment.
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(req, timeout=self._timeout) as resp:
                resp.read()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every alert queued so far was delivered (or failed); False on timeout."""
        if self._thread is None:
            return True
        deadline = time.monotonic() + (timeout if timeout is not None else 2 * self._timeout + 1.0)
        while self._q.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True
