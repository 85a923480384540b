"""Lifecycle (DESIGN section 7): TTL policies, refresh, staleness and the GC rules.

Pure: no I/O, no Ray. "Now" is always an argument, taken by the caller from the injected clock.

Time is int64 microseconds since the Unix epoch (UTC), the unit of the Arrow schema. Columns
handed to ``evaluate`` and ``staleness`` may be Arrow arrays (nulls allowed), NumPy int64 or
datetime64[us] arrays, or lists (None allowed). Nulls become sentinels before any arithmetic:

- ``soft_expires_at`` / ``hard_expires_at``: null = never expires -> ``NEVER_US`` (int64 max);
- ``last_accessed_at``: null = never recalled -> ``NEVER_ACCESSED_US`` (int64 min);
- ``updated_at``: null (the schema forbids it) -> ``NEVER_US``, so no time rule matches;
- ``confidence``: null -> 1.0 (never "low"); ``contradicted`` absent or null -> False;
- ``review``: null = no open review. ``review = "contradiction"`` (an open contradiction: the
  ledger's state, an L2 column, folded by rebuild) is the staleness score's contradiction term,
  unless a ``contradicted`` column is given; ``category`` null = "default".

A NumPy int64 column is taken as already carrying these sentinels; a datetime64 NaT is a null.

GC rules, by code (``RULES``) and what they do (``ACTION_OF``); durations compare with ">=" (a
memory 90 days superseded is "older than 90 days"), expiries with "<=" (expired at the instant,
as recall's filter ``hard_expires_at > now`` has it), confidence with "<", staleness with ">"::

    1 hard_expired          hard_expires_at <= now                     evict
    2 soft_expired_unused   soft_expires_at <= now and no recall for    evict
                            ``unused_days`` (a memory never recalled counts from updated_at)
    3 superseded_old        superseded, updated_at (when it was         evict
                            superseded) at least ``superseded_days`` ago
    4 low_confidence_stale  confidence < ``low_confidence`` and not      stale
                            updated or refreshed for ``low_confidence_days``
    5 staleness_evict       staleness > ``evict_threshold``              evict
    6 staleness_stale       staleness > ``stale_threshold``              stale
    7 review_due            its category has ``review_days``, not        review
                            updated or confirmed for that long, no
                            open review (``review`` null)

Who is eligible: ``evicted`` and ``tombstoned`` rows (and unknown statuses) never match;
``pending`` rows (held for a reviewer) only by hard expiry; ``superseded`` rows by hard expiry
and superseded_old; ``active`` rows by every rule; ``stale`` rows by the eviction rules and
review_due. Several rules may hold: an eviction beats a stale mark, a stale mark beats a review
flag, and among each kind the first in the table's order is named (1, 2, 3, 5, then 4, 6).
A review flag (``review = "periodic"``) neither down-weights nor evicts: it lists the memory in
the review queue (``rt.review.due``) until a reviewer confirms or retires it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np
import pyarrow as pa

from .clock import US_PER_DAY
from .config import NEVER, Config, LifecycleConfig, days_value  # noqa: F401 - NEVER: the per-write "never"
from .errors import InvalidRecord
from .records import STATUSES
from .scopes import describe

CATEGORIES = ("default", "preference", "task_learning", "entity_fact", "instruction", "observation")

NEVER_US = np.iinfo(np.int64).max
NEVER_ACCESSED_US = np.iinfo(np.int64).min

RULES = ("none", "hard_expired", "soft_expired_unused", "superseded_old", "low_confidence_stale",
         "staleness_evict", "staleness_stale", "review_due")
ACTIONS = ("none", "evict", "stale", "review")


def sweep_reason(rule: str) -> str:
    """The ledger reason of a sweep's change by ``rule`` (a rollback reads it back)."""
    return f"gc: {rule}"

NONE, EVICT, STALE, REVIEW = 0, 1, 2, 3
ACTION_OF = np.array([NONE, EVICT, EVICT, EVICT, STALE, EVICT, STALE, REVIEW], dtype=np.int8)  # by rule code
CONTRADICTION_REVIEW = "contradiction"  # versions.CONTRADICTION_FLAG: an open contradiction
PERIODIC_REVIEW = "periodic"  # review_due's flag: due for the category's periodic review
MAX_AGE_US = 36_500 * US_PER_DAY  # 100 years: past it every decay has long run out

# The columns evaluate reads (``contradicted`` is optional; ``review`` and ``category`` may be
# absent: no contradiction term, no review rule); a plan reads these plus memory_id and scope.
# created_at and retrieved_count are not needed by any rule.
RULE_COLUMNS = ("status", "confidence", "updated_at", "last_accessed_at", "soft_expires_at", "hard_expires_at",
                "review", "category")
OPTIONAL_COLUMNS = frozenset({"review", "category"})
# Status codes of this module: the four live statuses first, so "live" is one comparison.
_STATUS_ORDER = ("pending", "active", "superseded", "stale", "evicted", "tombstoned")
if set(_STATUS_ORDER) != set(STATUSES):  # a new status needs a decision here, not a silent default
    raise ImportError("lifecycle: the status codes no longer match records.STATUSES")
_STATUS_VALUES = pa.array(_STATUS_ORDER)


def lifecycle_config(cfg: LifecycleConfig | Config | None) -> LifecycleConfig:
    """The [lifecycle] section from a Config, a LifecycleConfig as is, or the defaults for None."""
    if cfg is None:
        return LifecycleConfig()
    return cfg.lifecycle if isinstance(cfg, Config) else cfg


# --- TTL policy ---------------------------------------------------------------------------------


def _policy(category: object, lc: LifecycleConfig):
    name = "default" if category is None else category
    if not isinstance(name, str) or name not in lc.ttl:
        raise InvalidRecord(f"category is not known ({describe(name)}); known: {sorted(lc.ttl)}")
    return lc.ttl[name]


def ttl_policy(category: str | None, ttl_days: object = None, soft_ttl_days: object = None,
               cfg: LifecycleConfig | Config | None = None) -> tuple[float | None, float | None]:
    """The (soft_days, hard_days) a new memory of ``category`` gets; None = never expires.

    ``category`` None means "default". ``ttl_days`` (hard) and ``soft_ttl_days`` (soft) override
    the category's values: None keeps the default, a number of days in (0, 36500] sets it, and
    ``"never"`` (or ``math.inf``) says the memory never expires that way. Zero, negative, NaN,
    bool, more than 100 years, another type or an unknown category raise InvalidRecord. An
    explicit ``soft_ttl_days`` longer than the hard period is an error; the category's soft
    period is cut to an explicit shorter ``ttl_days``.
    """
    base = _policy(category, lifecycle_config(cfg))
    soft = base.soft_days if soft_ttl_days is None else _write_days(soft_ttl_days, "soft_ttl_days")
    hard = base.hard_days if ttl_days is None else _write_days(ttl_days, "ttl_days")
    if soft is not None and hard is not None and soft > hard:
        if soft_ttl_days is not None:
            raise InvalidRecord("soft_ttl_days must not exceed the hard TTL (ttl_days, or the category's)")
        soft = hard
    return soft, hard


def _write_days(value: object, what: str) -> float | None:
    """A write's own TTL (``days_value``), at least a microsecond: a shorter one (1e-12 days)
    made a memory expired at the instant it was written, acknowledged "accepted" and never recalled."""
    days = days_value(value, what, error=InvalidRecord)
    if days is not None and days * US_PER_DAY < 1:
        raise InvalidRecord(f"{what} must be at least a microsecond (1/{US_PER_DAY:,} of a day) or \"never\"")
    return days


def review_days(category: str | None, cfg: LifecycleConfig | Config | None = None) -> float | None:
    """The category's review period in days (None: no periodic review)."""
    return _policy(category, lifecycle_config(cfg)).review_days


def _days_us(days: float) -> int:
    return round(days * US_PER_DAY)


def expiries(updated_at_us: int, soft_days: float | None, hard_days: float | None) -> tuple[int | None, int | None]:
    """(soft_expires_at, hard_expires_at) in microseconds for a memory updated at
    ``updated_at_us`` under a (soft_days, hard_days) policy; None where the policy says never."""
    t = int(updated_at_us)
    return (None if soft_days is None else t + _days_us(soft_days),
            None if hard_days is None else t + _days_us(hard_days))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _as_us(v, what: str, *, optional: bool = True) -> int | None:
    """Microseconds from an int or a datetime (naive = UTC), exactly; None passes if optional."""
    if v is None and optional:
        return None
    if isinstance(v, datetime):
        return ((v if v.tzinfo else v.replace(tzinfo=UTC)) - _EPOCH) // timedelta(microseconds=1)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidRecord(f"{what} must be microseconds since the epoch (an integer) or a datetime")
    return int(v)


def restart_expiries(updated_at_us, soft_expires_at, hard_expires_at, now_us: int) -> tuple[int | None, int | None]:
    """The same policy measured again from ``now_us``: each expiry keeps its distance from
    ``updated_at`` (exact integer shift). For a refresh, and for a new version, which inherits
    the TTL policy of the one it supersedes. Timestamps are microseconds or datetimes."""
    shift = _as_us(now_us, "now_us", optional=False) - _as_us(updated_at_us, "updated_at", optional=False)
    soft, hard = _as_us(soft_expires_at, "soft_expires_at"), _as_us(hard_expires_at, "hard_expires_at")
    return (None if soft is None else soft + shift, None if hard is None else hard + shift)


def inherit_expiries(old: dict, new_updated_at_us: int) -> tuple[int | None, int | None]:
    """Expiries of a new version written at ``new_updated_at_us`` that supersedes record ``old``
    (a dict of the memory schema): the old one's policy, restarted. A write that gives its own
    ``ttl_days``/``soft_ttl_days`` is the caller's to honour instead (``ttl_policy`` +
    ``expiries``)."""
    return restart_expiries(old["updated_at"], old.get("soft_expires_at"), old.get("hard_expires_at"),
                            new_updated_at_us)


def refreshed_confidence(confidence, cfg: LifecycleConfig | Config | None = None):
    """Confidence after a refresh: raised by ``refresh_confidence_bump``, capped at 1. Takes a
    number (returns a float) or an array (returns an array)."""
    bump = lifecycle_config(cfg).refresh_confidence_bump
    if isinstance(confidence, (int, float, np.floating)) and not isinstance(confidence, bool):
        if not 0.0 <= confidence <= 1.0:
            raise InvalidRecord("confidence must be a number between 0 and 1")
        return round(min(1.0, float(confidence) + bump), 6)  # as a refresh keeps it (core.versions.refreshed)
    c = np.asarray(confidence) if isinstance(confidence, (list, tuple, np.ndarray)) else None
    if c is None or c.dtype.kind not in "iuf" or not np.all((c >= 0.0) & (c <= 1.0)):
        raise InvalidRecord("confidence must be a number, or an array of numbers, between 0 and 1")
    return np.minimum(1.0, c.astype(np.float64) + bump)


def refreshed(record: dict, now_us: int, cfg: LifecycleConfig | Config | None = None) -> dict:
    """The fields a refresh (the same content written again) changes: ``updated_at`` is now,
    the expiries restart under the same policy, confidence rises."""
    soft, hard = restart_expiries(record["updated_at"], record.get("soft_expires_at"), record.get("hard_expires_at"), now_us)
    out = {"updated_at": _as_us(now_us, "now_us", optional=False), "soft_expires_at": soft, "hard_expires_at": hard,
           "confidence": refreshed_confidence(record["confidence"], cfg)}
    if record.get("status") == "stale":  # confirmed again: fresh, no longer ranked at half
        out["status"] = "active"
    return out


# --- columns --------------------------------------------------------------------------------------


def column_us(col, null_us: int) -> np.ndarray:
    """A timestamp column as int64 microseconds, nulls replaced by ``null_us``."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    if isinstance(col, np.ndarray):
        if np.issubdtype(col.dtype, np.datetime64):
            out = col.astype("datetime64[us]").view(np.int64)
            nat = np.isnat(col)
            return np.where(nat, np.int64(null_us), out) if nat.any() else out
        if np.issubdtype(col.dtype, np.integer):
            return col.astype(np.int64, copy=False)
        raise InvalidRecord("a timestamp column must hold integers (microseconds) or datetime64")
    if not isinstance(col, (pa.Array, pa.ChunkedArray)):
        col = pa.array(list(col), type=pa.int64())
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_timestamp(col.type):
        if col.type.unit != "us":  # nanoseconds truncate: rules work to the microsecond
            col = pc.cast(col, pa.timestamp("us", tz=col.type.tz), safe=False)
    elif not pa.types.is_integer(col.type):
        raise InvalidRecord("a timestamp column must hold integers (microseconds) or timestamps")
    elif col.type != pa.int64():
        col = col.cast(pa.int64())
    values, nulls = _int64_parts(col)
    return values if nulls is None else np.where(nulls, np.int64(null_us), values)


def _int64_parts(col: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """An int64/timestamp[us] Arrow array's values buffer (no copy; what a null slot holds is
    undefined) and its null mask (None without nulls): cheaper than fill_null per batch."""
    n = len(col)
    values = np.frombuffer(col.buffers()[1], dtype=np.int64, count=n, offset=col.offset * 8)
    if not col.null_count:
        return values, None
    bitmap = np.frombuffer(col.buffers()[0], dtype=np.uint8)
    return values, np.unpackbits(~bitmap, count=col.offset + n, bitorder="little")[col.offset:].view(bool)


def _timestamps(col, null_us: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, null mask or None) of a timestamp column; for the rules' comparisons, which can
    mask nulls instead of writing a sentinel into a copy."""
    if isinstance(col, pa.ChunkedArray) and col.num_chunks == 1:
        col = col.chunk(0)
    if isinstance(col, pa.Array) and col.type in (_TS_US, _TS_US_UTC, pa.int64()):
        return _int64_parts(col)
    return column_us(col, null_us), None


_TS_US, _TS_US_UTC = pa.timestamp("us"), pa.timestamp("us", tz="UTC")


def status_codes(col) -> np.ndarray:
    """Statuses as int8 codes (pending 0, active 1, superseded 2, stale 3, evicted 4,
    tombstoned 5); an unknown value or a null is -1."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    if not isinstance(col, (pa.Array, pa.ChunkedArray)):
        col = pa.array(np.asarray(col, dtype=object) if not isinstance(col, list) else col, type=pa.string())
    idx = pc.index_in(col, value_set=_STATUS_VALUES)
    if idx.null_count:
        idx = pc.fill_null(idx, -1)
    return idx.to_numpy().astype(np.int8)


def _numbers(col, null, dtype) -> np.ndarray:
    """A numeric (``dtype`` float32) or boolean (``dtype`` bool) column as NumPy, nulls as
    ``null``. Strings, objects, and booleans where numbers go (or the reverse) are refused."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    flags = dtype is bool
    if isinstance(col, (pa.Array, pa.ChunkedArray)):
        ok = pa.types.is_boolean(col.type) if flags else (pa.types.is_integer(col.type) or pa.types.is_floating(col.type))
        if not ok:
            raise TypeError("wrong Arrow type")
        if col.null_count:
            col = pc.fill_null(col, null)
        return np.asarray(col.to_numpy(zero_copy_only=False) if isinstance(col, pa.Array) else col.to_numpy(), dtype=dtype)
    if isinstance(col, np.ndarray):
        if (col.dtype.kind != "b") if flags else (col.dtype.kind not in "iuf"):
            raise TypeError("wrong NumPy dtype")
        return col.astype(dtype, copy=False)
    kinds = (bool, np.bool_) if flags else (int, float, np.integer, np.floating)
    values = [null if v is None else v for v in col]
    if any(not isinstance(v, kinds) or (not flags and isinstance(v, (bool, np.bool_))) for v in values):
        raise TypeError("wrong value type")
    return np.asarray(values, dtype=dtype)


# --- staleness --------------------------------------------------------------------------------


def staleness(now_us: int, updated_at, last_accessed_at, contradicted=None,
              cfg: LifecycleConfig | Config | None = None) -> np.ndarray:
    """Staleness in [0, 1] per memory (float64): ``w_age*age + w_access*access_decay +
    w_contradiction*contradiction`` with the configured weights normalised to sum 1, where

    - age = ``1 - 0.5 ** (days since updated_at / age_half_life_days)``: 0 when just written or
      refreshed, 0.5 one half-life later, towards 1;
    - access_decay = ``1 - 0.5 ** (days since last use / access_half_life_days)``, last use
      being the later of ``last_accessed_at`` and ``updated_at`` (a memory never recalled counts
      from its last write);
    - contradiction = 1 where ``contradicted`` is true (an open contradiction), else 0.

    Times in the future (clock skew) count as 0 days."""
    lc = lifecycle_config(cfg)
    now = _now(now_us)
    cols = {"updated_at": updated_at, "last_accessed_at": last_accessed_at, "contradicted": contradicted}
    upd = _column(cols, "updated_at", None, column_us, NEVER_US)
    last_use = np.maximum(_column(cols, "last_accessed_at", len(upd), column_us, NEVER_ACCESSED_US), upd)
    contra = None if contradicted is None else _column(cols, "contradicted", len(upd), _numbers, False, bool)
    return _staleness(now, upd, last_use, contra, lc)


def _now(now_us) -> int:
    if isinstance(now_us, bool) or not isinstance(now_us, (int, np.integer)):
        raise InvalidRecord("now_us must be an integer (microseconds since the epoch)")
    return int(now_us)


def _weights(lc: LifecycleConfig) -> np.ndarray:
    w = np.asarray(lc.staleness_weights, dtype=np.float64)
    return w / w.sum()


def _staleness(now: int, upd: np.ndarray, last_use: np.ndarray, contra: np.ndarray | None,
               lc: LifecycleConfig) -> np.ndarray:
    w = _weights(lc)
    # now - t stays inside int64 for every t the sentinels allow (now is positive).
    age = np.exp2(np.maximum(now - upd, 0) * (-1.0 / (lc.age_half_life_days * US_PER_DAY)))
    acc = np.exp2(np.maximum(now - last_use, 0) * (-1.0 / (lc.access_half_life_days * US_PER_DAY)))
    out = w[0] * (1.0 - age)
    out += w[1] * (1.0 - acc)
    if contra is not None and w[2]:
        out += w[2] * contra
    return out


@lru_cache(maxsize=64)  # evaluate runs per batch; the bound depends on the config only
def _min_age_us(threshold: float, weights: tuple, age_half_life_days: float, access_half_life_days: float,
                contradiction: bool) -> int | None:
    """The least age (now - updated_at) at which a memory's staleness can pass ``threshold``, or
    None if no age can. Last use is never before updated_at, so staleness is at most
    w_age*age(a) + w_access*access_decay(a) + w_contradiction*c for age a, which rises with a:
    younger memories need no score. Bisection, less a day's margin: the exact score decides.
    0 means any age may pass (writes dated in the future count as age 0)."""
    lc = LifecycleConfig(staleness_weights=list(weights), age_half_life_days=age_half_life_days,
                         access_half_life_days=access_half_life_days)
    contra = np.array([True]) if contradiction else None

    def bound(age_us: int) -> float:
        t = np.array([-age_us], dtype=np.int64)
        return float(_staleness(0, t, t, contra, lc)[0])

    lo, hi = 0, 2 * MAX_AGE_US
    if bound(hi) <= threshold:
        return None
    while hi - lo > US_PER_DAY:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if bound(mid) <= threshold else (lo, mid)
    return max(0, lo - US_PER_DAY)


# --- the rules ------------------------------------------------------------------------------


def _column(cols: dict, name: str, n: int | None, convert, *args) -> np.ndarray:
    """Column ``name`` converted; a missing column, another length or values of the wrong kind
    are InvalidRecord (never a library's own error)."""
    if name not in cols:
        raise InvalidRecord(f"evaluate needs the column {name!r}; it takes {list(RULE_COLUMNS)} (+ contradicted; "
                            f"{', '.join(sorted(OPTIONAL_COLUMNS))} optional)")
    col = cols[name]
    try:
        out = convert(col, *args)
    except InvalidRecord:
        raise
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        raise InvalidRecord(f"column {name!r} holds values of the wrong kind") from None
    rows = len(out[0]) if isinstance(out, tuple) else len(out)
    if n is not None and rows != n:
        raise InvalidRecord(f"column {name!r} has {rows} rows, others {n}")
    return out


def evaluate(cols: dict, now_us: int, cfg: LifecycleConfig | Config | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Apply the GC rules to a batch of memories.

    ``cols`` maps column names of the memory schema to Arrow arrays, NumPy arrays or lists
    (an Arrow RecordBatch or Table works too): ``RULE_COLUMNS`` are needed but ``review`` and
    ``category`` (without them: no contradiction term, no review rule); ``contradicted``
    (bool) is optional and, given, stands for ``review == "contradiction"``; others are ignored. Returns ``(rule, action)``, two int8 arrays as long
    as the columns: ``rule`` indexes ``RULES`` (0 = none), ``action`` indexes ``ACTIONS``
    (0 none, 1 evict, 2 stale)."""
    rule = rules(cols, now_us, cfg)
    return rule, ACTION_OF[rule]


def _candidates(mask: np.ndarray, upd: np.ndarray, now: int, lc: LifecycleConfig, contradicted) -> np.ndarray:
    """Positions under ``mask`` old enough that their staleness may pass a threshold."""
    min_age = _min_age_us(min(lc.stale_threshold, lc.evict_threshold), tuple(lc.staleness_weights),
                          lc.age_half_life_days, lc.access_half_life_days, bool(contradicted))
    if min_age is None:
        return np.zeros(0, np.intp)
    if min_age == 0:  # any age may pass, even a write dated in the future (counted as age 0)
        return np.flatnonzero(mask)
    return np.flatnonzero(mask & (upd <= now - min_age))


def _strings(cols: dict, name: str, n: int) -> pa.Array | None:
    """An optional string column as one Arrow array (None when absent)."""
    col = cols.get(name)
    if col is None:
        return None
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    elif not isinstance(col, pa.Array):
        try:
            col = pa.array(list(col), type=pa.string())
        except (pa.ArrowException, TypeError):
            raise InvalidRecord(f"column {name!r} holds values of the wrong kind") from None
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_null(col.type)):
        raise InvalidRecord(f"column {name!r} holds values of the wrong kind")
    if len(col) != n:
        raise InvalidRecord(f"column {name!r} has {len(col)} rows, others {n}")
    return col


def _review_is(cols: dict, n: int, flag: str) -> np.ndarray | None:
    """Where ``review`` is ``flag`` (None without a review column)."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    col = _strings(cols, "review", n)
    if col is None:
        return None
    if not col.null_count == len(col):  # most rows have no review: skip the comparison then
        return pc.fill_null(pc.equal(col.cast(pa.string()), flag), False).to_numpy(zero_copy_only=False)
    return np.zeros(n, dtype=bool)


def _review_due(rule: np.ndarray, cols: dict, n: int, live: np.ndarray, upd: np.ndarray, now: int,
                lc: LifecycleConfig) -> None:
    """Rule 7: live rows of a category with a review period, not updated or confirmed for that
    long, and no open review."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    periods = {name: p.review_days for name, p in lc.ttl.items() if p.review_days is not None}
    if not periods:
        return
    cat = _strings(cols, "category", n)
    if cat is None:
        return
    review = _strings(cols, "review", n)
    cat = pc.fill_null(cat.cast(pa.string()), "default")
    open_review = None if review is None else pc.is_valid(review).to_numpy(zero_copy_only=False)
    for name, days in periods.items():
        m = pc.equal(cat, name).to_numpy(zero_copy_only=False)
        if not m.any():
            continue
        m &= live
        m &= upd <= now - _days_us(days)
        if open_review is not None:
            m &= ~open_review
        np.copyto(rule, 7, where=m)


def rules(cols, now_us: int, cfg: LifecycleConfig | Config | None = None) -> np.ndarray:
    """``evaluate``'s rule codes alone (what a plan needs)."""
    lc = lifecycle_config(cfg)
    if isinstance(cols, (pa.RecordBatch, pa.Table)):
        cols = {name: cols.column(name) for name in cols.schema.names}
    now = _now(now_us)
    st = _column(cols, "status", None, status_codes)
    n = len(st)
    upd = _column(cols, "updated_at", n, column_us, NEVER_US)
    last, last_null = _column(cols, "last_accessed_at", n, _timestamps, NEVER_ACCESSED_US)
    soft, soft_null = _column(cols, "soft_expires_at", n, _timestamps, NEVER_US)
    hard, hard_null = _column(cols, "hard_expires_at", n, _timestamps, NEVER_US)
    conf = _column(cols, "confidence", n, _numbers, 1.0, np.float32)
    if cols.get("contradicted") is not None:
        contra = _column(cols, "contradicted", n, _numbers, False, bool)
    else:  # an open contradiction, as the ledger keeps it (L2's review column)
        contra = _review_is(cols, n, CONTRADICTION_REVIEW)

    live = st.view(np.uint8) <= 3  # pending, active, superseded, stale (unknown -1 wraps to 255)
    active = st == 1
    recallable = st == 3
    recallable |= active
    superseded = st == 2
    last_use = np.maximum(last, upd)
    if last_null is not None:  # never recalled: last use is the last write
        np.copyto(last_use, upd, where=last_null)
    # Cut-off instants: "t <= now - d" never overflows where "now - t >= d" could.
    unverified, superseded_before, unused = (now - _days_us(d) for d in (
        lc.low_confidence_days, lc.superseded_days, lc.unused_days))

    # Later assignments win: review flags first, then stale marks, then the evictions, the first rule last.
    rule = np.zeros(n, dtype=np.int8)
    _review_due(rule, cols, n, recallable, upd, now, lc)
    # Staleness is computed only where it can pass a threshold (most rows are too young; an open
    # contradiction lowers the age at which one can).
    cand = _candidates(recallable, upd, now, lc, None)
    if contra is not None and contra.any():
        cand = np.union1d(cand, _candidates(recallable & contra, upd, now, lc, True))
    score = _staleness(now, upd[cand], last_use[cand], None if contra is None else contra[cand], lc)
    rule[cand[active[cand] & (score > lc.stale_threshold)]] = 6
    # float32, the column's type: a stored 0.3 is not below a 0.3 threshold.
    m = conf < np.float32(lc.low_confidence)
    m &= active
    m &= upd <= unverified
    np.copyto(rule, 4, where=m)
    rule[cand[score > lc.evict_threshold]] = 5
    m = upd <= superseded_before
    m &= superseded
    np.copyto(rule, 3, where=m)
    m = soft <= now
    m &= recallable
    m &= last_use <= unused
    if soft_null is not None:
        m &= ~soft_null
    np.copyto(rule, 2, where=m)
    m = hard <= now
    m &= live
    if hard_null is not None:
        m &= ~hard_null
    np.copyto(rule, 1, where=m)
    return rule
