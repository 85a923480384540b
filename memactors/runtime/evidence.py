"""Recall evidence (DESIGN section 5): every recall logged with ids, scores and their
components, the filters and what each rule removed; never content, and the query only as a
keyed digest. Rows are buffered in the process that recalls and handed to the ledger writer
in batches (one call per batch, not per recall), at least every ``log_flush_s``."""

from __future__ import annotations

import hashlib
import hmac
import threading

from ..core.errors import MemactorsError


class RecallLog:
    def __init__(self, ledger, digest_key: bytes, flush_s: float, get) -> None:
        self._ledger = ledger
        self._get = get  # the host's wait for a call's answer
        self._key = digest_key
        self._buf: list[dict] = []
        self._sent: list = []  # calls handed over without waiting: a read waits for them too
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._flush_s = flush_s
        threading.Thread(target=self._loop, name="memactors-recall-log", daemon=True).start()

    def digest(self, redacted_query: str) -> str:
        """The query as the gate left it, digested under a key that never leaves the runtime."""
        return hmac.new(self._key, redacted_query.encode(), hashlib.sha256).hexdigest()

    def add(self, row: dict) -> None:
        with self._lock:
            self._buf.append(row)
            due = len(self._buf) >= 256
        if due:
            self.flush(wait=False)

    def flush(self, wait: bool = True) -> None:
        """Hand buffered rows to the ledger writer; ``wait``: until it has them, and every
        batch handed over before without waiting (calls to an async actor do not keep their
        order, so a read of the evidence must wait for all of them)."""
        with self._lock:
            rows, self._buf = self._buf, []
            new = self._ledger.log_recalls.remote(rows) if rows else None
            if wait or len(self._sent) > 32:  # not waited for: kept few (a long run's refs)
                older, self._sent = (self._sent, []) if wait else (self._sent[:-8], self._sent[-8:])
            else:
                older = []
            if new is not None and not wait:
                self._sent.append(new)
        for ref in older:
            try:
                self._get(ref)
            except MemactorsError:  # a writer that died took those rows with it, as it always did
                pass
        if new is not None and wait:
            self._get(new)

    def _loop(self) -> None:
        while not self._stop.wait(self._flush_s):
            try:
                self.flush(wait=False)
            except Exception:  # noqa: BLE001 - the runtime is closing; close() flushes what is left
                return

    def close(self) -> None:
        self._stop.set()
        self.flush()


def evidence_row(req, result, digest: str, now: int, *, mode: str, weights, threshold: float, candidates: int,
                 info: dict, flt=None) -> dict:
    """The logged form of one recall: ids, scores, filters and counts; never content. ``flt``
    (a ``core.visibility.RecallFilter``): which purpose rule applied, the clearance per scope
    and which ``where=`` fields were given (their names, never their values)."""
    row = {
        "recall_id": result.recall_id, "ts": now, "actor": req.actor, "task_id": req.task_id,
        "purpose": req.purpose, "allowed_scopes": req.allowed_scopes, "visible_scopes": result.visible_scopes,
        "query_digest": digest, "top_k": req.top_k,
        "hits": [_hit_row(h) for h in result.hits],
        "filters": {"scopes": result.visible_scopes, "status": ["active", "stale"], "not_hard_expired_at": now,
                    "mode": mode, "threshold": threshold, "weights": weights.as_tuple(),
                    "token_budget": req.token_budget, "candidates": candidates, "tokens": info["tokens"],
                    "best_below": result.best_below},
        "removed": result.removed,
    }
    if flt is not None:
        row["filters"].update(flt.describe())
        row["filters"]["listing"] = req.query is None
    return row


def _hit_row(h) -> dict:
    """One hit as logged. round() is most of a row's cost: a relevance equal to the score (a
    hit not stale) takes the score's rounding, except at zero (0.0 == -0.0, and they log apart)."""
    score = round(h.score, 6)
    rel = score if h.relevance == h.score and score and type(h.relevance) is type(h.score) else round(h.relevance, 6)
    return {"memory_id": h.memory_id, "scope": h.scope, "version": h.version, "score": score, "relevance": rel,
            "components": {k: round(v, 6) for k, v in h.components.items()}, "stale": h.stale,
            "conflict": h.conflict}
