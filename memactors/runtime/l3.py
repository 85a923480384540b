"""L3 recall (``rt.retrieve``): a retriever's results through the recall contract, never stored.

The retriever runs in the caller's process. Its results are checked (``core.retriever``),
passed through the write gate as untrusted documents (blocked and held results are dropped,
redacted ones shown redacted), embedded in one batch, scored with the memories' scoring
function, thresholded and budgeted (``core.selection.finalize``), and logged as evidence under
the scope label ``l3:<name>``. Nothing is written: to keep a result, write it.
"""

from __future__ import annotations

import uuid

from ..core import records as R
from ..core import retriever as L3
from ..core import validate as V
from ..core.errors import InvalidRecord, MemactorsError
from ..core.scopes import parse_scope
from ..core.selection import finalize
from ..gate.identifiers import screen_ids
from .evidence import evidence_row
from .results import RecallResult, hit_from


def retrieve(rt, retriever, query: str, *, actor: str, task_id: str, allowed_scopes: list[str], purpose: str,
             top_k: int = 5, token_budget: int | None = None, threshold: float | None = None,
             weights=None) -> RecallResult:
    """See ``Runtime.retrieve``."""
    scope = L3.label(retriever)
    screen_ids({"a retriever's name": scope[3:]})  # its label is logged with every recall it answers
    ids = rt._ids  # noqa: SLF001
    actor = ids.id(actor, "actor")
    req = R.RecallRequest(query, actor, ids.id(task_id, "task_id"), ids.scopes(allowed_scopes),
                          ids.id(purpose, "purpose"), top_k, token_budget).validate()
    top_k = V.integer(top_k, "top_k", 1, L3.MAX_RESULTS)
    rt._check_read(actor, [parse_scope(s) for s in req.allowed_scopes])  # noqa: SLF001 - the recall's own check
    rc = rt.config.recall
    w = V.weights(weights if weights is not None else rc.weights)
    thr = rc.threshold if threshold is None else V.threshold(threshold)
    text = rt.gate.redact_all(query)  # the query passes the gate before it leaves for the source
    try:
        raw = retriever.retrieve(text, top_k)
    except MemactorsError:
        raise
    except Exception as exc:  # a plug-in's own failure: typed, without its message (it may echo the query)
        raise InvalidRecord(f"retriever {scope} failed ({type(exc).__name__})") from None
    results = L3.check_results(raw, top_k)
    kept, texts = [], []
    for r in results:
        rep = rt.gate.scan(r["content"], "document")
        # Held for its instructions (not only for being a document: results are never stored).
        if rep.text is None or rep.decision == R.PENDING and any(h.category == "injection" for h in rep.hits):
            continue
        kept.append(r)
        texts.append(rep.text)
    now = rt.clock.now_us()
    vecs = rt.embedder.embed([text, *texts])
    cands = L3.score_results(scope, kept, texts, vecs[0], vecs[1:], text, now, w)
    chosen, info = finalize(cands, threshold=thr, max_items=top_k, token_budget=token_budget)
    result = RecallResult(recall_id=uuid.uuid4().hex, hits=[hit_from(h) for h in chosen], visible_scopes=[scope],
                          path="l3", removed=dict(info["removed"], gate=len(results) - len(kept)))
    rt._evidence.add(evidence_row(req, result, rt._evidence.digest(text), now, mode="l3", weights=w,  # noqa: SLF001
                                  threshold=thr, candidates=len(cands), info=info))
    return result
