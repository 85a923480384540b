"""A GC sweep's plan (its dry run): which memories each rule would evict or mark stale, with
counts and an estimate of the bytes per rule and per tenant. Nothing here changes anything.

Pure: ``PlanBuilder`` runs the lifecycle rules over batches of columns and keeps what they
pick; ``merge`` joins partial plans in the order given. Callers that split a scan merge the
parts in scan order, so a plan never depends on how the scan was split or where it ran.

A tenant is the org of a scope (``/org/acme/user/alice/`` -> ``acme``); ``/global/`` is
``"global"``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa

from .config import Config, LifecycleConfig
from .errors import InvalidRecord
from .lifecycle import ACTION_OF, ACTIONS, RULE_COLUMNS, RULES, rules

# What a plan reads: the rules' columns plus who (memory_id) and where (scope).
PLAN_COLUMNS = ("memory_id", "scope", *RULE_COLUMNS)
GLOBAL_TENANT = "global"
_ORG = r"^/org/(?P<org>[^/]+)/"


def tenants_of(scopes) -> pa.Array:
    """The tenant of each scope (an Arrow string array): its org, or "global" for /global/.
    A string of neither form (stored scopes are validated, so none should be) maps to "?"."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    scopes = _array(scopes)
    org = pc.struct_field(pc.extract_regex(scopes, _ORG), [0])
    named = pc.if_else(pc.equal(scopes, "/global/"), pa.scalar(GLOBAL_TENANT), org)
    return pc.fill_null(named, "?")


def _array(col, what: str = "scope") -> pa.Array:
    """A string column as one Arrow string array; anything else is InvalidRecord."""
    try:
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        elif not isinstance(col, pa.Array):
            col = pa.array(list(col) if not isinstance(col, np.ndarray) else col, type=pa.string())
        if col.type == pa.string():
            return col
        if pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
            return col.cast(pa.string())
        raise TypeError("not strings")
    except (pa.ArrowException, TypeError, ValueError):
        raise InvalidRecord(f"column {what!r} must hold strings") from None


_ROWS_SCHEMA = pa.schema([("memory_id", pa.string()), ("scope", pa.string()), ("rule", pa.int8())])


@dataclass(slots=True, eq=False)  # compare plans with same_decisions() or digest()
class Plan:
    """What a sweep would do at ``now_us``.

    rows: one row per planned action (memory_id, scope, rule code), in scan order.
    tenants / counts / bytes: the per (rule, tenant) tallies, ``counts[rule_code, j]`` for
    ``tenants[j]`` (sorted); bytes estimate the stored size of the rows (from the data files'
    size per row where the scan knows it; 0 where it does not).
    """

    now_us: int
    rows: pa.Table = field(default_factory=_ROWS_SCHEMA.empty_table)
    rows_scanned: int = 0
    tenants: list[str] = field(default_factory=list)
    counts: np.ndarray = field(default_factory=lambda: np.zeros((len(RULES), 0), dtype=np.int64))
    bytes: np.ndarray = field(default_factory=lambda: np.zeros((len(RULES), 0), dtype=np.int64))
    seconds: float = 0.0
    source: dict = field(default_factory=dict)  # what was scanned: dataset, version, fragments, workers

    # --- views -------------------------------------------------------------------------------

    @property
    def planned(self) -> int:
        return int(self.counts.sum())

    @property
    def bytes_total(self) -> int:
        return int(self.bytes.sum())

    @property
    def by_rule(self) -> dict[str, int]:
        return {RULES[r]: int(self.counts[r].sum()) for r in range(1, len(RULES))}

    @property
    def bytes_by_rule(self) -> dict[str, int]:
        return {RULES[r]: int(self.bytes[r].sum()) for r in range(1, len(RULES))}

    @property
    def by_tenant(self) -> dict[str, int]:
        return {t: int(c) for t, c in zip(self.tenants, self.counts.sum(axis=0)) if c}

    @property
    def bytes_by_tenant(self) -> dict[str, int]:
        return {t: int(b) for t, b, c in zip(self.tenants, self.bytes.sum(axis=0), self.counts.sum(axis=0)) if c}

    @property
    def by_rule_tenant(self) -> dict[str, dict[str, int]]:
        return {RULES[r]: {t: int(c) for t, c in zip(self.tenants, self.counts[r]) if c} for r in range(1, len(RULES))}

    @property
    def ids_by_rule(self) -> dict[str, pa.Array]:
        """Rule name -> the memory ids it picks (Arrow string arrays, scan order)."""
        return {name: self.ids(name) for name in RULES[1:]}

    def ids(self, rule: str | None = None, *, action: str | None = None) -> pa.Array:
        """Memory ids (scan order) planned by one rule, or for one action ("evict", "stale"),
        or all of them."""
        import pyarrow.compute as pc  # loaded when first used: not on a first write's path
        codes = self.rows["rule"].combine_chunks() if self.rows.num_rows else None
        ids = self.rows["memory_id"].combine_chunks() if self.rows.num_rows else pa.array([], pa.string())
        if codes is None or (rule is None and action is None):
            return ids
        if rule is not None:
            if rule not in RULES[1:]:
                raise InvalidRecord(f"rule must be one of {list(RULES[1:])}")
            mask = pc.equal(codes, RULES.index(rule))
        else:
            if action not in ACTIONS[1:]:
                raise InvalidRecord(f"action must be one of {list(ACTIONS[1:])}")
            wanted = [c for c in range(1, len(RULES)) if ACTION_OF[c] == ACTIONS.index(action)]
            mask = pc.is_in(codes, value_set=pa.array(wanted, pa.int8()))
        return ids.filter(mask)

    def restrict(self, keep: pa.Array) -> Plan:
        """The plan for the rows where ``keep`` (a boolean array over ``rows``) holds: e.g. one
        scope subtree. Counts are recounted from the rows; bytes are not known per row then."""
        rows = self.rows.filter(keep) if self.rows.num_rows else self.rows
        tenants = tenants_of(rows["scope"].combine_chunks()) if rows.num_rows else pa.array([], pa.string())
        names = sorted(set(tenants.to_pylist()))
        counts = np.zeros((len(RULES), len(names)), dtype=np.int64)
        col = {t: j for j, t in enumerate(names)}
        for t, code in zip(tenants.to_pylist(), rows["rule"].to_pylist() if rows.num_rows else []):
            counts[code, col[t]] += 1
        return Plan(self.now_us, rows, self.rows_scanned, names, counts, np.zeros_like(counts), self.seconds,
                    dict(self.source, restricted=True))

    # --- comparison ------------------------------------------------------------------------------

    def digest(self) -> str:
        """A SHA-256 over the decisions (now, rows scanned, and every planned row with its rule,
        in order); equal for plans that decide the same, whatever the split or the timing."""
        h = hashlib.sha256()
        h.update(f"{self.now_us}|{self.rows_scanned}|{self.rows.num_rows}|".encode())
        for name in ("memory_id", "scope"):
            _hash_strings(h, self.rows[name].chunks)
        h.update(np.ascontiguousarray(self.rows["rule"].to_numpy(), dtype=np.int8).tobytes())
        return h.hexdigest()

    def same_decisions(self, other: Plan) -> bool:
        return (self.digest() == other.digest() and self.tenants == other.tenants
                and np.array_equal(self.counts, other.counts))

    # --- output ----------------------------------------------------------------------------------

    def to_dict(self, *, ids: bool = False) -> dict:
        """JSON-able: counts and bytes by rule, by tenant and by rule x tenant; with ``ids``,
        the memory ids per rule too."""
        out = {
            "now_us": self.now_us,
            "now": _iso(self.now_us),
            "rows_scanned": self.rows_scanned,
            "planned": self.planned,
            "bytes": self.bytes_total,
            "seconds": round(self.seconds, 6),
            "by_rule": {name: {"action": ACTIONS[ACTION_OF[r]], "count": int(self.counts[r].sum()),
                               "bytes": int(self.bytes[r].sum())}
                        for r, name in enumerate(RULES) if r},
            "by_tenant": {t: {"count": c, "bytes": self.bytes_by_tenant[t]} for t, c in self.by_tenant.items()},
            "by_rule_tenant": self.by_rule_tenant,
            "digest": self.digest(),
            "source": dict(self.source),
        }
        if ids:
            out["ids"] = {name: ids.to_pylist() for name, ids in self.ids_by_rule.items()}
        return out

    def summary(self, max_tenants: int = 10, heading: str = "GC plan (dry run, nothing changed)") -> str:
        """A readable table: per rule, then the tenants with the most planned actions."""
        rate = f", {self.rows_scanned / self.seconds:,.0f} rows/s" if self.seconds > 0 else ""
        lines = [f"{heading} at {_iso(self.now_us)}: {self.rows_scanned:,} memories "
                 f"scanned in {self.seconds:.3f} s{rate}",
                 f"{'rule':<22} {'action':<6} {'memories':>10} {'bytes':>10}"]
        for r, name in enumerate(RULES):
            if r:
                lines.append(f"{name:<22} {ACTIONS[ACTION_OF[r]]:<6} {int(self.counts[r].sum()):>10,} "
                             f"{_size(int(self.bytes[r].sum())):>10}")
        lines.append(f"{'total':<22} {'':<6} {self.planned:>10,} {_size(self.bytes_total):>10}")
        per = self.counts.sum(axis=0)
        order = sorted((j for j in range(len(self.tenants)) if per[j]), key=lambda j: (-per[j], self.tenants[j]))
        if order:
            shown = order[:max_tenants]
            lines.append("")
            lines.append(f"tenants with planned actions: {len(order):,}" + (f" (top {len(shown)})" if len(order) > len(shown) else ""))
            short = ["hard", "soft_unused", "supersed", "low_conf", "st_evict", "st_stale", "review"]
            lines.append(f"{'tenant':<20} {'total':>8} " + " ".join(f"{s:>11}" for s in short) + f" {'bytes':>10}")
            for j in shown:
                cells = " ".join(f"{int(self.counts[r, j]):>11,}" for r in range(1, len(RULES)))
                lines.append(f"{self.tenants[j][:20]:<20} {int(per[j]):>8,} {cells} {_size(int(self.bytes[:, j].sum())):>10}")
        return "\n".join(lines)


def _hash_strings(h, chunks: list[pa.Array]) -> None:
    """Feed every value's length, then every value's bytes: unambiguous, and the same however
    the column is chunked or sliced."""
    spans = []
    for chunk in chunks:
        if len(chunk):
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=chunk.offset * 4)
            h.update(np.diff(offsets).astype(np.int64).tobytes())
            spans.append((chunk.buffers()[2], int(offsets[0]), int(offsets[-1])))
    for data, start, stop in spans:
        if data is not None and stop > start:
            h.update(memoryview(data)[start:stop])


def _iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


class PlanBuilder:
    """Builds one plan from batches of memories, in the order added: ``add`` evaluates a batch
    and keeps only the rows a rule picks; ``finish`` tallies them per rule and tenant."""

    def __init__(self, now_us: int, cfg: LifecycleConfig | Config | None = None) -> None:
        self.now_us, self.cfg = int(now_us), cfg
        self._ids: list[pa.Array] = []
        self._scopes: list[pa.Array] = []
        self._rules: list[np.ndarray] = []
        self._bytes: list[np.ndarray] = []
        self.rows_scanned = 0

    def add(self, cols, row_bytes: float | np.ndarray = 0.0) -> None:
        """One batch: a dict of columns (Arrow, NumPy or lists) or an Arrow RecordBatch/Table
        holding ``PLAN_COLUMNS`` (``contradicted`` optional). ``row_bytes``: the estimated
        stored size of a row (one number, or one per row)."""
        if isinstance(cols, (pa.RecordBatch, pa.Table)):
            cols = {name: cols.column(name) for name in cols.schema.names}
        for name in ("memory_id", "scope"):
            if name not in cols:
                raise InvalidRecord(f"a plan needs the column {name!r}")
        rule = rules(cols, self.now_us, self.cfg)
        self.rows_scanned += len(rule)
        idx = np.flatnonzero(rule)
        if not len(idx):
            return
        picked = pa.array(rule != 0)  # a filter copies strings faster than a take by index
        self._ids.append(_array(cols["memory_id"], "memory_id").filter(picked))
        self._scopes.append(_array(cols["scope"], "scope").filter(picked))
        self._rules.append(rule[idx])
        # Whole bytes per row, so that sums do not depend on how the rows were split.
        self._bytes.append(np.rint(np.broadcast_to(np.asarray(row_bytes, dtype=np.float64), (len(rule),))[idx]))

    def add_due(self, memory_ids: list[str], scopes: list[str], code: int) -> None:
        """Rows due by rule ``code``, decided from elsewhere than L2's columns (the ledger's
        memories set aside past their hard TTL: ``Ledger.set_aside_past_hard``)."""
        if memory_ids:
            self._ids.append(_array(memory_ids, "memory_id"))
            self._scopes.append(_array(scopes, "scope"))
            self._rules.append(np.full(len(memory_ids), code, dtype=np.int8))
            self._bytes.append(np.zeros(len(memory_ids)))

    def finish(self) -> Plan:
        import pyarrow.compute as pc  # loaded when first used: not on a first write's path
        if not self._rules:
            return Plan(now_us=self.now_us, rows_scanned=self.rows_scanned)
        codes = np.concatenate(self._rules)
        rows = pa.table([pa.chunked_array(self._ids, pa.string()), pa.chunked_array(self._scopes, pa.string()),
                         pa.array(codes, pa.int8())], schema=_ROWS_SCHEMA)
        # Tenants per distinct scope, not per row: a sweep plans many rows in few scopes.
        enc = pc.dictionary_encode(rows["scope"].combine_chunks())
        tenant_enc = pc.dictionary_encode(tenants_of(enc.dictionary))
        names = tenant_enc.dictionary.to_pylist()
        order = np.argsort(np.asarray(names, dtype=object)).astype(np.int64)  # tenants sorted, few of them
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        tcode = rank[tenant_enc.indices.to_numpy(zero_copy_only=False)][enc.indices.to_numpy(zero_copy_only=False)]
        t = len(names)
        flat = codes.astype(np.int64) * t + tcode
        counts = np.bincount(flat, minlength=len(RULES) * t).reshape(len(RULES), t)
        weights = np.concatenate(self._bytes)
        nbytes = np.rint(np.bincount(flat, weights=weights, minlength=len(RULES) * t)).astype(np.int64)
        return Plan(now_us=self.now_us, rows=rows, rows_scanned=self.rows_scanned,
                    tenants=[names[j] for j in order], counts=counts, bytes=nbytes.reshape(len(RULES), t))


def plan_columns(cols, now_us: int, cfg: LifecycleConfig | Config | None = None, *,
                 row_bytes: float | np.ndarray = 0.0) -> Plan:
    """The plan for one batch of memories (see ``PlanBuilder.add``): what a whole-table
    evaluation decides."""
    builder = PlanBuilder(now_us, cfg)
    builder.add(cols, row_bytes)
    return builder.finish()


def merge(parts: list[Plan], *, now_us: int | None = None) -> Plan:
    """One plan from partial plans of the same ``now``, rows concatenated in the order given."""
    if not parts:
        if now_us is None:
            raise InvalidRecord("merge needs at least one plan, or now_us")
        return Plan(now_us=int(now_us))
    now = parts[0].now_us
    if any(p.now_us != now for p in parts) or (now_us is not None and now_us != now):
        raise InvalidRecord("partial plans of different 'now' cannot be merged")
    tenants = sorted(set().union(*(p.tenants for p in parts)))
    pos = {t: j for j, t in enumerate(tenants)}
    counts = np.zeros((len(RULES), len(tenants)), dtype=np.int64)
    nbytes = np.zeros_like(counts)
    for p in parts:
        cols = [pos[t] for t in p.tenants]
        counts[:, cols] += p.counts
        nbytes[:, cols] += p.bytes
    return Plan(now_us=now, rows=pa.concat_tables([p.rows for p in parts]), rows_scanned=sum(p.rows_scanned for p in parts),
                tenants=tenants, counts=counts, bytes=nbytes)
