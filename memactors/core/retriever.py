"""L3: retrievers over what memactors does not store (documents, APIs), under the recall
contract (DESIGN section 2). Pure: the runtime embeds, gates and logs.

A retriever is one small class: ``retrieve(query, k) -> list[dict]``, each dict a result with
``content`` (text) and optionally ``id`` (the source's own id), ``importance`` (0..1) and
``updated_at`` (microseconds). Its results are scored by the same function as memories
(``scoring.score_candidates``: vector, the keyword share of each result's own terms (the
same as a memory's), recency, importance), thresholded, budgeted and logged as evidence like any recall (under the caller's
allowed scopes, which need read grants; each hit's scope is the label ``l3:<name>``, and the
ledger's access counts skip it); they are never stored. To keep one, write it (``rt.write``, source
``document``): that is the promotion, through the gate like any write.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable

from . import validate as V

from .errors import InvalidRecord
from .records import MAX_CONTENT_CHARS, SENSITIVITIES
from .scoring import DEFAULT_WEIGHTS, QueryTerms, Weights, cosines, score_candidates, tokenize

MAX_RESULTS = 100
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class Retriever(ABC):
    """An L3 source. ``name``: 1-40 lowercase letters, digits, '-' or '_' (its scope label is
    ``l3:<name>``)."""

    name: str = "retriever"

    @abstractmethod
    def retrieve(self, query: str, k: int) -> list[dict]:
        """At most ``k`` results for ``query`` (dicts: content, and optionally id, importance,
        updated_at). May raise: the runtime turns any failure into a typed error."""


def label(retriever: object) -> str:
    """The scope label of a retriever's results; raises InvalidRecord for a bad retriever."""
    if not isinstance(retriever, Retriever):
        raise InvalidRecord("an L3 retriever is a memactors.Retriever (retrieve(query, k) -> list of dicts)")
    try:
        name = getattr(retriever, "name", None)
    except Exception:  # noqa: BLE001 - a name property that raises is a bad retriever, said as one
        name = None
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidRecord("a retriever's name is 1-40 lowercase letters, digits, '-' or '_'")
    return f"l3:{name}"


def check_results(results: object, k: int) -> list[dict]:
    """A retriever's output checked: a list of at most ``k`` (and ``MAX_RESULTS``) dicts with
    text content within ``MAX_CONTENT_CHARS``. Messages give positions, never content."""
    if not isinstance(results, (list, tuple)):
        raise InvalidRecord("a retriever returns a list of dicts")
    if len(results) > min(k, MAX_RESULTS):
        raise InvalidRecord(f"a retriever returned {len(results)} results for k={k}")
    out = []
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("content"), str) or not r["content"].strip():
            raise InvalidRecord(f"retriever result at position {i}: a dict with non-empty text 'content'")
        V.text(r["content"], f"retriever result at position {i}: content", MAX_CONTENT_CHARS)
        imp = r.get("importance", 0.5)
        if isinstance(imp, bool) or not isinstance(imp, (int, float)) or not 0.0 <= float(imp) <= 1.0:
            raise InvalidRecord(f"retriever result at position {i}: importance must be a number in [0, 1]")
        ts = r.get("updated_at")
        if ts is not None and (isinstance(ts, bool) or not isinstance(ts, int) or ts < 0):
            raise InvalidRecord(f"retriever result at position {i}: updated_at must be microseconds (an int)")
        sid = r.get("id")
        if sid is not None and (not isinstance(sid, str) or len(sid) > 256):
            raise InvalidRecord(f"retriever result at position {i}: id must be a string of at most 256 characters")
        V.text(sid, f"retriever result at position {i}: id", 256, allow_none=True)
        sens = r.get("sensitivity", "internal")
        if sens not in SENSITIVITIES:
            raise InvalidRecord(f"retriever result at position {i}: sensitivity must be one of {list(SENSITIVITIES)}")
        out.append({"content": r["content"], "id": sid, "importance": float(imp), "updated_at": ts,
                    "sensitivity": sens})
    return out


def result_id(scope_label: str, r: dict, digest: Callable[[str], str] | None = None) -> str:
    """A stable 32-hex id for a result (so it can be cited like a memory): a digest of the
    label and the source's id when given, else of the text. ``digest``: a keyed one (the
    runtime's, as for queries); the id is shown and logged, and a plain hash of a text or an id
    could be matched against guesses of it."""
    key = r["id"] if r.get("id") is not None else r["content"]
    if digest is not None:
        return digest(f"{scope_label}\x00{key}")[:32]
    return hashlib.blake2b(f"{scope_label}\x00{key}".encode(), digest_size=16).hexdigest()


def score_results(scope_label: str, results: list[dict], texts: list[str], qvec, vecs, query: str, now_us: int,
                  weights: Weights = DEFAULT_WEIGHTS, digest: Callable[[str], str] | None = None) -> list[dict]:
    """Checked results (``texts``: as the gate left them, ``vecs``: their vectors, ``qvec``: the
    query's) as scored candidates, best first: hit fields (scope ``scope_label``, pool ``l3``,
    source_kind ``document``), ``score`` and ``components``. A result's id (``result_id``, under
    ``digest``) is of its text as the gate left it: never of what the gate redacted."""
    if not results:
        return []
    qterms = QueryTerms(tokenize(query))
    cos = cosines(vecs, qvec)
    cands = []
    for i, (r, t) in enumerate(zip(results, texts)):
        cands.append({"memory_id": result_id(scope_label, {**r, "content": t}, digest), "scope": scope_label,
                      "content": t, "source_kind": "document", "pool": "l3", "status": "active", "version": 1,
                      "confidence": 0.5, "category": "default", "importance": r["importance"],
                      "created_at": r["updated_at"], "updated_at": r["updated_at"], "cosine": float(cos[i]),
                      "keyword": qterms.score(frozenset(tokenize(t)))})
    return score_candidates(cands, now_us, weights)
