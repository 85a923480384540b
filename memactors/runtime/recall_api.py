"""The recall half of the facade (``Runtime`` inherits it): pull and push recall, batched
recall for simulations, L3 retrieval, citations and explanations. Each recall is checked
against the actor's read grants, planned here, answered by the owners of the visible scopes
and finished here (conflicts, threshold, count, budget), then logged as evidence."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..engine.naming import owner_index
from ..core import errors
from ..core import records as R
from ..core import scoring as S
from ..core.errors import MemactorsError
from ..core.grants import GrantTable
from ..core.scopes import GLOBAL, parse_scope
from ..core.selection import finish
from ..core.visibility import RecallFilter, parse_where, purpose_rule
from ..core import validate as V
from . import history
from .evidence import evidence_row
from .renamed import UNSET, renamed
from .results import RecallResult, recall_result
from .handles import PushSession


class RecallAPI:

    def recall(self, query: str | None, *, actor: str, allowed_scopes: list[str], task_id: str = R.UNSPECIFIED,
               purpose: str = R.UNSPECIFIED, top_k: int | None = None, token_budget: int | None = None,
               threshold: float | None = None, weights: Any = None, at: int | str | datetime | None = None,
               where: dict | None = None,
               as_of: Any = UNSET) -> RecallResult:
        """Pull recall through the recall contract: refused without ``allowed_scopes`` or beyond
        the actor's read grants; visible = each allowed scope plus its ancestors. Hits are
        scored ``a*vector + b*keyword + c*recency + d*importance`` (``weights``, default from
        config), conflicts resolved, then the relevance ``threshold``, ``top_k`` (default
        ``[recall].default_top_k``) and the
        optional ``token_budget`` applied. ``task_id`` and ``purpose`` are logged with the
        evidence (default ``"unspecified"``); ``purpose`` is a name (``answer``) or ordinary text,
        gated before it is logged, and decides under ``[recall.purposes]`` what may be seen.

        ``at`` (a ledger seq, an ISO 8601 time or a datetime): what this recall would have
        returned then, under today's grants and erasures (a forgotten memory never comes back).
        It reaches back to the ledger's first event; before that, or past the newest seq:
        NotFound. (``as_of`` is its old name, deprecated.)

        ``where`` (structured filters, in the storage pre-filter with the grants' clearance and
        the purpose's rule): ``subject``, ``predicate``, ``category``, ``source_kind``, ``since``
        and ``until`` (on ``updated_at``: ISO 8601, datetime or microseconds). With
        ``query=None`` the recall lists what passes the filters, newest first (no threshold)."""
        as_of = renamed("recall", "as_of", as_of, "at", at)
        if as_of is not None:
            self._check_open()
            plan = self._plan_recall(query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold,
                                     weights, "as_of", where)
            return history.recall_at(self, plan, as_of)
        return self._recall(query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold,
                            weights, "pull", where)

    def push(self, goal: str, *, actor: str, task_id: str, allowed_scopes: list[str], purpose: str = "task_start",
             top_k: int | None = None, token_budget: int | None = None, threshold: float | None = None,
             weights: Any = None, max_items: Any = UNSET) -> RecallResult:
        """Push recall at task start (and every ``push_refresh_turns`` turns): at most ``top_k``
        items (default ``push_max_items``) within ``push_token_budget`` tokens (CJK-aware
        estimate), by the same path as ``recall``. (``max_items`` is ``top_k``'s old name.)"""
        rc = self.config.recall
        top_k = renamed("push", "max_items", max_items, "top_k", top_k)
        # None means the default; 0 is checked (and refused) as recall() checks it, never widened to it.
        return self._recall(goal, actor, task_id, allowed_scopes, purpose,
                            rc.push_max_items if top_k is None else top_k,
                            rc.push_token_budget if token_budget is None else token_budget,
                            rc.push_threshold if threshold is None else threshold, weights, "push")

    def push_session(self, goal: str, *, actor: str, task_id: str, allowed_scopes: list[str],
                     purpose: str = "task_start") -> PushSession:
        """Push recall for a running task: ``start()`` at task start, then ``turn()`` after each
        turn, which pushes again every ``push_refresh_turns`` turns (and returns None between)."""
        return PushSession(self, goal, dict(actor=actor, task_id=task_id, allowed_scopes=allowed_scopes,
                                            purpose=purpose))

    def retrieve(self, retriever, query: str, *, actor: str, allowed_scopes: list[str], task_id: str = R.UNSPECIFIED,
                 purpose: str = R.UNSPECIFIED, top_k: int | None = None, token_budget: int | None = None,
                 threshold: float | None = None, weights=None, where: dict | None = None) -> RecallResult:
        """L3 recall: ``retriever`` (a ``memactors.Retriever``: documents, an API) asked for
        ``query``; its results gated as untrusted documents, scored like memories, thresholded,
        budgeted and logged as evidence of a recall over ``allowed_scopes`` (read grants needed),
        each hit's scope the label ``l3:<name>``; never stored (to keep one, write it). A bad
        retriever or bad results raise a ValidationError (``memactors.runtime.l3``)."""
        from .l3 import retrieve

        self._check_open()
        return retrieve(self, retriever, query, actor=actor, task_id=task_id, allowed_scopes=allowed_scopes,
                        purpose=purpose, top_k=top_k, token_budget=token_budget, threshold=threshold, weights=weights,
                        where=where)

    def mark_cited(self, recall_id: str, memory_ids: list[str], *, actor: str) -> int:
        """Record which hits of ``recall_id`` the model actually used (evidence for later
        review). ``actor``'s read grants must cover the recall's scopes."""
        from .audit import check_recall_id

        self._check_open()
        check_recall_id(recall_id)
        ids = [R.check_memory_id(m) for m in V.str_list(memory_ids, "memory_ids", max_len=10_000)]
        actor = self._ids.id(actor, "actor")
        GrantTable.make(actor, "/global/")
        self._evidence.flush()
        return self._calls.get(self._ledger.mark_cited.remote(recall_id, ids, self.clock.now_us(), actor))

    def explain(self, recall_id: str, *, actor: str) -> dict:
        """Why each hit of a recall came back (score and its components, conflicts won), what
        the filters were, and how many candidates the threshold, conflicts and budget removed.
        ``actor``'s read grants must cover the recall's scopes."""
        return self.audit.recall(recall_id, actor=actor)

    def _recall(self, query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold, weights,
                mode: str, where: dict | None = None) -> RecallResult:
        self._check_open()
        plan = self._plan_recall(query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold,
                                 weights, mode, where)
        return self._observed("recall", plan, lambda: self._serve(plan))  # observers (OpenTelemetry) see it too

    def _serve(self, plan: _RecallPlan) -> RecallResult:
        """One checked recall, here in the caller's thread: its query's vector, the owners'
        answers (the direct path when one owner holds the scopes), finished."""
        plan.owner_req["qvec"] = (self._query_vectors.many([plan.req.query], [plan.text])[0]
                                  if plan.text is not None else None)
        plan.owner_req["finish"] = plan.finish()
        return self._finish_recall(plan, self._fan_out(plan.owner_req, plan.visible))

    def recall_many(self, requests: list[dict], *, return_errors: bool = False) -> list[RecallResult]:
        """Many recalls at once (thousands of agents in a simulation tick): each request is a
        dict of ``recall()`` arguments (query, actor, task_id, allowed_scopes, purpose, and
        optionally top_k, token_budget, threshold, weights, where, at), checked against its actor's grants
        and logged as evidence like a single recall. Queries are embedded in one batch; each
        owner gets one call for all the requests it serves. A bad request refuses the call
        before anything is recalled (the error names its position); with ``return_errors``
        it gets its typed error in place of its result and the others are recalled."""
        self._check_open()
        return_errors = V.flag(return_errors, "return_errors")
        if not isinstance(requests, (list, tuple)):
            raise R.InvalidRecord("recall_many takes a list of recall requests (dicts of recall() arguments)")
        plans: list = []
        past: dict[int, tuple] = {}  # position -> (plan, at): recalled as of then, each on its own (recall(at=))
        for i, rq in enumerate(requests):
            try:
                a = recall_args(rq, frozenset({"at"}))
                mode = "pull" if a.get("at") is None else "as_of"
                plan = self._plan_recall(a["query"], a["actor"], a["task_id"], a["allowed_scopes"], a["purpose"],
                                         a["top_k"], a["token_budget"], a["threshold"], a["weights"], mode, a["where"])
                if mode == "as_of":
                    past[i], plan = (plan, a["at"]), None  # None: not sent to the owners with the others
                plans.append(plan)
            except MemactorsError as exc:
                err = type(exc)(f"request at position {i}: {exc}")
                if not return_errors:
                    raise err from None
                plans.append(err)
        out = self._run_plans(plans)
        for i, (plan, at) in past.items():
            try:
                out[i] = history.recall_at(self, plan, at)
            except MemactorsError as exc:
                out[i] = type(exc)(f"request at position {i}: {exc}")
        if not return_errors:
            bad = next((r for r in out if isinstance(r, MemactorsError)), None)
            if bad is not None:
                raise bad
        return out

    def _run_plans(self, plans: list) -> list:
        """Checked recall plans (errors pass through in place): queries embedded in one batch,
        one call per owner, each result finished and logged. An owner's refusal of one request
        becomes that request's error."""
        by_owner = self._route_plans(plans)
        refs = {oi: self._host.send_recalls(self._owners[oi], [plans[i].owner_req for i in idx])
                for oi, idx in by_owner.items()}
        return self._finish_plans(plans, by_owner, {oi: self._calls.get(ref) for oi, ref in refs.items()})

    def _route_plans(self, plans: list) -> dict[int, list[int]]:
        """The live plans' queries embedded in one batch; owner index -> the plans it serves."""
        live = [i for i, p in enumerate(plans) if isinstance(p, _RecallPlan)]
        if not live:
            return {}
        queried = [i for i in live if plans[i].text is not None]  # None: a listing, nothing to embed
        vecs = (dict(zip(queried, self._query_vectors.many([plans[i].req.query for i in queried],
                                                            [plans[i].text for i in queried])))
                if queried else {})
        n = len(self._owners)
        by_owner: dict[int, list[int]] = {}
        for i in live:
            plans[i].owner_req["qvec"] = vecs.get(i)
            plans[i].owner_req["finish"] = plans[i].finish()
            for oi in _owners_of(plans[i].visible, n):
                by_owner.setdefault(oi, []).append(i)
        return by_owner

    def _finish_plans(self, plans: list, by_owner: dict, answers: dict) -> list:
        """Each plan finished over its owners' ``answers`` (owner index -> one part per plan)."""
        out: list = list(plans)
        parts: dict[int, list] = {i: [] for i, p in enumerate(plans) if isinstance(p, _RecallPlan)}
        for oi, idx in by_owner.items():
            for i, part in zip(idx, answers[oi]):
                if errors.is_encoded(part):
                    out[i] = errors.decode(part)
                elif not isinstance(out[i], MemactorsError):
                    parts[i].append(part)
        for i in parts:
            if not isinstance(out[i], MemactorsError):
                out[i] = self._finish_recall(plans[i], parts[i])
        return out

    def _plan_recall(self, query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold, weights,
                     mode: str, where: dict | None = None) -> _RecallPlan:
        """A recall checked and prepared for the owners (everything but the query's vector)."""
        ids = self._ids
        actor = ids.id(actor, "actor")
        req = R.RecallRequest(query, actor, ids.id(task_id, "task_id"), ids.scopes(allowed_scopes),
                              ids.purpose(purpose, self.gate.redact_all),
                              self.config.recall.default_top_k if top_k is None else top_k, token_budget).validate()
        if mode == "as_of":
            # No owner re-checks what the ledger folds for the past: this filter alone does, so it
            # takes the grants as they are now (another driver of the folder may have changed them).
            self._sync_grants()
        # The grant check and clearances as the owners take them: kept until a grant changes,
        # a refusal raised (after one sync) on every call.
        view = self._recall_view(actor, tuple(req.allowed_scopes))
        rc = self.config.recall
        rule, wh = purpose_rule(rc.purposes, req.purpose), parse_where(where)
        flt = view.recall_filter(rule) if wh is None else RecallFilter.make(view[1], rule, wh)
        w = V.weights(weights if weights is not None else rc.weights)
        thr = rc.threshold if threshold is None else V.threshold(threshold)
        # The query passes the gate before it is embedded, tokenised or digested.
        text = self.gate.redact_all(req.query) if req.query is not None else None
        if text is None:
            thr = 0.0  # a listing: nothing to be relevant to
        now = self.clock.now_us()
        owner_req = {"qvec": None, "qtokens": S.tokenize(text) if text is not None else [], "now": now,
                     "m": max(3 * req.top_k, 20), "actor": actor, "allowed": req.allowed_scopes,
                     "weights": w.as_tuple(), "purpose": req.purpose,
                     "where": flt.where.to_wire() if flt.where is not None else None}
        return _RecallPlan(req, list(view.names), text, now, w, thr, mode, owner_req, flt)

    def _finish_recall(self, plan: _RecallPlan, parts: list[dict]) -> RecallResult:
        """Over every owner's candidates: conflicts, threshold, count and budget; the evidence
        logged. An owner that held every candidate finished them itself (``final``: only the
        chosen hits crossed back, with the counts); should another owner have answered with
        candidates after all (/global/ written in between), the owners are asked again for
        every candidate."""
        final = [p for p in parts if "final" in p]
        if final:
            if len(final) > 1 or any(p["hits"] for p in parts if "final" not in p):
                plan.owner_req["finish"] = None
                return self._finish_recall(plan, self._ask_owners(plan.owner_req, plan.visible))
            chosen, info, n = final[0]["hits"], final[0]["final"]["info"], final[0]["final"]["candidates"]
        else:
            chosen, info, n = finish(sorted((h for p in parts for h in p["hits"]), key=plan.order), plan.finish())
        paths = {p["path"] for p in parts}
        result = recall_result(chosen, info, visible=plan.visible, path=paths.pop() if len(paths) == 1 else "mixed",
                               threshold=plan.threshold)
        self._evidence.add(evidence_row(plan.req, result, self._evidence.digest(plan.text or ""), plan.now,
                                        mode=plan.mode, weights=plan.weights, threshold=plan.threshold,
                                        candidates=n, info=info, flt=plan.filter))
        return result

    def _fan_out(self, req: dict, visible: list[str]) -> list[dict]:
        """Ask the owners of the visible scopes (each serves what its own grant check yields).
        When one owner holds every scope but /global/ (one tenant: the usual case), it alone
        answers, over the direct path when enabled, and /global/'s owner is asked only if
        /global/ holds anything."""
        n = len(self._owners)
        glob = owner_index(GLOBAL, n)
        tenant_owners = {owner_index(parse_scope(s), n) for s in visible if s != str(GLOBAL)}
        if len(tenant_owners) == 1:
            oi = tenant_owners.pop()
            part = self._direct[oi].call(req) if self.config.recall.compiled_path and self._direct else None
            if part is None:
                part = self._calls.get(self._owners[oi].recall.remote(req))
            elif errors.is_encoded(part):
                raise errors.decode(part)
            parts = [part]
            if part.get("needs_global") and oi != glob:
                parts.append(self._calls.get(self._owners[glob].recall.remote(req)))
            return parts
        return self._ask_owners(req, visible)

    def _ask_owners(self, req: dict, visible: list[str]) -> list[dict]:
        """Every owner of the visible scopes asked at once, /global/'s included."""
        return self._calls.get([self._owners[oi].recall.remote(req) for oi in _owners_of(visible, len(self._owners))])


@dataclass(slots=True)
class _RecallPlan:
    req: R.RecallRequest
    visible: list[str]
    text: str  # the query as the gate left it
    now: int
    weights: object
    threshold: float
    mode: str
    owner_req: dict
    filter: RecallFilter | None = None  # clearance, purpose rule and where= (the owners build their own)
    exclude: frozenset = frozenset()  # ids never returned (a session's push: what L0 already shows)

    def finish(self) -> dict:
        """What an owner holding every candidate needs to finish the recall itself
        (``engine.recall``'s ``_finished``)."""
        return {"threshold": self.threshold, "top_k": self.req.top_k, "token_budget": self.req.token_budget,
                "exclude": sorted(self.exclude)}

    def order(self, h: dict):
        """Best first: by score, or for a listing (no query) newest first."""
        if self.text is None:
            return (-int(h["updated_at"]), h["memory_id"])
        return (-h["score"], h["memory_id"])


_RECALL_DEFAULTS = {"task_id": R.UNSPECIFIED, "purpose": R.UNSPECIFIED, "top_k": None, "token_budget": None,
                    "threshold": None, "weights": None, "where": None}  # recall()'s own
_RECALL_KEYS = {"query", "actor", "allowed_scopes", *_RECALL_DEFAULTS}


def recall_args(rq: object, also: frozenset = frozenset()) -> dict:
    """A recall request as a dict (``recall_many``, ``arecall``; ``also``: further keys the
    caller takes) checked for its keys, with ``recall()``'s defaults filled in."""
    if not isinstance(rq, dict) or not {"query", "actor", "allowed_scopes"} <= set(rq):
        raise R.InvalidRecord("a recall request is a dict with query, actor and allowed_scopes (task_id and "
                              "purpose optional)")
    extra = set(rq) - _RECALL_KEYS - also
    if extra:
        raise R.InvalidRecord(f"unknown recall argument(s) ({len(extra)})")  # a key is never echoed
    return {**_RECALL_DEFAULTS, **rq}


def _owners_of(visible: list[str], n: int) -> list[int]:
    """The owners a recall over ``visible`` asks: the tenant's owner, and /global/'s when it is
    another (it says itself whether /global/ holds anything)."""
    return list(_owner_set(tuple(visible), n))


@functools.lru_cache(maxsize=4096)  # a function of the scope names alone: an agent's recalls repeat them
def _owner_set(visible: tuple[str, ...], n: int) -> tuple[int, ...]:
    return tuple(sorted({owner_index(parse_scope(s), n) for s in visible}))
