"""L3 recall (``rt.retrieve``): a retriever's results through the recall contract, never stored.

The retriever runs in the caller's process. Its results are checked (``core.retriever``),
passed through the write gate as untrusted documents (blocked and held results are dropped,
redacted ones shown redacted), embedded in one batch, scored with the memories' scoring
function, thresholded and budgeted (``core.selection.finalize``), and logged as evidence under
the scope label ``l3:<name>``. Nothing is written: to keep a result, write it.
"""

from __future__ import annotations


from ..core import records as R
from ..core import retriever as L3
from ..core import validate as V
from ..core.errors import InvalidRecord, MemactorsError
from ..core.scopes import parse_scope
from ..core.selection import finalize
from ..gate.identifiers import screen_ids
from ..core.visibility import RecallFilter, parse_where, purpose_rule
from ..engine.prepare import implied_sensitivity
from .evidence import evidence_row
from .results import RecallResult, recall_result


def retrieve(rt, retriever, query: str, *, actor: str, task_id: str, allowed_scopes: list[str], purpose: str,
             top_k: int | None = None, token_budget: int | None = None, threshold: float | None = None,
             weights=None, where: dict | None = None) -> RecallResult:
    """See ``Runtime.retrieve``."""
    scope = L3.label(retriever)
    screen_ids({"a retriever's name": scope[3:]})  # its label is logged with every recall it answers
    ids = rt._ids  # noqa: SLF001
    actor = ids.id(actor, "actor")
    top_k = rt.config.recall.default_top_k if top_k is None else top_k
    req = R.RecallRequest(query, actor, ids.id(task_id, "task_id"), ids.scopes(allowed_scopes),
                          ids.purpose(purpose, rt.gate.redact_all), top_k, token_budget).validate()
    top_k = V.integer(top_k, "top_k", 1, L3.MAX_RESULTS)
    allowed = [parse_scope(s) for s in req.allowed_scopes]
    rt._sync_grants()  # noqa: SLF001 - no owner checks L3 again: the grants as they are now
    rt._check_read(actor, allowed)  # noqa: SLF001 - the recall's own check
    rc = rt.config.recall
    # Clearance, the purpose's rule and where= as for memories; a result belongs to no scope, so
    # the clearance every allowed scope shares applies (it is shown beside all of them).
    flt = RecallFilter.make(rt._grants.clearances(actor, allowed), purpose_rule(rc.purposes, req.purpose),  # noqa: SLF001
                            parse_where(where))
    floor = flt.lowest()
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
    now = now_us = rt.clock.now_us()
    kept, texts = [], []
    filtered = 0
    for r in results:
        rep = rt.gate.scan(r["content"], "document")
        # Held for its instructions (not only for being a document: results are never stored).
        if rep.text is None or rep.decision == R.PENDING and any(h.category == "injection" for h in rep.hits):
            continue
        implied = implied_sensitivity(rep.hits)  # a phone number in a result makes it confidential
        if implied is not None and R.SENSITIVITIES.index(implied) > R.SENSITIVITIES.index(r["sensitivity"]):
            r = dict(r, sensitivity=implied)
        if not flt.keep({"scope": scope, "sensitivity": r["sensitivity"], "category": "default",
                         "source_kind": "document", "subject": None, "predicate": None,
                         "updated_at": r["updated_at"] if r["updated_at"] is not None else now_us}, floor):
            filtered += 1
            continue
        kept.append(r)
        texts.append(rep.text)
    vecs = rt.embedder.embed([text, *texts])
    # Ids under the evidence's key: a result's id is returned and logged, and a plain hash of its
    # text could be matched offline against guesses of it (the query is digested the same way).
    cands = L3.score_results(scope, kept, texts, vecs[0], vecs[1:], text, now, w, digest=rt._evidence.digest)  # noqa: SLF001
    chosen, info = finalize(cands, threshold=thr, max_items=top_k, token_budget=token_budget)
    result = recall_result(chosen, info, visible=[scope], path="l3", threshold=thr,
                           gate=len(results) - len(kept) - filtered, filters=filtered)
    rt._evidence.add(evidence_row(req, result, rt._evidence.digest(text), now, mode="l3", weights=w,  # noqa: SLF001
                                  threshold=thr, candidates=len(cands), info=info, flt=flt))
    return result
