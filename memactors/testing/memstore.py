"""An in-memory L2 store with the interface of ``memactors.store.lance_store.L2Store``: for
tests that want L2's behaviour without files, and the second party of the conformance suite
(tests/test_l2_conformance.py) that both must pass.

Exact where L2 is exact (which rows, which columns, which filters); its full-text side picks
candidates by the keyword share itself rather than by Lance's BM25, so the candidates past
``k`` may differ; scores do not (the caller computes them from the rows).
"""

from __future__ import annotations

import numpy as np

from ..core import records as R
from ..core import scoring as S


class MemoryL2Store:
    def __init__(self, dim: int) -> None:
        self.dim = int(dim)
        self.rows: dict[str, dict] = {}
        self.vectors: dict[str, np.ndarray] = {}

    # --- writing --------------------------------------------------------------------------

    def apply(self, batch) -> None:
        for mid, rec in {**batch.new, **batch.rows}.items():
            self.rows[mid] = R.complete(dict(rec))
            v = batch.vectors.get(mid)
            self.vectors[mid] = np.zeros(self.dim, np.float32) if v is None else np.asarray(v, np.float32)
        for mid, p in batch.patches.items():
            if mid in self.rows:
                self.rows[mid] = {**self.rows[mid], **{k: v for k, v in p.items() if k != "scope"}}
        for mid in batch.deletes:
            self.rows.pop(mid, None)
            self.vectors.pop(mid, None)

    def reindex(self) -> None:
        pass

    def prune_versions(self) -> None:
        pass

    def compact_small(self, fragments: int, rows: int) -> None:
        return None

    def purge_old_versions(self) -> None:
        pass

    # --- reading --------------------------------------------------------------------------

    def count(self) -> int:
        return len(self.rows)

    def scopes(self) -> set[str]:
        return {r["scope"] for r in self.rows.values()}

    def ids_and_scopes(self):
        import pyarrow as pa

        ids = sorted(self.rows)
        return pa.table({"memory_id": ids, "scope": [self.rows[m]["scope"] for m in ids]})

    def governed_digests(self):
        from ..core.records import digests_of

        return digests_of([self.rows[m] for m in sorted(self.rows)])

    def _select(self, keep) -> tuple[list[dict], list]:
        ids = sorted(m for m, r in self.rows.items() if keep(r))
        return [dict(self.rows[m]) for m in ids], [self.vectors[m] for m in ids]

    def load_scopes(self, scopes, statuses=("active", "stale", "pending")):
        scopes, statuses = set(scopes), set(statuses)
        return self._select(lambda r: r["scope"] in scopes and r["status"] in statuses)

    def get(self, memory_ids):
        ids = set(memory_ids)
        return self._select(lambda r: r["memory_id"] in ids)

    def entity_versions(self, scopes):
        scopes = set(scopes)
        return [(r["scope"], r["entity_key"], r["version"], r["memory_id"], r["sensitivity"]) for r in self.rows.values()
                if r["scope"] in scopes and r["status"] == "superseded" and r.get("entity_key")]

    def versions_of_many(self, facts: list[tuple[str, str]]) -> list[dict]:
        want = set(facts)
        return self._select(lambda r: (r["scope"], r.get("entity_key")) in want)[0]

    def _recallable(self, r: dict, scopes: set[str], now_us: int) -> bool:
        hard = r.get("hard_expires_at")
        return r["scope"] in scopes and r["status"] in R.LIVE and (hard is None or hard > now_us)

    def rivals(self, scopes, entity_keys, now_us: int, *, vector=None) -> list[dict]:
        scopes, keys = set(scopes), set(entity_keys)
        rows, vecs = self._select(lambda r: self._recallable(r, scopes, now_us) and r.get("entity_key") in keys)
        if vector is None or not rows:
            return rows
        cos = S.cosines(np.stack(vecs), np.asarray(vector, dtype=np.float32)).tolist()
        return [dict(r, cosine=c) for r, c in zip(rows, cos)]

    def hybrid_search(self, vector, terms, scopes, now_us: int, k: int) -> list[dict]:
        scopes = set(scopes)
        rows, vecs = self._select(lambda r: self._recallable(r, scopes, now_us))
        if not rows:
            return []
        q = np.asarray(vector, dtype=np.float32)
        cos = S.cosines(np.stack(vecs), q)
        share = S.QueryTerms(list(terms)).scores(S.doc_terms(r) for r in rows)
        by_vec = set(np.argsort(-cos, kind="stable")[:k].tolist())
        by_text = {int(i) for i in np.argsort(-share, kind="stable")[:k] if share[i] > 0}
        return [dict(rows[i], cosine=float(cos[i])) for i in sorted(by_vec | by_text)]
