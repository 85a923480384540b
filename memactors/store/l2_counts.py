"""What ``stats()`` reports of L2 (rows by status, pool and tenant, and how soon they expire),
from a table of the counted columns: Lance's, or an empty one for a folder with no table yet."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..core import records as R

COUNTED = ("scope", "status", "pool", "soft_expires_at", "hard_expires_at")
DAY_US = 86_400_000_000
BOUNDS = [("expired", 0), ("under_1d", DAY_US), ("under_7d", 7 * DAY_US), ("under_30d", 30 * DAY_US),
          ("under_365d", 365 * DAY_US)]


def empty() -> pa.Table:
    schema = R.memory_schema(1)  # the vector's width is not counted
    return pa.schema([schema.field(c) for c in COUNTED]).empty_table()


def _tally(col) -> dict:
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    if not len(col):
        return {}
    return {str(x["values"]): int(x["counts"]) for x in pc.value_counts(col).to_pylist()}


def _expiry(col, now_us: int) -> dict:
    vals = col.cast(pa.int64()).to_numpy(zero_copy_only=False) if len(col) else np.zeros(0)
    left = vals.astype("float64") - now_us
    out, lo = {}, -np.inf
    for name, hi in BOUNDS:
        out[name] = int(((left > lo) & (left <= hi)).sum()) if name != "expired" else int((left <= 0).sum())
        lo = hi
    out["later"] = int((left > BOUNDS[-1][1]).sum())
    out["never"] = int(col.null_count)
    return out


def table_counts(tbl: pa.Table, now_us: int) -> dict:
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    tenants = pc.fill_null(pc.struct_field(pc.extract_regex(tbl["scope"], r"^/org/(?P<org>[^/]+)/"), [0]), "global")
    return {"rows": tbl.num_rows, "by_status": _tally(tbl["status"]), "by_pool": _tally(tbl["pool"]),
            "by_tenant": _tally(tenants), "soft_expiry": _expiry(tbl["soft_expires_at"], now_us),
            "hard_expiry": _expiry(tbl["hard_expires_at"], now_us)}
