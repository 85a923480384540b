"""What a scope core checks of an operation before it reads anything (``AdmissionMixin``, part
of ``memactors.engine.core.ScopeCore``): ids screened once more, the scope this core's, the
actor's write grant, a caller's reason redacted, and the read grants a write's ``derived_from``
claims. By-memory operations are checked once their scope is known (``ScopeCore._apply``)."""

from __future__ import annotations

from ..core import errors
from ..core import records as R
from ..core.errors import AccessDenied, MemactorsError
from ..core.grants import SYSTEM_ACTOR
from ..core.idempotency import is_made_key
from ..core.scopes import parse_scope
from ..gate.identifiers import screen_ids, screen_scope


class AdmissionMixin:
    def _authorise(self, op) -> None:
        """What can be checked before anything is read: no id looks like personal data or a
        secret (the runtime screened them already: a second look), the scope is this owner's
        and the actor may write it (by-memory operations are checked once their scope is known)."""
        screen(op)
        address = getattr(type(op), "ADDRESS", None)
        if address is None:
            raise R.InvalidRecord(f"an owner applies operations, not {type(op).__name__}")
        if "prepared" not in op.GATHER:  # a write was checked where it arrived (write_batch)
            op.validate()
            if isinstance(getattr(op, "reason", None), str) and not is_system(op):
                # A caller's words, kept in clear in the ledger's events (history, audit): every
                # PII or secret hit replaced by its placeholder. Never refused: an erasure or a
                # review decision must not fail on the words of its stated reason.
                op.reason = self.gate.redact_all(op.reason)
        if address == "rows":
            for s in op.scopes():
                self._check_mine(s)
                if not is_system(op):
                    self.grants.check_write(op.actor, parse_scope(s))
        elif address == "scope":  # a promotion's source needs a read grant: checked once it is found
            self._check_mine(op.scope)
            if op.CHECK == "write":
                self.grants.check_write(op.actor, parse_scope(op.scope))

    async def _check_claims(self, ops: list, todo: list[int], results: list) -> None:
        """A write that claims to be made from other memories (``derived_from``) needs a read grant
        on each of them: a claim is recorded as the caller's, and an erasure or a rollback of
        the source weighs it. Refused items leave ``todo``."""
        claimed = {i: ops[i].derived_from for i in todo if "prepared" in ops[i].GATHER and ops[i].derived_from}
        if not claimed:
            return
        where = await self.ledger.scopes_of(sorted({m for ids in claimed.values() for m in ids}))
        for i, ids in claimed.items():
            try:
                if any(m not in where for m in ids):
                    raise AccessDenied("unknown")
                self.grants.check_recall(ops[i].actor, [parse_scope(where[m]) for m in ids])
            except MemactorsError:  # one answer for unknown and unreadable: nothing of the source shows
                results[i] = errors.encode(AccessDenied(
                    "derived_from names a memory this actor cannot read; nothing was written"))
                todo.remove(i)


def is_system(op) -> bool:
    """An operation the runtime built for its own work (a sweep's share, a demotion): it acts
    as SYSTEM_ACTOR, which no caller can name (validated), and needs no grant."""
    return op.SYSTEM and op.actor == SYSTEM_ACTOR


def screen(op) -> None:
    key = getattr(op, "idempotency_key", None) or getattr(op, "idem_key", None)
    # a made key holds nothing to find; a system operation's key is the runtime's own (a session's
    # marks: "turn-<session id>-1"), and screening a run of random hex costs 60-160 us
    screen_ids({"actor": getattr(op, "actor", None), "granting actor": getattr(op, "by", None),
                "idempotency key": None if is_made_key(key) or is_system(op) else key})
    scope = getattr(op, "scope", None)
    if isinstance(scope, str):  # anything else is the op's own validation to refuse
        screen_scope(scope)


def writes_of_columns(cols: dict) -> list:
    """A ``write_batch``'s columns (``WriteRequest`` field -> values, as
    ``runtime.write_batches.columns`` sends them) as validated requests, each refused one its
    typed error in place: any Ray client may call an owner."""
    if not isinstance(cols, dict) or not isinstance(cols.get("text"), list) or any(
            not isinstance(v, list) or len(v) != len(cols["text"]) for v in cols.values()):
        raise R.InvalidRecord("write_batch takes columns: a dict of equally long lists of write fields")
    names = [k for k in cols if k in R.WriteRequest.__dataclass_fields__]
    ops: list = []
    for i in range(len(cols["text"])):
        try:
            ops.append(R.WriteRequest(**{k: cols[k][i] for k in names}).validate())
        except MemactorsError as exc:
            ops.append(exc)
        except TypeError:
            ops.append(R.InvalidRecord("a write is missing scope, text or actor"))
    return ops
