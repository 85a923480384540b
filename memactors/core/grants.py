"""Grants bind actors to scopes (DESIGN section 4). A grant covers its scope and every descendant.

Pure data and checks; the runtime persists each change as a ledger event.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .errors import AccessDenied, NoGrants
from .scopes import Scope, check_identifier, parse_scope, visible_set
from .visibility import DEFAULT_CLEARANCE, RANK, PurposeRule, RecallFilter, at_or_below, check_clearance

# The runtime's own identity, for the work it does itself (sweeps, demotion). Not an
# identifier ('@' is not an identifier character), so no caller can pass it as ``actor``, no
# grant can name it, and it needs none: only the operations built for that work accept it.
SYSTEM_ACTOR = "@lifecycle"
# The name sweeps acted as in folders made before SYSTEM_ACTOR: an ordinary actor name there,
# with a grant on /global/ that connect revokes.
RETIRED_SYSTEM_ACTOR = "memactors-lifecycle"


def check_system_or_identifier(value: object, what: str = "actor") -> str:
    """An actor of an operation the runtime builds for itself: SYSTEM_ACTOR or an identifier."""
    return value if value == SYSTEM_ACTOR else check_identifier(value, what)


@dataclass(frozen=True, slots=True)
class Grant:
    actor: str
    scope: Scope
    read: bool
    write: bool
    clearance: str = DEFAULT_CLEARANCE  # the most sensitive memories it lets its actor recall

    def to_dict(self) -> dict:
        return {"actor": self.actor, "scope": str(self.scope), "read": self.read, "write": self.write,
                "clearance": self.clearance}


def _how_to_grant(actor: str, scope: str, mode: str) -> str:
    flag = ", write=True" if mode == "write" else ""
    return (
        f"add one with runtime.grant({actor!r}, {scope!r}{flag}) or "
        f"`memactors grant {actor} {scope}{' --write' if mode == 'write' else ''}`, "
        "or list it under [[grants]] in the config"
    )


class RecallView(tuple):
    """``recall_view``'s answer, (visible scopes, clearances), with the visible scopes as strs
    (``names``): the facade plans every recall with them, and ``str`` of each was a tenth of
    its planning."""

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(str(s) for s in self[0])

    def recall_filter(self, rule: PurposeRule | None) -> RecallFilter:
        """The filter of a recall over this view under ``rule`` with no ``where=`` (the usual
        recall), made once a rule while the view is kept (with its evidence description)."""
        made = self.__dict__.setdefault("filters", {})
        flt = made.get(rule)
        if flt is None:
            flt = made[rule] = RecallFilter.make(self[1], rule, None)
        return flt


class GrantTable:
    """The current grants, keyed by (actor, scope). Replacing a grant replaces both flags."""

    def __init__(self, grants: list[Grant] | None = None) -> None:
        self._by_actor: dict[str, dict[Scope, Grant]] = {}
        self._views: dict[tuple[str, str], frozenset | None] = {}  # write_view's answers, until a grant changes
        self._recalls: dict[tuple[str, tuple], tuple] = {}  # recall_view's answers, until a grant changes
        for g in grants or []:
            self.put(g)

    def put(self, g: Grant) -> None:
        self._views.clear()
        self._recalls.clear()
        entries = self._by_actor.setdefault(g.actor, {})
        if g.read or g.write:
            entries[g.scope] = g
        else:
            entries.pop(g.scope, None)  # read=False, write=False revokes

    @staticmethod
    def make(actor: str, scope: str | Scope, *, read: bool = True, write: bool = False,
             clearance: str = DEFAULT_CLEARANCE) -> Grant:
        check_identifier(actor, "actor")
        if not isinstance(read, bool) or not isinstance(write, bool):
            raise AccessDenied("read and write must be booleans")
        return Grant(actor, parse_scope(scope), read, write, check_clearance(clearance))

    @staticmethod
    def from_event(g: dict, scope: str | Scope | None = None) -> Grant:
        """A grant as its ledger event (or config entry) holds it; one from before clearances
        has the default."""
        return GrantTable.make(g["actor"], scope if scope is not None else g["scope"], read=g["read"],
                               write=g["write"], clearance=g.get("clearance") or DEFAULT_CLEARANCE)

    def grants_of(self, actor: str) -> list[Grant]:
        return list(self._by_actor.get(actor, {}).values())

    def all(self) -> list[Grant]:
        return [g for entries in self._by_actor.values() for g in entries.values()]

    def _covers(self, actor: str, scope: Scope, mode: str) -> bool:
        for g in self._by_actor.get(actor, {}).values():
            if getattr(g, mode) and g.scope.is_ancestor_or_self(scope):
                return True
        return False

    def reads(self, actor: str, scope: Scope) -> bool:
        """Whether a read grant of ``actor`` covers ``scope``: an actor that cannot read the scope
        of a memory it names by id is answered as for an id never written."""
        return self._covers(actor, scope, "read")

    def check_write(self, actor: str, scope: Scope, *, named: str | None = None) -> None:
        """Refuse unless a write grant covers ``scope``. ``named``: what the caller named instead
        of a scope (a memory id: "that memory"): the refusal names that, never the scope, which
        an id must not reveal."""
        if not self._by_actor.get(actor):
            raise NoGrants(f"actor {actor!r} has no grants; " + (f"it may not change {named}" if named
                                                                 else _how_to_grant(actor, str(scope), "write")))
        if not self._covers(actor, scope, "write"):
            if named:
                raise AccessDenied(f"actor {actor!r} may not change {named}: no write grant covers its scope")
            raise AccessDenied(
                f"actor {actor!r} may not write {scope}: no write grant covers it; "
                f"{_how_to_grant(actor, str(scope), 'write')}"
            )

    def check_recall(self, actor: str, allowed: list[Scope], *, named: str | None = None) -> list[Scope]:
        """Refuse unless every allowed scope lies under a read grant; return the visible set.
        ``named``: as ``check_write``'s."""
        if not self._by_actor.get(actor):
            first = str(allowed[0]) if allowed else "/org/ORG/user/USER/"
            raise NoGrants(f"actor {actor!r} has no grants; " + (f"it may not read {named}" if named
                                                                 else _how_to_grant(actor, first, "read")))
        for s in allowed:
            if not self._covers(actor, s, "read"):
                if named:
                    raise AccessDenied(f"actor {actor!r} may not read {named}: no read grant covers its scope")
                raise AccessDenied(f"actor {actor!r} may not read {s}: it is beyond the actor's read grants")
        return visible_set(allowed)

    def recall_view(self, actor: str, allowed: tuple[str, ...]) -> RecallView:
        """``check_recall``'s visible set and ``clearances`` of a recall over ``allowed`` (scope
        strings), kept until a grant changes: an agent's recalls repeat one scope list, and an
        owner checked it anew each time (a sixth of a hot recall's time). A refusal is raised
        each time, never kept. The answer is shared: read it, never change it."""
        key = (actor, allowed)
        got = self._recalls.get(key) if all(type(s) is str for s in allowed) else None  # else parse_scope refuses
        if got is None:
            scopes = [parse_scope(s) for s in allowed]
            visible = tuple(self.check_recall(actor, scopes))
            if len(self._recalls) >= 4096:
                self._recalls.clear()
            got = self._recalls[key] = RecallView((visible, self.clearances(actor, scopes)))
        return got

    def clearances(self, actor: str, allowed: list[Scope]) -> dict[str, str]:
        """The clearance of each scope a recall over ``allowed`` sees (each allowed scope and its
        ancestors). A scope under a read grant takes the most specific such grant's clearance:
        a narrow grant at ``restricted`` under a broad one at ``internal`` lifts just its
        subtree, a narrow one at ``public`` lowers just its subtree. An ancestor no read grant
        covers is visible only through the allowed scopes below it, so it takes the highest
        clearance of theirs (each of them alone would show it at that clearance)."""
        reads = [g for g in self._by_actor.get(actor, {}).values() if g.read]

        def own(s: Scope) -> str | None:
            best = None
            for g in reads:
                if g.scope.is_ancestor_or_self(s) and (best is None or g.scope.depth > best.scope.depth):
                    best = g
            return best.clearance if best is not None else None

        out: dict[str, str] = {}
        through: dict[str, str] = {}
        for a in allowed:
            c = own(a)
            if c is None:
                continue  # check_recall refuses such a recall
            for s in visible_set([a]):
                key = str(s)
                if key not in through or RANK[c] > RANK[through[key]]:
                    through[key] = c
        for key, c in through.items():
            mine = own(parse_scope(key))
            out[key] = mine if mine is not None else c
        return out

    def sees(self, actor: str, scope: Scope) -> frozenset[str]:
        """The sensitivities ``actor`` may see in ``scope`` (its clearance there and below; none
        without a read grant): what every read that shows a memory's record checks, not recall
        alone (history, review lists, point-in-time listings)."""
        c = self.clearances(actor, [scope]).get(str(scope))
        return at_or_below(c) if c is not None else frozenset()

    def shown_to(self, actor: str):
        """(scope, sensitivity) -> whether ``actor`` may see such a memory there (``sees``, read
        once a scope): what a decision on memories names back to its caller."""
        sees: dict[str, frozenset] = {}

        def shown(scope: str, sensitivity) -> bool:
            if scope not in sees:
                sees[scope] = self.sees(actor, parse_scope(scope))
            return sensitivity in sees[scope]
        return shown

    def write_view(self, actor: str, scope: str) -> frozenset | None:
        """What a write of ``actor`` in ``scope`` decides against (``core.versions.decide_write``):
        the sensitivities it may see there, or None for all of them (the usual case, and the
        runtime's own writes). A write-only actor sees none: its writes never learn of others'."""
        key = (actor, scope)
        view = self._views.get(key, False)
        if view is False:
            if len(self._views) >= 4096:
                self._views.clear()
            view = None if actor == SYSTEM_ACTOR else self.sees(actor, parse_scope(scope))
            self._views[key] = view = None if view is not None and len(view) == len(RANK) else view
        return view

    def to_list(self) -> list[dict]:
        return [g.to_dict() for g in self.all()]

    @classmethod
    def from_list(cls, items: list[dict]) -> GrantTable:
        return cls([Grant(i["actor"], parse_scope(i["scope"]), bool(i["read"]), bool(i["write"]),
                          check_clearance(i.get("clearance") or DEFAULT_CLEARANCE)) for i in items])
