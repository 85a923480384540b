"""A core's hot state: scope states loaded from L2, the ledger's unapplied changes replayed on
them after a crash, the L1 working pool rebuilt from the ledger, and a scope rebuilt after a
failed commit. Mixed into ``ScopeCore`` (``memactors.engine.core``), whose locks serialise it
with the change path; every change goes through the one projection (``core.project.apply``).
"""

from __future__ import annotations

import asyncio
import time

from ..core import errors
from ..core import events as E
from ..core import records as R
from ..core.project import PATCH_ACTIONS, Rows, apply, l2_effect
from ..core.versions import ScopeState
from ..core.working import KEPT

RELOAD_WINDOW_S = 30.0  # how long a rebuild after a failed commit waits for a restarting ledger writer


class StateMixin:
    async def _state(self, scope: str) -> ScopeState:
        st = self.hot.get(scope)
        if st is None:
            st = (await self._load([scope]))[scope]
            self.hot.install(scope, st)
        self.hot.touch(scope)
        return st

    async def _load(self, scopes: list[str]) -> dict[str, ScopeState]:
        """Fresh states of these scopes from L2 (not installed). Scopes Lance has never seen
        need no query: only owners write Lance, one owner a tenant."""
        asked = [s for s in scopes if s in self.l2_scopes]
        await self._landed(asked)
        rows, vecs, versions = [], [], []
        for i in range(0, len(asked), 500):
            r, v = await asyncio.to_thread(self.l2.load_scopes, asked[i : i + 500])
            rows += r
            vecs += v
            versions += await asyncio.to_thread(self.l2.entity_versions, asked[i : i + 500])
        fresh = {s: ScopeState() for s in scopes}
        for r, v in sorted(zip(rows, vecs), key=lambda rv: (rv[0]["version"], rv[0]["updated_at"])):
            fresh[r["scope"]].put(R.complete(r), v)
        for scope, key, version, mid, level in versions:  # superseded ones count too: their numbers are taken
            fresh[scope].hold_version(key, int(version), mid, level)
        return fresh

    def _unlanded(self, scopes) -> bool:
        """Whether Lance has yet to see a change of one of these scopes: one in the outbox or
        half way to Lance (a rollback's, a sweep's or an erasure's in a scope not held hot, a
        scope dropped from the hot cache with a deletion pending)."""
        landing = self._landing
        return bool(scopes) and (not self.outbox.dirty_scopes().isdisjoint(scopes)
                                 or (landing is not None and not landing[0].isdisjoint(scopes)))

    async def _landed(self, scopes) -> None:
        """Once every change of these scopes is in Lance: a read of their rows follows (a load,
        a cold recall). Not while a flush is held (its holder's changes land after it)."""
        if scopes and self._hold is None:
            landing = self._landing
            if landing is not None and not landing[0].isdisjoint(scopes):  # half way to Lance
                await landing[1].wait()
            if not self.outbox.dirty_scopes().isdisjoint(scopes):
                await self._flush()

    async def _replay(self, only: set[str] | None) -> None:
        """Apply the ledger's changes that Lance has not seen, for this owner's scopes (or
        ``only``), through the projection: to fresh hot states loaded from L2, and to the
        outbox. Idempotent: L2 may already hold some of them (a crash after Lance, before the
        ledger marked them applied)."""
        unapplied = [(seq, ch) for seq, ch in await self.ledger.unapplied(sorted(only) if only else None)
                     if ch is None or self._mine(ch.scope)]
        events = [(seq, ch) for seq, ch in unapplied if ch is not None]
        scopes = sorted({ch.scope for _, ch in events} | (only or set()))
        # Rebuilt aside and swapped in whole: a direct-path recall may read states meanwhile.
        fresh = await self._load(scopes) if scopes else {}
        records = [ch.record for _, ch in events if ch.action == E.WRITE]
        vecs = dict(zip([r["memory_id"] for r in records], await self._embed([R.embedded_text(r) for r in records])))
        # A patch of a record no fresh state holds (superseded or evicted in Lance, which a
        # rollback makes live again) applies to the record the ledger projects, as on the change
        # path: applied to nothing, it left the memory out of the hot state (and, evicted, out of
        # Lance) after a crash between the commit and the flush.
        absent = sorted({ch.memory_id for _, ch in events if ch.action in PATCH_ACTIONS
                         and fresh[ch.scope].get(ch.memory_id) is None} - set(vecs))  # not written here
        bases = await self._records(absent) if absent else {}
        for seq, ch in unapplied:
            if ch is not None:  # None: a record whose key is destroyed; its erasure follows
                apply(fresh[ch.scope], ch, bases.get(ch.memory_id))
                if ch.action == E.WRITE:
                    fresh[ch.scope].vectors[ch.memory_id] = vecs[ch.memory_id]
                self._to_outbox(l2_effect(ch, False), ch, vecs.get(ch.memory_id))
            self.outbox.seqs([seq])
        back = [(sc, rec) for sc, st in fresh.items() for rec in map(st.get, absent) if rec is not None]
        for (sc, rec), vec in zip(back, await self._embed([R.embedded_text(r) for _, r in back]) if back else []):
            fresh[sc].vectors[rec["memory_id"]] = vec  # live again: its vector, and its row written whole
            self.outbox.row(rec, vec, new=False)
        # Brought back as it was, not live (an evicted version a rollback made superseded or held
        # again): no hot state holds it, and Lance may hold no row of it to patch: written whole.
        held = {rec["memory_id"] for _, rec in back}
        kept = [r for m in absent if m not in held and (r := bases.get(m)) is not None
                and r["status"] not in R.GONE and r.get("pool") != "working"]
        for rec, vec in zip(kept, await self._embed([R.embedded_text(r) for r in kept]) if kept else []):
            self.outbox.row(rec, vec, new=False)
        for sc, st in fresh.items():
            self.hot.install(sc, st)
        if unapplied:
            await self._flush_soon()

    async def _rebuild_working(self) -> None:
        """The L1 working pool, rebuilt from the ledger: the items of the last ``session_ttl_s``
        and, for a session active in that window, its older items too (a session's items live
        as long as it does), folded through the projection (promoted, released, archived or
        erased items stay out; an approved one is live)."""
        cutoff = self.now_us - self.working.ttl_us
        events = {seq: ch for seq, ch in await self.ledger.working_since(cutoff)
                  if ch is not None and self._mine(ch.scope)}
        tags = [(ch.scope, ch.record["session"]) for ch in events.values()
                if ch.action == E.WRITE_WORKING and ch.record.get("session")]
        begun = {(sc, t["id"]) for sc, t in tags} - {(sc, t["id"]) for sc, t in tags if t["slot"] == "goal"}
        if begun:  # sessions whose goal came before the window
            ids = {sid for _, sid in begun}
            older = [(seq, ch) for seq, ch in await self.ledger.working_in(sorted({sc for sc, _ in begun}),
                                                                                   cutoff) if ch is not None]
            theirs = {ch.memory_id for _, ch in older if ch.action == E.WRITE_WORKING
                      and (ch.record.get("session") or {}).get("id") in ids}
            events.update((seq, ch) for seq, ch in older if ch.memory_id in theirs)
        rows = Rows()
        for _, ch in sorted(events.items()):
            if ch.action == E.WRITE_WORKING or ch.memory_id in rows.records:
                apply(rows, ch)
        recs = [r for r in rows.records.values() if r.get("pool") == "working" and r["status"] in KEPT]
        vecs = await self._embed([R.embedded_text(r) for r in recs])
        for rec, vec in zip(recs, vecs):
            self.working.put(rec, vec)

    async def _reload(self, scopes: set[str]) -> None:
        """Forget these scopes' hot state and rebuild it from L2 and the ledger, retried while
        the ledger writer restarts (``RELOAD_WINDOW_S``). Until a rebuild succeeds the scopes
        are *stale*: nothing is decided against them (``_decide_and_commit`` reloads first).
        An empty state left behind by a failed rebuild once restarted versions at 1 beside
        live ones and wrote duplicates."""
        self._stale |= scopes
        for s in scopes:
            self.hot.discard(s)
        deadline, delay = time.monotonic() + RELOAD_WINDOW_S, 0.05
        while True:
            try:
                await self._replay(set(scopes))
                break
            except errors.OwnerUnavailable:
                if time.monotonic() > deadline:
                    raise errors.OwnerUnavailable("the ledger writer stayed unreachable; nothing further was "
                                                  "written (retry with the same idempotency keys)") from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        self._stale -= scopes
