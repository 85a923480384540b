"""An owner's reads by key: the live memories of some scopes, by id, by entity key or all of
them (``rt.agent(...).get`` / ``.list``, the LangGraph store's get, search without a query and
list_namespaces), and the review queue (held writes, periodic reviews, contradiction flags).
Mixed into ``ScopeCore``.

Like recall, the owner checks the actor's read grants itself (a caller that skips the facade
gets no further), returns only live vault memories (never pending, superseded or erased), and
leaves out what is hard-expired at ``now`` even before a sweep removes it.
"""

from __future__ import annotations

from ..core import records as R
from ..core.scopes import parse_scope
from ..core.visibility import RecallFilter, purpose_rule

# What a read by key returns of a record: the hit fields, and its hard expiry (TTL refresh).
LISTED = (*R.HIT_FIELDS, "hard_expires_at", "hard_ttl_days")


def _us(v) -> int | None:
    if v is None or isinstance(v, int):
        return v
    return int(v.timestamp() * 1_000_000)  # a datetime read back from L2


def _expired(r: dict, now_us: int) -> bool:
    """Past its hard TTL: out of recall, before a sweep erases it."""
    exp = _us(r.get("hard_expires_at"))
    return exp is not None and exp <= now_us


class ListingMixin:
    async def live(self, scopes: list[str], actor: str, now_us: int, *, memory_ids: list[str] | None = None,
                   entity_keys: list[str] | None = None, subject_prefix: str | None = None,
                   limit: int | None = None, include_expired: bool = False, purpose: str | None = None,
                   offset: int = 0) -> list[dict]:
        """Live vault memories of ``scopes`` (each must be this owner's and readable by ``actor``),
        oldest first: those with these ids, or these entity keys (the newest live version the
        actor may see of each: two writers not cleared for each other's keep one each), or whose
        subject starts with ``subject_prefix``, or all of them; at most ``limit``, after the first
        ``offset``.
        ``include_expired``: hard-expired ones too (still held until a sweep; for inspection).
        Only what the actor's clearance for each scope (and ``purpose``'s rule) lets a recall see."""
        await self._ready()
        for s in scopes:
            self._check_mine(s)
        allowed = [parse_scope(s) for s in scopes]
        self.grants.check_recall(actor, allowed)
        flt = RecallFilter.make(self.grants.clearances(actor, allowed), purpose_rule(self.cfg.recall.purposes, purpose),
                                None)
        out = []
        for s in scopes:
            st = await self._state(s)
            if memory_ids is not None:
                recs = [st.records.get(m) for m in memory_ids]
            elif entity_keys is not None:  # the newest live version the actor may see (the newest may be above it)
                recs = [next((r for r in st.live_versions(k) if flt.keep(r)
                              and (include_expired or not _expired(r, now_us))), None) for k in entity_keys]
            elif subject_prefix is not None:
                recs = [r for r in st.records.values() if (r.get("subject") or "").startswith(subject_prefix)]
            else:
                recs = list(st.records.values())
            for r in recs:
                if r is None or r["status"] not in R.LIVE or not flt.keep(r):
                    continue
                exp = _us(r.get("hard_expires_at"))
                if exp is not None and exp <= now_us and not include_expired:
                    continue
                out.append({k: _us(r.get(k)) if k.endswith(("_at",)) else r.get(k) for k in LISTED})
        out.sort(key=lambda r: (r["created_at"], r["memory_id"]))
        return out[offset:offset + limit] if limit is not None else out[offset:]

    async def scopes_under(self, under: str, actor: str) -> list[str]:
        """The scopes of this owner under ``under`` (itself included) that hold memories (in L2,
        hot, or on their way to L2) and that ``actor`` may read: what a store that keeps its
        namespaces in scopes of their own lists and searches (the LangGraph store's ``scope_of``)."""
        await self._ready()
        root = parse_scope(under)
        held = set(self.l2_scopes) | set(self.hot.states) | self.outbox.dirty_scopes()
        return sorted(s for s in held if self._mine(s) and root.is_ancestor_or_self(p := parse_scope(s))
                      and self.grants.reads(actor, p))

    # --- the review queue ------------------------------------------------------------------

    async def review_list(self, scopes: list[str], actor: str, kind: str = "pending",
                          now_us: int | None = None) -> list[dict]:
        """Held (pending) writes of these scopes, vault and working pool, or (``kind="periodic"``)
        live memories due for their periodic review, for an actor who may read them."""
        now = max(self.now_us, now_us or 0)  # the caller's clock: after a restart the owner knows only its events'
        if kind == "periodic":  # one past its hard TTL is out of recall: nothing left to review
            return await self._listed(scopes, actor, lambda r: r["status"] in R.LIVE and r.get("review") == kind
                                      and not _expired(r, now))
        return await self._listed(scopes, actor, lambda r: r["status"] == "pending",
                                  lambda s: self.working.held(s, self.now_us))

    async def flagged(self, scopes: list[str], actor: str, now_us: int | None = None) -> list[dict]:
        """Live versions flagged for a contradiction review, for an actor who may read them; none
        past its hard TTL (out of recall: no side a reviewer could pick)."""
        now = max(self.now_us, now_us or 0)
        return await self._listed(scopes, actor, lambda r: r["status"] in R.LIVE and r.get("review") == "contradiction"
                                  and not _expired(r, now))

    async def _listed(self, scopes: list[str], actor: str, keep, also=lambda s: ()) -> list[dict]:
        await self._ready()
        for s in scopes:
            self._check_mine(s)
            self.grants.check_recall(actor, [parse_scope(s)])
        out = []
        for s in scopes:
            st = await self._state(s)
            sees = self.grants.sees(actor, parse_scope(s))  # a held write above the clearance is not listed
            out += [{k: r.get(k) for k in (*R.HIT_FIELDS, "source_id")} for r in (*st.records.values(), *also(s))
                    if keep(r) and r.get("sensitivity") in sees]
        return sorted(out, key=lambda r: (r["created_at"], r["memory_id"]))  # a batch's writes share a time
