"""The prepare stage of a write batch: gate, derive, embed (DESIGN sections 6 and 9).

Everything a write needs before its owner can decide it, and nothing that needs the owner's
state: the gate scans the text and every other free-text field (and the retrieval context),
the kept text gets its content hash and search tokens, and (with an in-process embedder) its
vector. Stateless and pure: it runs in a gate worker (off the owner's core) or in the owner
itself, with the same result. Embeddings are computed from the text as stored, after redaction.

Input and output are columns (lists), cheap to send between processes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core import records as R
from ..core.changes import Prepared
from ..core.contradictions import remember_cues, text_cues
from ..core.errors import InvalidRecord
from ..core.scoring import tokenize
from ..gate import Gate
from ..gate.rules.base import RULES
from ..gate.policy import DECISION_RANK
from ..gate.scanner import combine

_RANK = {s: i for i, s in enumerate(R.SENSITIVITIES)}


def implied_sensitivity(hits) -> str | None:
    """The least sensitivity a write's gate hits imply: personal data (redacted or allowed by
    policy) at least ``confidential``, a secret its rule's own (blocked by default anyway)."""
    best = None
    for h in hits:
        rule = RULES.get(h.rule)
        if rule is None or rule.category not in ("pii", "secret"):
            continue
        s = rule.sensitivity or "confidential"
        if rule.category == "pii" and _RANK.get(s, 0) < _RANK["confidential"]:
            s = "confidential"
        if best is None or _RANK[s] > _RANK[best]:
            best = s
    return best


def prepare(gate: Gate, cols: dict, embedder=None, cues: bool = False) -> dict:
    """``cols``: ``text``, ``source``, ``context`` and the scanned fields (``subject``, ...),
    one entry per write. Returns columns: ``decision``, ``text`` (as stored, None when
    blocked), ``fields`` (the other fields as stored), ``gate`` (summaries), ``content_hash``,
    ``search_text``, ``embed`` (the text each vector is of: the gated ``embed_text``, else the
    text) and ``vectors`` (an (n, dim) array, zeros where nothing is stored; None without an
    embedder)."""
    texts, sources = cols["text"], cols["source"]
    n = len(texts)
    jobs = [(i, "text", texts[i]) for i in range(n)]
    for f in (*R.SCANNED_FIELDS, "embed_text"):  # the text to embed, when given, is gated as the text is
        jobs += [(i, f, v) for i, v in enumerate(cols.get(f) or [None] * n) if v is not None]
    reports: list[dict] = [{} for _ in range(n)]
    for i, f, v in jobs:
        reports[i][f] = gate.scan(v, sources[i])
    _pairs(gate, cols, sources, reports)
    merged = [combine(r) for r in reports]
    contexts = cols.get("context") or [None] * n
    out = {"decision": [], "text": [], "fields": [], "gate": [], "content_hash": [], "search_text": [],
           "context_hashes": [], "sensitivity": []}
    for i, rep in enumerate(merged):
        out["decision"].append(rep.decision)
        out["sensitivity"].append(implied_sensitivity(rep.hits))
        out["text"].append(rep.text)
        out["fields"].append(rep.fields or {})
        out["gate"].append(rep.summary())
        if rep.text is None:
            out["content_hash"].append(None)
            out["search_text"].append(None)
            out["context_hashes"].append(None)
            continue
        ctx = gate.scan(contexts[i], sources[i]).text if contexts[i] else None  # None when blocked
        out["content_hash"].append(R.content_hash(rep.text))
        out["search_text"].append(" ".join(tokenize(rep.text if not ctx else f"{rep.text}\n{ctx}")))
        out["context_hashes"].append(R.piece_hashes(ctx) if ctx else None)
    # what each vector is of: the gated embed_text (a kept field when one was given), else the text
    out["embed"] = [None if t is None else out["fields"][i].get("embed_text", t) for i, t in enumerate(out["text"])]
    out["vectors"] = embed_kept(embedder, out["embed"]) if embedder is not None else None
    if cues:  # a gate worker: the kept texts' contradiction cues too, read off the owner's core
        out["cues"] = text_cues(out["text"])
    return out


def _pairs(gate: Gate, cols: dict, sources: list, reports: list[dict]) -> None:
    """A fact's object read with what names it, as a reader reads them: predicate "password"
    and object "Hunter2!" each pass alone, "password: Hunter2!" does not; nor does the text
    "Alice's home wifi password" with the object "Sunshine2024!" beside it. What a pair finds
    beyond the fields' own scans is the object's: the write is blocked, or the object kept as
    the pair's redaction left it (whole placeholder when the redaction reached the head)."""
    preds, objs = cols.get("predicate") or [None] * len(reports), cols.get("object")
    if not objs:
        return
    for i, (p, o) in enumerate(zip(preds, objs)):
        if not o or "object" not in reports[i] or reports[i]["object"].text is None:
            continue  # no object, or one blocked on its own
        text = reports[i]["text"].text
        # the text as kept (its own hits redacted), its end: the words a reader reads the value after
        heads = [(f"{p}: ", "predicate")] if p else []
        if text:
            heads.append((f"{text[-_TEXT_HEAD:]}: ", "text"))
        for head, field in heads:
            pair = gate.scan(head + reports[i]["object"].text, sources[i])
            alone = [reports[i]["object"], *([reports[i][field]] if field in reports[i] else [])]
            if DECISION_RANK[pair.decision] <= max(DECISION_RANK[r.decision] for r in alone) \
                    and len(pair.hits) <= sum(len(r.hits) for r in alone):
                continue  # nothing the fields' own scans missed
            kept = pair.text
            if kept is not None:
                kept = kept[len(head):] if kept.startswith(head) else "[REDACTED]"
            reports[i]["object"] = replace(pair, text=kept)
            if kept is None:
                break


_TEXT_HEAD = 160  # characters of a write's text read before its object (proximity rules look closer)


def embed_kept(embedder, texts: list[str | None]) -> np.ndarray:
    """Vectors of the kept texts, zeros where a write was blocked (one embedder call)."""
    keep = [i for i, t in enumerate(texts) if t is not None]
    vecs = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    if keep:
        vecs[keep] = embedder.embed([texts[i] for i in keep])
    return vecs


class PoolEmbedder:
    """Vectors already computed by the embedding pool, handed out in order (for embed_kept)."""

    def __init__(self, vecs: list, dim: int) -> None:
        self._vecs, self.dim = vecs, dim

    def embed(self, texts: list[str]):
        return np.asarray(self._vecs, dtype=np.float32).reshape(len(texts), self.dim)


def unpack(out: dict) -> list[Prepared | InvalidRecord]:
    """The prepare stage's columns as one ``Prepared`` per write (cues read by a gate worker
    are remembered: a decision then finds them); an ``InvalidRecord`` for a write whose vector
    is not finite (an embedder of the caller's, a LangGraph index's function: NaN on one input):
    stored, it would make every L2 flush of the scope fail."""
    if out.get("cues") is not None:
        remember_cues(out["text"], out["cues"])
    vecs = out["vectors"]
    if vecs is not None and len(vecs) and not np.isfinite(vecs).all():
        bad = set(np.flatnonzero(~np.isfinite(vecs).all(axis=1)).tolist())
        ok = unpack(dict(out, vectors=np.where(np.isfinite(vecs), vecs, 0), cues=None))
        return [InvalidRecord("the embedder returned a vector that is not finite (NaN or infinity) for this "
                              "write's text: nothing was stored") if i in bad else p for i, p in enumerate(ok)]
    hashes = out.get("context_hashes") or [None] * len(out["decision"])
    floors = out.get("sensitivity") or [None] * len(out["decision"])
    return [Prepared(out["decision"][i], out["text"][i], out["fields"][i], out["gate"][i], out["content_hash"][i],
                     out["search_text"][i], vecs[i] if vecs is not None and out["text"][i] is not None else None,
                     hashes[i], floors[i])
            for i in range(len(out["decision"]))]
