"""The ledger's checks: the full walk (``verify``) and the cheap one at open (``open_check``).

What they prove, and against whom: docs/threat-model.md. The chain (``memactors.core.events``)
proves order and content to whoever trusts the file; the MACs under the ledger key (kept
outside the data folder, ``memactors.store.ledger_key``) and the anchor beside it prove that
nobody without that key appended, edited, re-chained or truncated events; the table checks
find data keys and idempotency rows deleted behind the runtime's back; the full walk also opens
every record once to compare the indexes derived from them (``memactors.store.ledger_derived``)
and reads every other table to its last byte, so a damaged file (a block that fails DuckDB's
checksum) is a finding here rather than an error in whatever call reads that block next.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import duckdb

from ..core import events as E
from ..core.errors import LedgerTampered, StoreError
from . import ledger_derived as D
from .ledger_key import key_dir as resolve_key_dir
from .ledger_expiry import set_aside_problem

# Every table of the ledger besides ``events`` (which the walk reads whole): what the full
# walk reads to the end, in this order (the ones a runtime reads at open first).
OTHER_TABLES = ("meta", "keys", "idempotency", "l2_applied", "recalls", "citations", "access", "provenance",
                "levels", "actions")


def damaged(exc: BaseException) -> bool:
    """Whether a DuckDB error says the file itself is damaged (a block fails its checksum, the
    file is cut short or holds what no writer wrote), not the machine (a full disk, memory) or
    a busy connection."""
    text = str(exc).lower()
    return any(m in text for m in ("corrupt", "checksum", "could not read enough bytes", "could not read all bytes",
                                   "failed to deserialize", "not a valid duckdb database"))


def first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def ledger_error(exc: BaseException, path: str) -> StoreError:
    """The project's error for a DuckDB error on the ledger file at ``path``: LedgerTampered
    when the file is damaged (nothing a retry mends; `audit verify` names the table), else
    StoreError."""
    if damaged(exc):
        return LedgerTampered(f"the ledger file {path} is damaged ({first_line(exc)}): it was changed outside "
                              "memactors or by the disk. `memactors audit verify` shows the finding; restore the "
                              "data folder from a backup")
    return StoreError(f"the ledger file {path} could not be read or written ({first_line(exc)}); if the disk is "
                      "full or read-only, fix that and retry")


@dataclass(slots=True)
class VerifyResult:
    ok: bool
    events: int
    first_bad_seq: int | None
    reason: str
    table: str | None = None  # the table that disagrees with the events, when that is the finding

    def to_dict(self) -> dict:
        return {"ok": self.ok, "events": self.events, "first_bad_seq": self.first_bad_seq, "reason": self.reason,
                "table": self.table}


class LedgerChecks:
    """Mixed into ``Ledger``: needs ``con``, ``key``, ``path``, ``last_seq``, ``applied_count`` and ``_q``."""

    # (seq, hash) where the last successful walk ended: ``verify(tail=True)`` starts there.
    _verified: tuple[int, bytes] | None = None
    # ((last seq, applied marks), L2 digests) of the last full walk's fold: what the L2 check
    # that follows it (``l2_expected(True)``) takes instead of opening every record again.
    _fold: tuple[tuple[int, int], dict] | None = None

    def verify(self, chunk: int = 50_000, *, tail: bool = False) -> VerifyResult:
        """Walk the chain up to the newest committed event (a snapshot: commits meanwhile are
        not mistaken for breaks), check every stored MAC and that the last event has one, the
        anchor outside the folder, and the tables that must agree with the events; then read
        every other table whole. A file DuckDB finds damaged on the way is a finding (not ok,
        ``table`` the one that cannot be read), not an error.

        ``tail=True`` (a rollback's check before it appends): walk only from where the last
        successful walk of this process ended, after checking that event's hash is unchanged;
        the table checks, the fold and the reads are left to the full walk. The first call is
        always a full walk (without the fold, which a rollback's check does not need)."""
        self._fold = None
        at = {"table": "events", "events": 0}  # where the walk is: named when the file turns out damaged
        try:
            return self._verify(chunk, tail, at)
        except duckdb.Error as exc:
            table = at["table"]
            if damaged(exc):
                return VerifyResult(False, at["events"], None, f"the ledger file is damaged: table {table} cannot be "
                                    f"read ({first_line(exc)}); restore the data folder from a backup", table)
            if isinstance(exc, (duckdb.CatalogException, duckdb.BinderException)):  # a table dropped or altered by hand
                return VerifyResult(False, at["events"], None, f"a ledger table is missing or malformed "
                                    f"({type(exc).__name__}, reading {table})", table)
            raise

    def _verify(self, chunk: int, tail: bool, at: dict) -> VerifyResult:
        upto, derived = self.last_seq, not tail
        prev, expect, count, vouched = E.GENESIS, 1, 0, 0
        if tail and self._verified is not None:
            seq, h = self._verified
            row = self._q("SELECT hash FROM events WHERE seq = ?", [seq])
            if not row or E.blob(row[0][0]) != h:
                return VerifyResult(False, 0, seq, "an event already verified has changed since")
            prev, expect, vouched = h, seq + 1, seq
        else:
            tail = False
        cols = ", ".join((*E.COLUMNS, "mac"))
        cur = self.con.cursor()  # closed on every way out: an open cursor keeps the file open
        try:
            reader = cur.sql(f"SELECT {cols} FROM events WHERE seq >= {int(expect)} AND seq <= {int(upto)} "
                             "ORDER BY seq").to_arrow_reader(chunk)
            for batch in reader:
                rows = batch.to_pylist()
                bad, why, prev, expect = E.verify_rows(rows, prev, expect)
                if bad is not None:
                    return VerifyResult(False, count, bad, why)
                for r in rows:
                    if r["mac"] is not None:
                        if not self.key.check(r["seq"], bytes(r["hash"]), r["mac"]):
                            return VerifyResult(False, count, vouched + 1, f"the ledger key does not vouch for seq "
                                                f"{vouched + 1}..{r['seq']}: events were forged or re-chained")
                        vouched = r["seq"]
                    elif r["action"] == E.GRANT:
                        return VerifyResult(False, count, r["seq"], "a grant event without its MAC (forged)")
                count += batch.num_rows
                at["events"] = count
        finally:
            cur.close()
        if expect - 1 != upto:
            return VerifyResult(False, count, expect, f"the chain ends at seq {expect - 1}, the ledger says {upto}")
        if vouched != upto:
            return VerifyResult(False, count, vouched + 1,
                                f"events after seq {vouched} are not vouched for by the ledger key (appended by hand?)")
        problem = self._check_anchor()
        if problem is None and not tail:
            problem = self._check_tables(at) or self._check_results(at)
            if problem is None:
                self._read_tables(at)  # first: a damaged table is named here, not in the fold that joins it
                if derived:
                    problem = self._check_derived(chunk, at)
        if problem is not None:
            return VerifyResult(False, count, *problem)
        self._verified = (upto, prev) if upto else None
        return VerifyResult(True, count, None, "ok")

    def _check_derived(self, chunk: int, at: dict) -> tuple | None:
        """Open every record once (``ledger_derived.fold``) and compare the provenance and levels
        indexes with what the records imply (and the set-aside index, ``ledger_expiry``); keep the fold's L2 digests for ``l2_expected``.
        One transaction: the tables are read as of the events folded, whatever commits meanwhile."""
        cur = self.con.cursor()
        try:
            cur.execute("BEGIN TRANSACTION").fetchall()
            state = tuple(cur.execute("SELECT (SELECT coalesce(max(seq), 0) FROM events), "
                                      "(SELECT count(*) FROM l2_applied)").fetchall()[0])
            at["table"] = "events"
            try:
                f = D.fold(cur.sql(D.FOLD_SQL.format(keys=self.live_keys)).to_arrow_reader(chunk))
            except LedgerTampered as exc:  # a record its data key does not open: the key was swapped
                return (None, str(exc), "keys")
            at["table"] = "provenance"
            why = D.provenance_problem(f, cur.execute("SELECT memory_id, source, kind FROM provenance").fetchall())
            if why is not None:
                return (None, why, "provenance")
            for table in ("levels", "set_aside"):  # the indexes brought up to a mark, each against the records
                at["table"] = table
                mark = cur.execute("SELECT value FROM meta WHERE key = ?", [table]).fetchall()
                try:
                    covered = int(bytes(mark[0][0])) if mark else 0
                except ValueError:
                    return (None, f"the {table} index's mark (the seq it covers) is not a number: it was changed",
                            table)
                if table == "levels":
                    why = D.levels_problem(f, covered, state[0],
                                           cur.execute("SELECT memory_id, sensitivity FROM levels").fetchall())
                else:
                    why = set_aside_problem(lambda sql, p=None: cur.execute(sql, p or []).fetchall(), covered,
                                            self._set_aside_in_force(cur), self.live_keys)
                if why is not None:
                    return (None, why, table)
            self._fold = (state, f.digests)
            return None
        finally:
            try:
                cur.execute("ROLLBACK").fetchall()  # read only: nothing to keep
            except duckdb.Error:  # already aborted by the error on its way out: that one is reported
                pass
            cur.close()

    def take_fold(self) -> dict | None:
        """The last full walk's L2 digests (memory id -> governed digest), once, if nothing was
        committed or applied since (else None: the caller folds afresh)."""
        got, self._fold = self._fold, None
        if got is None or got[0] != (self.last_seq, self.applied_count()):
            return None
        return got[1]

    def _read_tables(self, at: dict) -> None:
        """Read every value of every other table (each column's hash forces its bytes off the
        disk, the DuckDB side only): a damaged block raises here, naming its table in
        ``at``. Tables the walk never touches (recall evidence, access counts) are read
        only now and then by a runtime, which would otherwise fail there, long after an ok."""
        cur = self.con.cursor()
        try:
            for table in OTHER_TABLES:
                at["table"] = table
                cur.execute(f"SELECT count(*), max(hash(COLUMNS(*))) FROM {table}").fetchall()
        finally:
            cur.close()

    def open_check(self) -> None:
        """What opening checks, cheaply, before anything is served: the anchor, the events
        after it (chain and MAC), every grant's own MAC, and the keys and idempotency tables.
        The full walk is ``verify()``. Raises LedgerTampered naming the seq or table."""
        problem = self._check_anchor()
        if problem is None:
            head = self.key.read_head()
            start = head[0] if head else 0
            prev = E.blob(self._q("SELECT hash FROM events WHERE seq = ?", [start])[0][0]) if start else E.GENESIS
            cols = ", ".join((*E.COLUMNS, "mac"))
            tail = [dict(zip((*E.COLUMNS, "mac"), r)) for r in
                    self._q(f"SELECT {cols} FROM events WHERE seq > ? ORDER BY seq", [start])]
            bad, why, _, _ = E.verify_rows(tail, prev, start + 1)
            if bad is not None:
                problem = (bad, why)
            elif tail and not self.key.check(tail[-1]["seq"], bytes(tail[-1]["hash"]), tail[-1]["mac"]):
                problem = (start + 1, f"events {start + 1}..{tail[-1]['seq']} are not vouched for by the ledger key")
        if problem is None:
            problem = self._check_grants() or self._check_tables()
        if problem is not None:
            seq, why, *table = problem
            where = f"seq {seq}" if seq is not None else f"table {table[0]}"
            raise LedgerTampered(f"the ledger at {self.path} fails its check at {where}: {why}; it was changed "
                                 "outside memactors. `memactors audit verify` shows the finding; restore the "
                                 "data folder from a backup")

    def _check_anchor(self) -> tuple | None:
        head = self.key.read_head()
        if head is None:
            return (1, "the ledger has events but no anchor") if self.last_seq else None
        seq, h = head
        last = self._q("SELECT max(seq) FROM events")[0][0] or 0
        if seq > last:
            return (last + 1, f"the ledger ends at seq {last} but its anchor says {seq}: events were deleted")
        row = self._q("SELECT hash FROM events WHERE seq = ?", [seq])
        if not row or E.blob(row[0][0]) != h:
            return (seq, "the event does not match the anchor kept outside the data folder")
        return None

    def _check_grants(self) -> tuple | None:
        """Every grant event's content hashes to its stored hash, which its own MAC vouches for."""
        cols = ", ".join((*E.COLUMNS, "mac"))
        for row in self._q(f"SELECT {cols} FROM events WHERE action = 'grant' ORDER BY seq"):
            r = dict(zip((*E.COLUMNS, "mac"), row))
            bad, why, _, _ = E.verify_rows([r], E.blob(r["prev_hash"]), r["seq"])
            if bad is not None:
                return (bad, f"grant event: {why}")
            if not self.key.check(r["seq"], bytes(r["hash"]), r["mac"]):
                return (r["seq"], "a grant event the ledger key does not vouch for (forged)")
        return None

    def _check_results(self, at: dict) -> tuple | None:
        """An idempotency row's stored result names a memory that an event under its key names
        too: a result copied from another key's row would answer a retry with another memory.
        (The full walk's check: opening keeps to the cheap ones.)"""
        at["table"] = "idempotency"
        cur = self.con.cursor()
        try:
            n, example = cur.execute(
                """WITH r AS (SELECT idem_key, json_extract_string(decode(result), '$.memory_id') AS mid,
                                     json_extract_string(decode(result), '$.decision') AS decision
                              FROM idempotency WHERE result IS NOT NULL AND json_valid(decode(result)))
                   SELECT count(*), min(r.idem_key) FROM r WHERE r.mid IS NOT NULL
                     AND r.decision IS DISTINCT FROM 'unchanged'  -- a demotion that changed nothing (older ledgers: it named its memory)
                     AND NOT EXISTS (SELECT 1 FROM events e WHERE e.idem_key = r.idem_key AND e.memory_id = r.mid)"""
            ).fetchone()
        finally:
            cur.close()
        if n:
            return (None, f"{n} idempotency rows answer with a memory no event under their key names: rows were "
                          "changed", "idempotency")
        return None

    def _check_tables(self, at: dict | None = None) -> tuple | None:
        """Tables the events imply: a key for every memory written and not erased, an
        idempotency row for every key an event carries. ``at["table"]``: the one being read."""
        at = {} if at is None else at
        at["table"] = "keys"
        n, example = self._q(
            """SELECT count(*), min(e.seq) FROM events e
               WHERE e.action IN ('write', 'write_working') AND e.encrypted
                 AND NOT EXISTS (SELECT 1 FROM {keys} k WHERE k.memory_id = e.memory_id AND k.key IS NOT NULL)
                 AND NOT EXISTS (SELECT 1 FROM events f WHERE f.memory_id = e.memory_id AND f.action = 'forget')"""
            .format(keys=self.live_keys))[0]
        if n:
            return (None, f"{n} memories written and never erased have no data key (first at seq {example}): "
                          "keys were deleted", "keys")
        # An erasure destroys the key in the tombstone's transaction (or names it in ``erasing``
        # there, a sweep's): a key beside a tombstone was put back by hand (an erased memory's
        # content would open again).
        n, example = self._q(
            """SELECT count(DISTINCT f.memory_id), min(f.seq) FROM events f
               WHERE f.action = 'forget' AND EXISTS (SELECT 1 FROM {keys} k WHERE k.memory_id = f.memory_id)"""
            .format(keys=self.live_keys))[0]
        if n:
            return (None, f"{n} erased memories have a data key again (first erased at seq {example}): keys were "
                          "added", "keys")
        at["table"] = "idempotency"
        n, example = self._q(
            """SELECT count(*), min(e.seq) FROM (SELECT idem_key, min(seq) AS seq FROM events
                 WHERE idem_key IS NOT NULL GROUP BY idem_key) e
               WHERE NOT EXISTS (SELECT 1 FROM idempotency i WHERE i.idem_key = e.idem_key)"""
        )[0]
        if n:
            return (None, f"{n} idempotency keys carried by events have no row (first at seq {example}): "
                          "rows were deleted", "idempotency")
        return None


def verify_folder(data_dir: str, key_dir: str = "") -> dict:
    """Verify a data folder's ledger without a runtime (the runtime refuses to open a ledger
    that fails its checks; this says where). The folder must not be open by a runtime."""
    path = os.path.join(data_dir, "ledger.duckdb")
    if not os.path.exists(path):
        raise StoreError(f"no ledger in {data_dir}")
    from .ledger import Ledger  # the ledger builds on these checks; this entry point builds a ledger

    try:
        led = Ledger(path, resolve_key_dir(key_dir), read_only=True)
    except duckdb.Error as exc:
        if damaged(exc):  # a finding: the file fails DuckDB's own checks before the walk begins
            return VerifyResult(False, 0, None, f"the ledger file is damaged: it cannot be opened ({first_line(exc)}); "
                                "restore the data folder from a backup").to_dict()
        raise StoreError(f"cannot open {path} read-only ({(str(exc).splitlines() or ['?'])[0][:120]}); "
                         "if a runtime has it open, use runtime.audit.verify()") from None
    try:
        return led.verify().to_dict()
    except duckdb.Error as exc:  # a table dropped or altered by hand: a finding, not a crash
        return VerifyResult(False, 0, None, f"a ledger table is missing or malformed ({type(exc).__name__})").to_dict()
    finally:
        led.con.close()


