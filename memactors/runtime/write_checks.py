"""A batch of writes checked at the door, before anything is sent: validated, ids screened,
TTL policies resolved, grants and ``derived_from`` claims checked, an idempotency key each.
Mixed into ``Runtime``; the owners check grants and claims again, as the authority."""

from __future__ import annotations

from ..core import lifecycle
from ..core import records as R
from ..core import validate as V
from ..core.errors import AccessDenied, MemactorsError, NotFound
from ..core.idempotency import made_key_prefix
from ..core.scopes import parse_scope


class WriteChecks:
    def _checked_writes(self, items: list, return_errors: bool, sessions: bool = False) -> list:
        """Writes validated, id-screened, TTL-checked and grant-checked, each given an
        idempotency key: a WriteRequest per good item, its typed error (naming its position) in
        place of each bad one. Without ``return_errors`` the first bad item raises (a bad item
        writes nothing)."""
        self._check_open()
        return_errors = V.flag(return_errors, "return_errors")
        items, refused = self._ids.writes(items)
        reqs = R.write_requests(items, sessions=sessions)
        for i, exc in refused.items():  # an id that looks like personal data or a secret
            reqs[i] = type(exc)(f"write at position {i}: {exc}")
        for i, r in enumerate(reqs):  # the category and its TTL policy, with this runtime's [lifecycle]
            if isinstance(r, MemactorsError):
                continue
            try:
                lifecycle.ttl_policy(r.category, r.ttl_days, r.soft_ttl_days, self.config.lifecycle)
            except MemactorsError as exc:
                reqs[i] = type(exc)(f"write at position {i}: {exc}")
        bad = next((r for r in reqs if isinstance(r, MemactorsError)), None)
        if bad is not None and not return_errors:  # all or nothing at the door: the error names the position
            raise bad
        if return_errors:
            for i, r in enumerate(reqs):
                if not isinstance(r, MemactorsError):
                    try:
                        self._check_write([(r.actor, r.scope_obj)])
                    except MemactorsError as exc:
                        reqs[i] = type(exc)(f"write at position {i}: {exc}")
            good = [i for i, r in enumerate(reqs) if not isinstance(r, MemactorsError)]
            for j, exc in self._refused_claims([reqs[i] for i in good], not sessions).items():
                reqs[good[j]] = type(exc)(f"write at position {good[j]}: {exc}")
        else:
            try:
                self._check_write([(r.actor, r.scope_obj) for r in reqs])
            except MemactorsError:  # which one: its position, as every other refusal at the door names it
                for i, r in enumerate(reqs):  # the table was synced by the check that failed
                    try:
                        self._grants.check_write(r.actor, r.scope_obj)
                    except MemactorsError as exc:
                        raise type(exc)(f"write at position {i}: {exc}") from None
                raise
            refused = self._refused_claims(reqs, not sessions)
            if refused:
                i = min(refused)
                raise type(refused[i])(f"write at position {i}: {refused[i]}")
        good = [i for i, r in enumerate(reqs) if not isinstance(r, MemactorsError)]
        call = made_key_prefix()
        for i in good:
            if reqs[i].idempotency_key is None:
                reqs[i].idempotency_key = f"{call}-{i}"
        return reqs

    def _refused_claims(self, reqs: list[R.WriteRequest], cleared: bool = True) -> dict[int, MemactorsError]:
        """The writes (by position) whose ``derived_from`` names a memory their actor may not
        read. A claim needs a read grant on each source: checked here too, before anything is
        sent, so that a refused claim refuses its call (the owner checks again, as the
        authority); one ledger call for all of them. ``cleared``: a caller's claim also needs
        the clearance to see each source (else a source above it read as there, an unknown id as
        not); a session's own outcome claims its own items, whatever they were raised to."""
        claimed = [i for i, r in enumerate(reqs) if r.derived_from]
        if not claimed:
            return {}
        named = sorted({m for i in claimed for m in reqs[i].derived_from})
        where = self._calls.get(self._ledger.scopes_of.remote(named))
        level = {}
        known = [m for m in named if m in where]
        if cleared and known:  # each source's sensitivity, as the ledger projects it (an erased one has none)
            now = self._calls.get(self._ledger.history_call.remote("now_and_then", known, None))
            level = {m: rec.get("sensitivity") for m, (rec, _) in now.items() if rec is not None}
        out = {}
        for i in claimed:
            r = reqs[i]
            try:
                self._check_claim(r.actor, r.derived_from, where, level)
            except MemactorsError:  # one answer for unknown and unreadable: nothing of the source shows
                out[i] = AccessDenied("derived_from names a memory this actor cannot read; nothing was written")
        return out

    def _check_claim(self, actor: str, sources: list[str], where: dict, level: dict) -> None:
        """One claim's sources all known, under the actor's read grants and (those with a
        ``level``) within its clearance there; raises if not. Each scope is asked once: a
        session's outcome claims its items, most of them in one scope (the visible set and the
        clearances were worked out again for every source)."""
        if any(m not in where for m in sources):
            raise NotFound("unknown")
        scopes = {s: parse_scope(s) for s in (where[m] for m in sources)}
        self._check_read(actor, list(scopes.values()))
        sees: dict[str, frozenset] = {}
        for m in sources:
            if m in level:
                s = where[m]
                if s not in sees:
                    sees[s] = self._grants.sees(actor, scopes[s])
                if level[m] not in sees[s]:
                    raise NotFound("above the clearance")
