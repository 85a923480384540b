"""An owner's recall: hot scopes from memory, cold scopes through Lance (DESIGN sections 5, 9).

Mixed into ``ScopeCore``. The owner checks grants itself and serves the visible set *its
own* check yields (each allowed scope and its ancestors), never a scope list it is handed: a
caller that skips the facade gets no further. Threshold, conflicts and budget are applied by
the caller over every owner's candidates; an owner returns its best ``m`` candidates and
every visible rival of their entity keys (hot and cold), so conflicts resolve across scopes.
An owner that holds every candidate (every visible scope but /global/, and /global/ empty or
its own) applies them itself when the request says how (``finish``): only the chosen hits
cross back (a simulation's recall: 5 of ~20 candidates).
"""

from __future__ import annotations

import asyncio
import time
from operator import itemgetter

import numpy as np

from ..core import scoring as S
from ..core.errors import MemactorsError
from ..core.scopes import GLOBAL
from ..core.selection import finish
from ..core.visibility import RecallFilter, purpose_rule, where_from_wire
from ..store import filters as F
from .hot import HotIndex, Scored, entity_keys, score_rows

GLOBAL_SCOPE = str(GLOBAL)
# A batch of recalls hands the owner's loop to what waits (a write) this often: a simulation's
# 1,000 recalls held it ~170 ms, and a write behind them waited that long (ack p99 beside them
# 174-196 -> 85-102 ms).
YIELD_S = 0.002


class RecallMixin:
    def _served(self, req: dict) -> tuple[list[str], bool]:
        """The visible scopes (each allowed scope and its ancestors) this owner holds, from the
        grant check itself (/global/ stays for the owners that must say whether to ask it), and
        whether it holds every visible scope but /global/."""
        visible, _ = self.grants.recall_view(req["actor"], tuple(req["allowed"]))
        served = [str(s) for s in visible if s == GLOBAL or self._mine(str(s))]
        return served, len(served) == len(visible)

    def _working_index(self, items: list[dict], vectors: dict) -> HotIndex:
        return HotIndex.of_items(items, vectors, self.hot.dim)

    def _filter(self, req: dict) -> RecallFilter:
        """What this recall may see beyond its scopes, from this owner's own grants (clearance
        per visible scope) and configuration (the purpose's rule), with the request's ``where``
        checked again: never a filter the caller hands over ready-made."""
        _, clear = self.grants.recall_view(req["actor"], tuple(req["allowed"]))
        rule = purpose_rule(self.cfg.recall.purposes, req.get("purpose"))
        return RecallFilter.make(clear, rule, where_from_wire(req.get("where")))

    def _recall_core(self, req: dict) -> tuple[list[dict], list[str], bool, list[str], RecallFilter, bool]:
        """The hot part of a recall: (scored candidates, cold scopes still to query, whether
        /global/ must be asked of its owner, hot scopes, the recall's filter, whether this owner
        holds every candidate: every visible scope but /global/, and /global/ empty or its own).
        Reads only: it also runs on the direct path's thread, so it never mutates shared state."""
        served, whole = self._served(req)
        flt = self._filter(req)
        qvec, qterms, now_us = req["qvec"], S.QueryTerms.of(req["qtokens"]), req["now"]
        weights = S.Weights.parse(req["weights"])
        cands: list[dict] = []
        cold, needs_global, hot = [], False, []
        scored: dict[str, Scored] = {}
        for s in served:
            if s == GLOBAL_SCOPE and not self.is_global_owner:
                needs_global = self.global_live
                continue
            # L1 lives here whether its scope is hot or cold; filtered like every other path, and
            # scored as a hot scope is (its best m: the others could not make the cut)
            working = self.working.view(s, self._working_index)
            if working is not None and working.recs:
                keep = [ok and flt.keep(r) for ok, r in zip(self.working.within(working.recs, now_us), working.recs)]
                cands += working.score(qvec, qterms, now_us, weights, req["m"],
                                       None if all(keep) else np.array(keep, dtype=bool))[0]
            idx = self.hot.index(s)
            if idx is None:
                if s in self.l2_scopes:  # a scope with no rows anywhere needs no query
                    cold.append(s)
                continue
            hot.append(s)
            best, sc = idx.score(qvec, qterms, now_us, weights, req["m"], idx.mask(flt, s))
            cands += best
            if sc is not None:
                scored[s] = sc
        if qvec is None:  # a listing: newest first
            cands.sort(key=lambda h: (-_ts(h["updated_at"]), h["memory_id"]))
        else:
            _best_first(cands)
        top = cands[: req["m"]]
        # the hot rivals of the best (live, passing the filter), scored as they were
        for r in self.hot.rivals(top, hot):
            h = scored[r["scope"]].hit_of(r["memory_id"]) if r["scope"] in scored else None
            if h is not None:
                top.append(h)
        return top, cold, needs_global, hot, flt, whole and not needs_global

    def _cold(self, req: dict, cold: list[str], hot_hits: list[dict], hot: list[str], flt: RecallFilter) -> list[dict]:
        """Candidates from cold scopes (pre-filtered Lance vector and full-text queries, or the
        newest rows for a listing), and the cold rivals of every candidate's entity key; the
        recall's filter is part of every pre-filter."""
        weights = S.Weights.parse(req["weights"])
        qterms = S.QueryTerms.of(req["qtokens"]) if req["qvec"] is not None else None
        out, whole = [], None
        vis = F.visibility(flt, cold) if cold else None
        if cold:
            where = f"{F.recall_filter(cold, req['now'])} AND {vis}"
            if req["qvec"] is None:
                rows = self.l2.recent(where, req["m"])
                out = score_rows(rows, np.zeros(len(rows)), None, req["now"], weights)
            else:
                # small cold scopes: every row they show this recall, scored as a hot scope's
                rows = whole = self.l2.search_whole(req["qvec"], cold, where)
                if rows is None:
                    rows = self.l2.hybrid_search(req["qvec"], list(qterms.terms), cold, req["now"], req["m"],
                                                 where=where)
                out = score_rows(rows, [r["cosine"] for r in rows], qterms, req["now"], weights)
                out = _best_first(out)[: req["m"]]  # the best m, as from a hot scope
        keys = entity_keys(hot_hits + out)
        if keys and cold:
            seen = {h["memory_id"] for h in hot_hits + out}
            # the rivals query's filter is the scan's and the keys: a scan has them all already
            found = [r for r in whole if r.get("entity_key") in keys] if whole is not None else \
                self.l2.rivals(cold, sorted(keys), req["now"], extra=vis, vector=req["qvec"])
            rivals = [r for r in found if r["memory_id"] not in seen]
            # scored for real, as the hot path scores its rivals: one that wins its conflict is
            # judged on its own relevance (a listing has none: zeros, as hot)
            cos = [r["cosine"] for r in rivals] if qterms is not None else np.zeros(len(rivals))
            out += score_rows(rivals, cos, qterms, req["now"], weights)
        return out

    def _finish(self, hits: list[dict], cold_hits: list[dict], cold: list[str], req: dict, needs_global: bool,
                hot: list[str], whole: bool = False) -> dict:
        if req["qvec"] is None:  # a listing: newest first, no relevance to judge
            hits = sorted(hits + cold_hits, key=lambda h: (-_ts(h["updated_at"]), h["memory_id"]))
        else:
            hits = _best_first(hits + cold_hits)
            floor = req.get("min_score", self.cfg.recall.min_score)
            hits = [h for h in hits if h["relevance"] > floor]  # relevance: a stale hit is judged before its x0.5
        path = "hot" if not cold else ("cold" if not hot else "mixed")
        out = {"hits": hits, "path": path, "cold_scopes": len(cold), "needs_global": needs_global}
        if whole and req.get("finish") is not None:
            # every candidate is here (the tenant's scopes are this owner's; /global/ is empty or
            # its own): finished here as the facade would, only the chosen hits cross back
            return _finished(out, req["finish"])
        return out

    async def recall(self, req: dict) -> dict:
        """Scored candidates from the visible scopes this owner holds: the best ``m`` and their
        entity-key rivals."""
        await self._ready()
        hits, cold, needs_global, hot, flt, whole = self._recall_core(req)
        for s in hot:
            self.hot.touch(s)
        await self._landed(cold)  # a forget's deletion in a cold scope is not served meanwhile
        cold_hits = await asyncio.to_thread(self._cold, req, cold, hits, hot, flt) if cold else []
        return self._finish(hits, cold_hits, cold, req, needs_global, hot, whole)

    async def recall_many(self, reqs: list[dict]) -> list[dict]:
        """Many recalls in one call (a simulation tick): hot scopes answered in memory one after
        another; cold scopes queried in one worker thread. Each request is checked against its
        actor's grants; a refused one comes back as an encoded typed error."""
        await self._ready()
        out: list = [None] * len(reqs)
        cold_jobs = []
        t_yield = time.perf_counter()
        for i, req in enumerate(reqs):
            if time.perf_counter() - t_yield > YIELD_S:
                await asyncio.sleep(0)
                t_yield = time.perf_counter()
            try:
                core = self._recall_core(req)
            except MemactorsError as exc:
                out[i] = {"error": type(exc).__name__, "message": str(exc)}
                continue
            out[i] = core
            if core[1]:  # cold scopes to query
                cold_jobs.append(i)
        if cold_jobs:
            await self._landed({s for i in cold_jobs for s in out[i][1]})
            colds = await asyncio.to_thread(
                lambda: {i: self._cold(reqs[i], out[i][1], out[i][0], out[i][3], out[i][4]) for i in cold_jobs})
        else:
            colds = {}
        done = []
        for i, r in enumerate(out):
            if isinstance(r, dict):
                done.append(r)
                continue
            hits, cold, needs_global, hot, _flt, whole = r
            # /global/ candidates come from its owner, asked by the facade as part of the fan-out
            try:
                done.append(self._finish(hits, colds.get(i, []), cold, reqs[i], needs_global, hot, whole))
            except MemactorsError as exc:
                done.append({"error": type(exc).__name__, "message": str(exc)})
        return done

    async def recall_as_of(self, req: dict) -> list[dict]:
        """Candidates for a recall as of a past point (``req["now"]`` is its time): the rows of
        the visible scopes this owner holds that have not changed since, pre-filtered live then
        (``req["exclude"]`` names the memories changed after it: the ledger answers for those).
        A row unchanged since then is what it was then."""
        await self._ready()
        await self._flush()  # every row written up to that point must be in Lance
        served = [s for s in self._served(req)[0] if (s != GLOBAL_SCOPE or self.is_global_owner) and s in self.l2_scopes]
        flt = self._filter(req)
        if not served:
            return []
        where = f"{F.as_of_filter(served, req['now'], req['exclude'])} AND {F.visibility(flt, served)}"
        if req["qvec"] is None:
            rows = await asyncio.to_thread(self.l2.recent, where, req["m"])
            return score_rows(rows, np.zeros(len(rows)), None, req["now"], S.Weights.parse(req["weights"]))
        qterms = S.QueryTerms(req["qtokens"])
        rows = await asyncio.to_thread(self.l2.hybrid_search, req["qvec"], list(qterms.terms), served, req["now"],
                                       req["m"], where=where)
        return score_rows(rows, [r["cosine"] for r in rows], qterms, req["now"], S.Weights.parse(req["weights"]))

    def recall_direct(self, req: dict) -> dict:
        """The same recall as a plain method, for the direct path (the Ray host's local socket,
        ``actors.hot_socket``; the process host's caller): no task submission per call. Runs on
        the caller's thread, not the loop's."""
        if self._started is None or not self._started.done():
            return {"not_ready": True}
        try:
            hits, cold, needs_global, hot, flt, whole = self._recall_core(req)
            if self._unlanded(cold):  # the loop's path flushes them first
                return {"not_ready": True}
            cold_hits = self._cold(req, cold, hits, hot, flt) if cold else []
            return self._finish(hits, cold_hits, cold, req, needs_global, hot, whole)
        except MemactorsError as exc:  # the direct path carries data, not our exception types
            return {"error": type(exc).__name__, "message": str(exc)}


def _finished(part: dict, how: dict) -> dict:
    """An owner's answer holding every candidate of its recall (in the facade's order:
    ``_finish``'s), finished as the facade would (``core.selection.finish``); ``final``: what
    the evidence counts (the rules' removals, the candidates)."""
    chosen, info, n = finish(part["hits"], how)
    return {**part, "hits": chosen, "final": {"info": info, "candidates": n}}


def _ts(v) -> int:
    """A hit's time as microseconds (hot records hold ints; Lance rows may hold datetimes)."""
    return v if isinstance(v, int) else int(v.timestamp() * 1_000_000)


def _best_first(hits: list[dict]) -> list[dict]:
    """``hits`` sorted in place, best score first, equal scores by memory id: the facade's order,
    so that a cut here keeps the hits it would (and a hot scope and a scan of it keep the same
    ones). Two stable sorts by a C key (a reversed sort keeps equals in order): a Python key
    building (-score, id) per hit cost twice as much."""
    hits.sort(key=_ID)
    hits.sort(key=_SCORE, reverse=True)
    return hits


_ID, _SCORE = itemgetter("memory_id"), itemgetter("score")
