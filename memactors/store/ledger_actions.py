"""What an action depended on (DESIGN section 5, the evidence log): each tool call a session
completed, with the recalls made for it and the memories they returned and the model cited.
Ids only (never content or the tool's arguments), so an erasure leaves nothing here to purge.

Mixed into ``Ledger``. The table is evidence, like ``recalls``: outside the hash chain,
append-only by our code.
"""

from __future__ import annotations

import pyarrow as pa

from .ledger_audit import CLEARED, RECALL_SHOWN, clearance_params

ACTIONS_DDL = """CREATE TABLE IF NOT EXISTS actions (
    action_id VARCHAR, ts BIGINT, ended_at BIGINT, actor VARCHAR, task_id VARCHAR, purpose VARCHAR, scope VARCHAR,
    tool VARCHAR, outcome VARCHAR, allowed_scopes VARCHAR[], recall_ids VARCHAR[], recalled VARCHAR[],
    cited VARCHAR[])"""
ACTION_COLUMNS = ("action_id", "ts", "ended_at", "actor", "task_id", "purpose", "scope", "tool", "outcome",
                  "allowed_scopes", "recall_ids", "recalled", "cited")
# What a reader is shown of the actions, by the clearance rule of recall evidence (``audit.sql``):
# every allowed scope of the row lies under one of its read grants, and every recall the row
# names is one it is shown, so every memory the action recalled (and cited: a subset) is at or
# below its clearance. Whole or not at all, as a recall's row; a recall the log does not hold
# (never the case: ``after_tool`` flushes them first) hides the row rather than passing unchecked.
_SHOWN = f"""NOT EXISTS (SELECT 1 FROM unnest(a.allowed_scopes) s(x) WHERE {CLEARED.format(scope="s.x")} IS NULL)
    AND (SELECT count(DISTINCT r.recall_id) FROM unnest(a.recall_ids) i(x) JOIN recalls r ON r.recall_id = i.x
         WHERE {RECALL_SHOWN}) = len(list_distinct(a.recall_ids))"""


class LedgerActions:
    """Needs ``con``, ``_q`` and ``_x`` of ``Ledger``."""

    def log_actions(self, rows: list[dict]) -> None:
        if not rows:
            return
        tbl = pa.table({c: (pa.array([r[c] for r in rows], pa.int64()) if c in ("ts", "ended_at")
                            else [r[c] for r in rows]) for c in ACTION_COLUMNS})  # noqa: F841 - replacement scan
        self.con.execute(f"INSERT INTO actions SELECT {', '.join(ACTION_COLUMNS)} FROM tbl").fetchall()

    def actions_on(self, memory_ids: list[str], reads: list[tuple[str, str]]) -> list[dict]:
        """The completed actions that depended on any of ``memory_ids``: they were returned by a
        recall made for the action (``recalled``) or cited by the model, at the action or on
        one of its recalls (``cited``). Only actions a reader with these read grants, as (scope
        prefix, clearance) pairs ("/" for /global/), is shown (``_SHOWN``; the ``levels`` index
        brought up first, ``index_levels``). Each row names which of the ids it used."""
        if not memory_ids or not reads:
            return []
        ids = sorted(set(memory_ids))
        rows = self._q(f"""
            SELECT {', '.join('a.' + c for c in ACTION_COLUMNS)},
                   list_intersect(a.recalled, $4::VARCHAR[]) AS used,
                   list_distinct(list_concat(list_intersect(a.cited, $4::VARCHAR[]), coalesce((
                       SELECT list(c.memory_id) FROM citations c
                       WHERE list_contains(a.recall_ids, c.recall_id) AND list_contains($4::VARCHAR[], c.memory_id)),
                       []))) AS cited_here
            FROM actions a
            WHERE (list_has_any(a.recalled, $4::VARCHAR[]) OR list_has_any(a.cited, $4::VARCHAR[])) AND {_SHOWN}
            ORDER BY a.ts, a.action_id""", [*clearance_params(reads), ids])
        out = []
        for r in rows:
            d = dict(zip(ACTION_COLUMNS, r[:len(ACTION_COLUMNS)]))
            d["depended_on"] = sorted(set(r[-2] or []) | set(r[-1] or []))
            d["cited_of_those"] = sorted(set(r[-1] or []))
            out.append(d)
        return out
