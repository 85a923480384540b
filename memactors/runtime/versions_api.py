"""A memory's and a fact's history, and updates by id (DESIGN section 8: the ledger holds every
change, so "you said dark mode in March, light in May" is a fold of its events).

``rt.history(memory_id | (scope, subject, predicate), actor=...)`` lists every version of the
fact: its content where its data key lives (an erased version keeps its events, marked
``erased``, content None), when and by whom it was written, from which source, the write
gate's verdict then (rule ids and spans only), and each later change with why it happened.
``rt.update(memory_id, text, actor=...)`` writes the next version of a live memory.
"""

from __future__ import annotations

import re

from ..core import events as E
from ..core import records as R
from ..core import validate as V
from ..core.errors import InvalidRecord, MemactorsError, NotFound
from ..core.scopes import parse_scope

# What a version shows of its record (never search_text, hashes or vectors).
VERSION_FIELDS = ("memory_id", "version", "status", "pool", "content", "subject", "predicate", "object",
                  "confidence", "sensitivity", "category", "importance", "created_at", "updated_at", "supersedes",
                  "review", "hard_expires_at", "soft_expires_at")
_SUCCESSOR = re.compile(r"superseded by ([0-9a-f]{32})\b")  # the id a supersession's reason names


class VersionsAPI:
    """Mixed into ``Runtime``."""

    def history(self, target, *, actor: str) -> dict:
        """Every version of a fact, oldest first: ``target`` is a memory id (its fact: the
        versions sharing its subject and predicate in its scope, or linked to it by updates) or
        ``(scope, subject, predicate)``. Returns ``{"scope", "subject", "predicate", "live",
        "versions"}``; each version: its record fields (``content`` None once erased),
        ``source`` {kind, id}, ``written`` {seq, ts, actor, reason}, ``gate`` (the write gate's
        verdict at write time: decision and each hit's rule, field and span), ``changes`` (every
        later event: seq, ts, actor, action, ``why`` and the new status) and ``ended`` (the
        change that took it out of recall, if one did). ``actor`` needs a read grant on the
        scope; anything else is NotFound."""
        self._check_open()
        actor = self._ids.id(actor, "actor")
        memory_id = scope = key = None
        if isinstance(target, str):
            memory_id = R.check_memory_id(target)
        elif isinstance(target, tuple) and len(target) == 3:
            scope = str(parse_scope(self._ids.scope(target[0])))
            key = R.entity_key(*[self._stored_field(v, n) for v, n in zip(target[1:], ("subject", "predicate"))])
        else:
            raise InvalidRecord("history takes a memory id or a (scope, subject, predicate) tuple")
        raw = self._calls.get(self._ledger.fact_history.remote(memory_id, scope, key, actor))
        return present(raw)

    def _stored_field(self, value: object, name: str) -> str:
        """A subject or predicate as a write would have stored it (the gate redacts a phone number
        in a subject before its entity key is made): the same key, or NotFound when the gate
        would never have stored it."""
        V.text(value, name, R.MAX_FIELD_CHARS)
        rep = self.gate.scan(value, "user_stated")
        if rep.text is None:
            raise NotFound("no fact of that name: the write gate would not have stored it")
        return rep.text

    def update(self, memory_id: str, text: str, *, actor: str, object: str | None = None,
               confidence: float | None = None, source: str | None = None, sensitivity: str | None = None,
               importance: float | None = None, ttl_days: float | str | None = None,
               idempotency_key: str | None = None) -> R.WriteResult:
        """A new version of the live vault memory ``memory_id``: ``text`` (through the gate) and
        the fields given, the rest (subject, predicate, source, confidence, sensitivity,
        category, importance) as that memory has them. The old version is superseded by the new
        one (``supersedes`` names it) whatever the confidence rules would say of another
        writer; the same text again refreshes it; a held (pending) text waits for review and
        changes nothing yet. One side of a contradiction updated: the other side stays in dispute
        with the new version, or is superseded by it when it holds the new value. ``actor`` needs a write grant on the memory's scope and to see it there (its
        read grant's clearance: the new version carries the fact's fields over); a memory it
        cannot write, an unknown id, and one that is not the live version are NotFound."""
        self._check_open()
        actor = self._ids.id(actor, "actor")
        R.check_memory_id(memory_id)
        rec = self._calls.get(self._ledger.history_call.remote("now_and_then", [memory_id], None))[memory_id][0]
        try:
            if rec is None:
                raise NotFound("unknown")
            self._sync_grants()  # the clearance below is checked here only: as the grants are now
            self._check_write([(actor, parse_scope(rec["scope"]))])
            if rec.get("sensitivity") not in self._grants.sees(actor, parse_scope(rec["scope"])):
                raise NotFound("above its clearance")  # a new version carries the fact's fields over
        except MemactorsError:
            raise NotFound(f"no memory of that id that actor {actor!r} may update") from None
        if (rec.get("pool") != "vault" or rec["status"] not in R.LIVE) and idempotency_key is None:
            # With a key it goes on: a retry of an update that landed (its memory superseded by
            # it) gets the first result from the owner, which refuses anything else as NotFound.
            raise NotFound("that memory is not the live version of its fact (rt.history shows which one is)")
        same_source = source is None or source == rec["source_kind"]
        item = dict(scope=rec["scope"], text=text, actor=actor, subject=rec.get("subject"),
                    predicate=rec.get("predicate"), object=rec.get("object") if object is None else object,
                    source=rec["source_kind"] if source is None else source,
                    source_id=rec.get("source_id") if same_source else None,
                    confidence=confidence if confidence is not None else (rec["confidence"] if same_source else None),
                    sensitivity=sensitivity or rec.get("sensitivity") or "internal",
                    importance=rec["importance"] if importance is None else importance,
                    category=rec.get("category") or "default", ttl_days=ttl_days, replaces=memory_id,
                    idempotency_key=idempotency_key)
        return self.write_many([item])[0]


def present(raw: dict) -> dict:
    """The ledger's answer (``Ledger.fact_history``) as versions, oldest first."""
    by_mid: dict[str, list[dict]] = {m: [] for m in raw["ids"]}
    for ev in raw["events"]:
        by_mid[ev["memory_id"]].append(ev)
    versions = []
    for mid in raw["ids"]:
        evs = by_mid[mid]
        rec = raw["records"][mid]
        first = evs[0]
        v = {k: (rec.get(k) if rec is not None else None) for k in VERSION_FIELDS}
        v.update(memory_id=mid, version=v["version"] if rec is not None else first["version"],
                 status=rec["status"] if rec is not None else "tombstoned", erased=rec is None,
                 source={"kind": rec.get("source_kind"), "id": rec.get("source_id")} if rec is not None else None,
                 written={"seq": first["seq"], "ts": first["ts"], "actor": first["actor"], "reason": first["reason"]},
                 gate=raw["gates"].get(first["idem_key"]) if first["action"] in (E.WRITE, E.WRITE_WORKING) else None,
                 changes=[_change(ev, raw["gates"]) for ev in evs[1:]])
        ends = [c for c in v["changes"] if c["status"] in ("superseded", "evicted", "tombstoned")]
        v["ended"] = ends[-1] if ends and v["status"] not in R.LIVE else None
        versions.append(v)
    # oldest first: by when each was written (a version written after an erasure or a rollback
    # may take a number below an older one's)
    versions.sort(key=lambda v: v["written"]["seq"])
    newest = next((v for v in reversed(versions) if v["content"] is not None), None)
    live = [v["memory_id"] for v in versions if v["status"] in R.LIVE and v["pool"] == "vault"]
    return {"scope": raw["scope"], "subject": newest["subject"] if newest else None,
            "predicate": newest["predicate"] if newest else None, "live": live, "versions": versions}


def _change(ev: dict, gates: dict) -> dict:
    status = (ev["patch"] or {}).get("status")
    if ev["action"] == E.FORGET:
        status = "tombstoned"
    out = {"seq": ev["seq"], "ts": ev["ts"], "actor": ev["actor"], "action": ev["action"], "why": why(ev),
           "status": status, "reason": ev["reason"]}
    if ev["action"] in (E.REFRESH, E.MERGE):  # a write that landed on this version: its own verdict
        out["gate"] = gates.get(ev["idem_key"])
    if (ev["reason"] or "").startswith("superseded by "):
        # None: superseded by a version above the reader's clearance (its id withheld, core.history_view)
        by = _SUCCESSOR.match(ev["reason"])
        out["by"] = by.group(1) if by else None
    return out


def why(ev: dict) -> str:
    """Why a version changed, in a few words, from the event's action and its reason (both in
    clear in the ledger: nothing is decrypted for it)."""
    action, reason, patch = ev["action"], ev["reason"] or "", ev["patch"] or {}
    status = patch.get("status")
    if action == E.FORGET:
        return f"erased by rule {reason[4:]}" if reason.startswith("gc: ") else "erased"
    if action == E.REFRESH:
        return "written again"
    if action == E.MERGE:
        return "a near-copy merged into it"
    if action == E.ANNOTATE:
        if reason.startswith("rollback: "):
            return "flagged by a rollback"
        return "flagged for review" if patch.get("review") else "review flag cleared"
    if reason.startswith("superseded by "):
        return "superseded"
    if reason.startswith("gc: "):
        return f"{'evicted' if status == 'evicted' else f'marked {status}'} by rule {reason[4:]}"
    if reason.startswith("rollback: "):
        return "rolled back" if status in R.GONE else "restored by a rollback"
    for prefix, what in (("archived", "archived"), ("demoted", "demoted to the working pool"),
                         ("approved in review", "approved in review"), ("contradiction resolved", "superseded")):
        if reason.startswith(prefix):
            return what
    return f"status {status}" if status else action
