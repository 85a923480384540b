"""L2: one LanceDB table of memory records and vectors (DESIGN sections 2 and 9).

Appends are batched by the caller (one tiny ``add`` makes one Lance version); scalar indexes
on scope, status and memory_id keep every pre-filtered query off a full scan.
"""

from __future__ import annotations

import fcntl
import logging
import os
import random
import time
from contextlib import contextmanager
from datetime import timedelta
from concurrent.futures import ThreadPoolExecutor

from . import lancedb_import  # noqa: F401 - first: lancedb without the REST client's start-up cost
import lancedb  # noqa: E402
import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
from lancedb.index import FTS, Bitmap, BTree

from ..core import records as R
from ..core import scoring as S
from ..core.errors import EmbedderMismatch, InvalidRecord, L2Outdated
from . import filters as F
from .l2_counts import COUNTED, table_counts
from . import l2_parts as P
from .l2_parts import META_DIM, META_EMBEDDER, with_embedder  # noqa: F401 - META_*: the embedder's metadata keys

log = logging.getLogger("memactors.l2")

TABLE = "memories"
# What a recall reads of a row: a hit's fields and what scoring and conflicts need (no vector: a
# load for the hot index reads that). The rest of the record (provenance lists, the session
# struct, counters) is not read, and each column costs its own take: 24.8 against 31.3 ms for a
# vector query of 30 rows at 100,000 (RESULTS).
RECALL_COLUMNS = [*dict.fromkeys([*R.HIT_FIELDS, "search_text", "soft_expires_at", "hard_expires_at", "entity_key",
                                  "sensitivity"])]
# The indexes (``l2_parts`` defines them) as LanceDB's configurations. A folder opened without
# one gets it built then.
SCALAR_INDEXES = {col: {"BTREE": BTree, "BITMAP": Bitmap}[kind] for col, kind in P.SCALAR_INDEXES.items()}
SCHEMA_KEY = b"memactors.schema_version"
INDEX_DELTAS = 8  # delta segments of an index (this handle's) before a reindex merges them
ROW_MERGE_ROWS = 10_000  # whole rows (vectors too) per merge_insert source
# Rows per merge_insert source (a status merge): Lance's join pool (300 MB) took 200k ids of a
# 1M table and failed at 400k; each merge also costs ~0.6 s at 1M whatever its size.
MERGE_ROWS = 100_000
SCAN_DELETE_FROM = 64  # more ids than this: deleted by a scan of the id column (``_delete``)
DELETE_ATTEMPTS = 20  # scans and commits of a scanned delete before a commit conflict is raised
# Cold scopes holding at most this many rows in all are searched by one pre-filtered scan of their
# recall columns, every row scored by the caller (as the hot index scores them), instead of the
# vector and full-text queries: Lance's cost is mostly a take per row and column, and two queries
# at once share two cores. Measured at 100,000 rows (RESULTS, p50 / p95 ms): 100 rows 10.1 / 10.7
# scanned against 10.7 / 13.0 queried, 200 rows 12.9 / 13.6 against 11.3 / 13.4.
SCAN_ROWS = 128
COMPACT_LOCK = ".compaction.lock"  # beside the table: one compaction of it at a time (``_compacting``)


class L2FileDamaged(OSError):
    """A data file the newest L2 version reads is missing or not the size Lance recorded."""


def _check_files(ds, folder: str) -> None:
    """Every data file of ``ds``'s version, by size against its manifest (a stat each). The
    narrow scan at open reads two columns: a file holding only patched columns (a status, a
    review flag) would otherwise be found damaged only when a recall reads it."""
    for fr in ds.get_fragments():
        for f in fr.metadata.files:
            if f.base_id is not None or not f.file_size_bytes:  # elsewhere, or a size not recorded
                continue
            path = os.path.join(folder, "data", f.path)
            try:
                size = os.path.getsize(path)
            except FileNotFoundError:
                raise L2FileDamaged(f"the data file {f.path} of fragment {fr.fragment_id} is missing") from None
            if size != f.file_size_bytes:
                raise L2FileDamaged(f"the data file {f.path} of fragment {fr.fragment_id} holds {size} bytes, "
                                    f"its manifest says {f.file_size_bytes}")


def column_groups(patches: dict[str, dict]) -> list[tuple[tuple, list[str]]]:
    """Patched rows grouped by the columns they set: one merge a group. A group whose columns
    are the union of smaller groups' rides on those (its rows written in each): each merge
    costs about the same whatever its size (~0.05-0.3 s on a 1M table), and a sweep's few stale
    marks that also end a review (status and review) made a third merge beside the stale marks
    and the review flags (as an access count with a status change does beside each alone)."""
    groups: dict[frozenset, dict[str, None]] = {}  # columns -> ids (a dict: in order, each once)
    for mid, p in patches.items():
        cols = frozenset(k for k in p if k != "scope")
        if cols:
            groups.setdefault(cols, {})[mid] = None
    for cols in sorted(groups, key=len, reverse=True):
        parts = [c for c in groups if c < cols]
        if parts and frozenset().union(*parts) == cols:
            for c in parts:  # parts may overlap; each merge still holds a row once (Lance refuses a key twice)
                groups[c].update(groups[cols])
            del groups[cols]
    return [(tuple(sorted(c)), list(ids)) for c, ids in groups.items()]


class L2Store:
    def __init__(self, path: str, embedder_name: str, dim: int, *, cache_mb: int = 512,
                 replace_with: pa.Table | None = None) -> None:
        """Open (or create) the L2 table, Lance's caches bounded to ``cache_mb``; ``replace_with``
        writes a new table in its place (a rebuild from the ledger)."""
        self.path = path
        self.dim = int(dim)
        os.makedirs(path, exist_ok=True)
        # Every read sees the newest version: another owner may have compacted and cleaned the
        # versions this handle held (a sweep), and a stale handle would read files that are gone.
        # cache_mb in all: half to LanceDB's handle (writes, indexing), half to the reads' (``_reader``)
        self._cache = {"index_cache_size_bytes": (cache_mb << 19) * 3 // 4,
                       "metadata_cache_size_bytes": (cache_mb << 19) // 4}
        self.session = lancedb.Session(**self._cache)
        self.db = lancedb.connect(path, read_consistency_interval=timedelta(0), session=self.session)
        schema = with_embedder(R.memory_schema(self.dim), embedder_name, self.dim)
        if replace_with is not None:
            # "create" where there is none yet: "overwrite" of nothing has Lance warn on the terminal.
            there = os.path.exists(os.path.join(path, f"{TABLE}.lance"))
            self.table = self.db.create_table(TABLE, data=replace_with.replace_schema_metadata(schema.metadata),
                                              schema=schema, mode="overwrite" if there else "create")
        else:
            # exist_ok: several owners open the same folder at once; the first one creates it.
            try:
                self.table = self.db.create_table(TABLE, schema=schema, exist_ok=True)
            except ValueError:  # it exists with another schema: the metadata check below says why
                self.table = self.db.open_table(TABLE)
        meta = self.table.schema.metadata or {}
        got = (meta.get(META_EMBEDDER, b"?").decode(), int(meta.get(META_DIM, b"0")))
        if got != (embedder_name, self.dim):
            raise EmbedderMismatch(
                f"the store at {path} was built with embedder {got[0]!r} (dim {got[1]}); "
                f"this runtime uses {embedder_name!r} (dim {self.dim}). Configure the same embedder "
                "or use a new data folder."
            )
        if int(meta.get(SCHEMA_KEY, b"1")) < R.SCHEMA_VERSION:
            raise L2Outdated(f"the L2 table at {path} has record schema {int(meta.get(SCHEMA_KEY, b'1'))}, "
                             f"this runtime {R.SCHEMA_VERSION}: it is rebuilt from the ledger at connect")
        if replace_with is None:
            _check_files(self.table.to_lance(), os.path.join(path, f"{TABLE}.lance"))
        self._schema = R.memory_schema(self.dim)
        self._indexed = {i.columns[0] for i in self.table.list_indices()}
        self._deltas = 0  # delta index segments this handle added since its last merge
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lance-fts")
        self._futile = 0  # fragments when compact_small last found nothing to merge
        # rows a scope has had (``scopes`` counts them, ``apply`` adds; deletes are not taken off:
        # an upper bound, which only ever sends a search to the queries); unknown: not counted
        self._rows_of: dict[str, int] = {}
        self._ds = None  # the reads' Lance handle (``_reader``), opened on first use
        if replace_with is not None and replace_with.num_rows:
            self._ensure_indexes()

    @staticmethod
    def outdated(path: str) -> bool:
        """Whether an L2 table exists at ``path`` with an older record schema (it must be rebuilt)."""
        if not os.path.isdir(os.path.join(path, f"{TABLE}.lance")):
            return False
        meta = lancedb.connect(path).open_table(TABLE).schema.metadata or {}
        return int(meta.get(SCHEMA_KEY, b"1")) < R.SCHEMA_VERSION

    def maintain(self, deleted_fraction: float, small_fragments: int, small_rows: int, retention_s: float) -> dict:
        """After a sweep: compact where it pays (a fragment with at least ``deleted_fraction`` of
        its rows deleted, or at least ``small_fragments`` fragments under ``small_rows`` rows),
        then clean versions older than ``retention_s`` (rows deleted since are then unreadable
        in old versions too). Returns what was found and done."""
        from datetime import timedelta

        self.table.checkout_latest()
        ds = self.table.to_lance()
        frags = ds.get_fragments()
        worst, small = 0.0, 0
        for f in frags:
            physical = f.physical_rows
            deleted = f.num_deletions
            if physical:
                worst = max(worst, deleted / physical)
            if physical - deleted < small_rows:
                small += 1
        out = {"fragments": len(frags), "max_deleted_fraction": round(worst, 4), "small_fragments": small,
               "compacted": False, "versions_before": self._version_count()}
        if frags and (worst >= deleted_fraction or small >= small_fragments):
            t0 = time.perf_counter()
            try:
                metrics = self._compact(materialize_deletions=True)
                out.update(compacted=True, fragments_removed=getattr(metrics, "fragments_removed", None),
                           fragments_added=getattr(metrics, "fragments_added", None))
            except (RuntimeError, OSError) as exc:  # an optimisation: the next sweep compacts
                if "conflict" not in str(exc).lower():
                    raise
                out["compaction_deferred"] = "concurrent commits preempted it"
            out["compaction_seconds"] = round(time.perf_counter() - t0, 3)
            self.table.checkout_latest()
        stats = self.table.to_lance().cleanup_old_versions(older_than=timedelta(seconds=retention_s),
                                                           delete_unverified=retention_s <= 0)
        out["versions_removed"] = getattr(stats, "old_versions", None)
        out["bytes_removed"] = getattr(stats, "bytes_removed", None)
        self.table.checkout_latest()
        out["versions_after"] = self._version_count()
        return out

    def _version_count(self) -> int:
        """The table's versions, counted by their manifests: Lance's ``versions()`` reads every
        manifest (1.5 s for the two counts of a sweep at 1,300 versions)."""
        folder = os.path.join(self.path, f"{TABLE}.lance", "_versions")
        return sum(1 for f in os.listdir(folder) if f.endswith(".manifest"))

    def purge(self) -> dict:
        """Erasure down to the bytes: fragments with deleted rows are rewritten without them
        (a deleted row is otherwise still in its data file, masked), the full-text index is
        rebuilt (it holds the tokens of what was deleted), and every older version is removed
        (they still hold the rows), and so is every file no version refers to: a compaction
        whose commit lost a race leaves its rewritten fragments behind "for GC", and Lance
        keeps such files for 7 days (an erased row was found in one after a purge). Safe only
        with no write in flight: the caller holds every owner's flushes (``purge_l2``)."""
        from datetime import timedelta

        t0 = time.perf_counter()
        self.table.checkout_latest()
        metrics = self._compact(materialize_deletions=True, materialize_deletions_threshold=0.0)
        stats = self.table.to_lance().cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
        self.table.checkout_latest()
        return {"fragments_rewritten": getattr(metrics, "fragments_removed", 0),
                "versions_removed": getattr(stats, "old_versions", 0), "bytes_removed": getattr(stats, "bytes_removed", 0),
                "seconds": round(time.perf_counter() - t0, 3)}

    def _compact(self, **options):
        """Rewrite fragments without their deleted rows, then the full-text index from what is
        left (it holds the tokens of what was deleted). The other indexes are not remapped in
        place but through Lance's fragment-reuse map (``defer_index_remap``): remapping the
        full-text index of 600k memories with their own words took 65 s of a 67 s compaction,
        rebuilding it ~1 s."""
        with self._compacting(wait=True):
            metrics = self._retrying(lambda: self.table.to_lance().optimize.compact_files(
                defer_index_remap=True, **options))
            self.table.checkout_latest()
            if "search_text" in self._indexed:
                self._retrying(lambda: self.table.create_index("search_text", config=_fts(), replace=True))
                self.table.checkout_latest()
        return metrics

    def purge_old_versions(self) -> None:
        """Delete every version but the newest: rows deleted from the table (erased, evicted,
        replaced by a rebuild) stop being readable in old versions."""
        from datetime import timedelta

        self.table.checkout_latest()
        self.table.to_lance().cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)

    def _ensure_indexes(self) -> None:
        # Indexes are built once the table has rows; new rows are covered by reindex(). Several
        # owners share the table: whoever comes second finds the index there, which is fine.
        if {*SCALAR_INDEXES, "search_text"} <= self._indexed:
            return
        self.table.checkout_latest()
        self._indexed |= {i.columns[0] for i in self.table.list_indices()}
        todo = [(c, cfg()) for c, cfg in SCALAR_INDEXES.items() if c not in self._indexed]
        for col, cfg in todo:
            self._create(lambda: self.table.create_index(col, config=cfg, replace=False))
            self._indexed.add(col)
        if "search_text" not in self._indexed:
            self._create(lambda: self.table.create_index("search_text", config=_fts(), replace=False))
            self._indexed.add("search_text")

    def _create(self, make) -> None:
        try:
            self._retrying(make)
        except (RuntimeError, ValueError) as exc:
            if "already exists" not in str(exc):
                raise

    def _retrying(self, op, attempts: int = 5):
        """Run a Lance write, again after a retryable commit conflict (another owner committed
        first; nothing of ours was committed), after a short random pause that grows with each
        attempt: two owners retrying at once come apart. An "incompatible transaction" is one
        too: an append beside two owners' first creation of the table (an Overwrite of the empty
        table) was refused so, and goes through on the newest version."""
        for i in range(attempts):
            try:
                return op()
            except (RuntimeError, OSError) as exc:  # lance.commit.CommitConflictError is an OSError
                msg = str(exc).lower()
                retry = "commit conflict" in msg or "please retry" in msg or "incompatible transaction" in msg
                if not retry or i == attempts - 1:
                    raise
                time.sleep(random.uniform(0, 0.01 * (i + 1)))
                self.table.checkout_latest()

    def scopes(self) -> set[str]:
        """Every scope that has rows (one scan of the scope column). Their row counts are kept
        from here on, with the rows this handle appends (``_rows_of``)."""
        col = self.table.to_lance().to_table(columns=["scope"]).column("scope")
        counts = pa.compute.value_counts(col).to_pylist() if len(col) else []
        self._rows_of = {c["values"]: c["counts"] for c in counts}
        return set(self._rows_of)

    def ids_and_scopes(self) -> pa.Table:
        """(memory_id, scope) of every row: one narrow scan, for the check against the ledger.
        Raises ``L2FileDamaged`` first if a data file of the newest version is gone or cut short."""
        self.table.checkout_latest()
        ds = self.table.to_lance()
        _check_files(ds, os.path.join(self.path, f"{TABLE}.lance"))
        return ds.to_table(columns=["memory_id", "scope"])

    def governed_digests(self) -> pa.Table:
        """(memory_id, scope, digest) of every row, the digest ``records.governed_digest`` of
        its governed columns: for ``audit.verify``'s check against the ledger. Raises
        ``L2FileDamaged`` first if a data file of the newest version is gone or cut short."""
        self.table.checkout_latest()
        ds = self.table.to_lance()
        _check_files(ds, os.path.join(self.path, f"{TABLE}.lance"))
        return R.digests_of(_plain(ds.to_table(columns=list(R.GOVERNED))).to_pylist())

    def counts(self, now_us: int) -> dict:
        """Rows by status, by pool and by tenant, and the expiry distribution (days from now)."""
        self.table.checkout_latest()
        return table_counts(self.table.to_lance().to_table(columns=list(COUNTED)), now_us)

    def count(self) -> int:
        return self.table.count_rows()

    def apply(self, batch) -> None:
        """One outbox batch (``memactors.engine.outbox.Batch``): append new rows, upsert whole
        rows, update patched columns in place, delete erased and evicted rows. A few Lance
        commits per batch, never one per row."""
        if batch.new:
            ids = list(batch.new)
            tbl = R.to_arrow([batch.new[m] for m in ids], self._vectors(batch, ids), self.dim)
            self._retrying(lambda: self.table.add(tbl))
            self._count(tbl)
            try:
                self._ensure_indexes()
            except (RuntimeError, OSError, ValueError):  # indexes speed queries up; the next batch retries
                log.warning("index creation deferred", exc_info=True)
        if not (batch.rows or batch.patches or batch.deletes):
            return
        with self._compacting(wait=True, shared=True):  # rows rewritten: not beside a compaction
            if batch.rows:
                ids = list(batch.rows)
                tbl = R.to_arrow([batch.rows[m] for m in ids], self._vectors(batch, ids), self.dim)
                self._merged(tbl, lambda t: self.table.merge_insert("memory_id").when_matched_update_all()
                             .when_not_matched_insert_all().execute(t), ROW_MERGE_ROWS)
                self._count(tbl)  # some may be new here (a replay): counted again, never too few
            for cols, ids in column_groups(batch.patches):
                self._merge_columns(ids, {c: [batch.patches[m][c] for m in ids] for c in cols})
            if batch.deletes:
                self._delete(batch.deletes)

    def _count(self, tbl: pa.Table) -> None:
        for c in pa.compute.value_counts(tbl.column("scope")).to_pylist():
            self._rows_of[c["values"]] = self._rows_of.get(c["values"], 0) + c["counts"]

    def _delete(self, ids) -> None:
        """A batch's deletes in one commit, not one per row. A few ids: Lance's delete with them
        as an Arrow filter (its index finds them). Many (a sweep's evictions): the rows found by
        one scan of the id column and deleted by address (``_delete_scanned``), where Lance's
        filter of a long list cost 10x more: 65k ids of a 200k table 0.44-0.53 s against 0.06.
        Those are not sorted (a hash set finds them): sorting 650k ids twice was 0.6 s of a 1M
        sweep's L2 step."""
        ids = ids if isinstance(ids, (set, frozenset)) else set(ids)
        if len(ids) <= SCAN_DELETE_FROM:
            few = sorted(ids)  # one filter text for one set of ids
            self._retrying(lambda: self._on_dataset(lambda ds: ds.delete(F.ids_expr(few))))
            return
        want = pa.array(list(ids), pa.string())
        self._retrying(lambda: self._delete_scanned(want), DELETE_ATTEMPTS)
        self.table.checkout_latest()

    def _delete_scanned(self, want: pa.Array) -> None:
        """Delete the rows whose id is in ``want`` from the newest version: their addresses
        from one scan, a deletion file per fragment, one Delete commit read at the scanned
        version. Lance refuses the commit if a writer rewrote or deleted in those fragments
        since (a compaction, another owner's delete): the caller scans again. Appends in
        between leave the addresses valid and commit beside it."""
        from lance import LanceDataset, LanceOperation  # pylance: LanceDB's own engine, loaded with the table

        ds = self.table.to_lance()
        if ds.version != ds.latest_version:
            ds = ds.checkout_version(ds.latest_version)
        tbl = ds.to_table(columns=["memory_id"], with_row_address=True)
        addrs = pa.compute.filter(tbl.column("_rowaddr"), pa.compute.is_in(tbl.column("memory_id"), value_set=want))
        addrs = np.sort(addrs.to_numpy())
        if not len(addrs):
            return
        frags, offsets = addrs >> 32, addrs & 0xFFFFFFFF  # a row address: fragment id, then offset
        fids, starts = np.unique(frags, return_index=True)
        updated, removed = [], []
        for fid, part in zip(fids.tolist(), np.split(offsets, starts[1:])):
            meta = ds.get_fragment(fid).delete_rows(part.tolist())
            if meta is None:  # every row of the fragment gone
                removed.append(int(fid))
            else:
                updated.append(meta)
        LanceDataset.commit(ds.uri, LanceOperation.Delete(updated, removed, f"memory_id IN <{len(want)} ids>"),
                            read_version=ds.version)

    def _on_dataset(self, write) -> None:
        """A write through Lance's dataset API (what LanceDB's table does not offer), then the
        table handle moved to the version it made."""
        write(self.table.to_lance())
        self.table.checkout_latest()

    def _set_status(self, ids: list[str], status: str) -> None:
        """One status for many rows (a sweep's stale marks, superseded versions)."""
        if status not in R.STATUSES:
            raise InvalidRecord(f"unknown status {status!r}")
        self._merge_columns(ids, {"status": [status] * len(ids)})

    def _merge_columns(self, ids: list[str], values: dict[str, list]) -> None:
        """Set some columns of rows Lance holds (a status, a review flag, access counts): a merge
        on memory_id of those columns alone through Lance's dataset, in slices (``_merged``). A
        row gone meanwhile stays gone. Rows read and written whole (what this did for all but a
        status, lancedb 0.40 / pylance 14) cost 5-20x more: 5 / 50 / 500 review flags on a
        100,000-row table of 43 fragments written by a stream took 1.1-1.4 s whole, 0.05-0.4 s
        this way (0.07-0.6 s through LanceDB's table merge, which was the faster of the two on a
        compacted 1M table: 0.16-0.21 s for 20,000 rows against 0.1-4.6 s whole). During a write
        stream, a few review flags had cost a flush 0.2-0.7 s."""
        cols = {"memory_id": pa.array(ids, pa.string())}
        for c, vals in values.items():
            cols[c] = pa.array(vals, self._schema.field(c).type)
        self._merged(pa.table(cols), lambda t: self._on_dataset(
            lambda ds: ds.merge_insert("memory_id").when_matched_update_all().execute(t)))

    def _merged(self, tbl: pa.Table, op, rows: int | None = None) -> None:
        """A merge on memory_id in slices of ``rows`` (default ``MERGE_ROWS``): Lance hashes the
        whole source in a fixed 300 MB pool that cannot spill (a 1M sweep's 450k-id delete, when
        deletes were merges, failed there). Each slice is one commit; every merge here is idempotent, so
        a batch retried after a failed slice redoes the ones before it harmlessly."""
        rows = rows or MERGE_ROWS
        for start in range(0, tbl.num_rows, rows):
            self._retrying(lambda t=tbl.slice(start, rows): op(t))

    def _vectors(self, batch, ids: list[str]):
        import numpy as np

        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for i, m in enumerate(ids):
            v = batch.vectors.get(m)
            if v is not None:
                out[i] = v
        return out

    def prune_versions(self) -> None:
        """Versions older than LanceDB's default of 7 days removed (every 200th flush; the
        fragments appends leave are ``compact_small``'s)."""
        from datetime import timedelta

        self.table.checkout_latest()
        self.table.to_lance().cleanup_old_versions(older_than=timedelta(days=7))
        self.table.checkout_latest()

    def compact_small(self, fragments: int, rows: int) -> dict | None:
        """Compact once at least ``fragments`` fragments hold fewer than ``rows`` rows each (each
        flush appends one): a pre-filtered query pays per fragment (the 100k table of 29
        fragments a flush wrote answered the recall's queries in 22 ms at p95, compacted into
        4 in 14 ms). Fragments of ``rows`` or more are left as they are, so a row is rewritten
        a few times at most. Lance merges only fragments that the same index segments cover
        (those ``reindex`` has not merged yet stay apart): an attempt that merged nothing is not
        repeated before the next fragment. Indexes are remapped lazily (``_compact``). None
        when not due."""
        frags = self.table.to_lance().get_fragments()
        if sum(1 for f in frags if f.physical_rows < rows) < fragments or len(frags) == self._futile:
            return None
        with self._compacting(wait=False) as mine:
            if not mine:  # another owner compacts the table now: this one's next flush looks again
                return None
            metrics = self._retrying(lambda: self.table.to_lance().optimize.compact_files(
                target_rows_per_fragment=rows, defer_index_remap=True))
        self.table.checkout_latest()
        self._futile = 0 if metrics.fragments_removed else len(frags)
        return {"fragments_removed": metrics.fragments_removed, "fragments_added": metrics.fragments_added}

    @contextmanager
    def _compacting(self, wait: bool, shared: bool = False):
        """Yields whether this handle holds the table's compaction lock (``wait``: until it
        does): exclusive to compact, ``shared`` to change rows in place (updates, deletes). A
        compaction that overlaps another one, or an update or delete of rows it rewrites,
        conflicts at commit: the compaction's rewritten files are left behind for GC, and Lance
        warns on the process's stderr (the owners of one process, the process host, raced this
        way in a simulation). Appends do not conflict. A lock file's ``flock``: across the
        threads and the processes of a host. Where no lock can be had (a file system without
        ``flock``), it goes on unlocked: a lost race costs a compaction, never a row."""
        try:
            fd = os.open(os.path.join(self.path, COMPACT_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            fd = None
        try:
            try:
                if fd is not None:
                    fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            except OSError:  # ENOLCK and the like
                pass
            yield True
        finally:
            if fd is not None:
                os.close(fd)  # the lock goes with it

    def reindex(self) -> None:
        """Bring the indexes over rows appended since (unindexed rows are scanned by every
        pre-filtered query: 31 ms against 7 ms at 100k). The new rows become a delta segment of
        each index (0.05 s for 10k rows in a 1M table); every ``INDEX_DELTAS``-th time the
        segments are merged into one (1.0-1.2 s at 1M). Merging every time made a 1M build spend
        a third of its owners' time here; each segment adds ~3% to a cold query."""
        if self._indexed:
            merge = self._deltas + 1 >= INDEX_DELTAS
            self._retrying(lambda: self.table.to_lance().optimize.optimize_indices(
                num_indices_to_merge=4 * INDEX_DELTAS if merge else 0))  # more than there are: all of them
            self._deltas = 0 if merge else self._deltas + 1
            self.table.checkout_latest()

    def _reader(self):
        """The table at its newest version as a Lance dataset, for reads. LanceDB's query builder
        costs ~2 ms a query more (a round trip to its event loop at each step): 7.9 against 10.1
        ms for a scope's 100 rows, 6.6 against 8.8 for the vector query, 4.2 against 6.5 for
        the full-text one (RESULTS). One handle is kept for its caches; each read takes a new one
        at the newest version from it (27 us), so no handle is changed while another thread reads."""
        if self._ds is None:
            self._ds = self.table.to_lance(**self._cache)
        return self._ds.checkout_version(self._ds.latest_version)

    def _select(self, where: str, columns: list[str] | None = None) -> pa.Table:
        """The rows passing ``where`` (a ``filters`` pre-filter): every column, or ``columns``."""
        return self._reader().to_table(filter=where, columns=columns)

    def cache_bytes(self) -> int:
        """What Lance's caches of this store hold (both handles)."""
        return self.session.size_bytes + (self._ds.session().size_bytes() if self._ds is not None else 0)

    def load_scopes(self, scopes: list[str], statuses=("active", "stale", "pending")) -> tuple[list[dict], list]:
        """Every record of the scopes in the given statuses, and their vectors (for the hot index)."""
        where = f"{F.scope_in(scopes)} AND {F.status_in(statuses)}"
        return _rows(self._select(where))

    def entity_versions(self, scopes: list[str]) -> list[tuple[str, str, int, str, str]]:
        """(scope, entity key, version, memory id, sensitivity) of the superseded versions of
        these scopes' facts: a reloaded scope must not give their version numbers again. Narrow
        columns."""
        where = f"{F.scope_in(scopes)} AND status = 'superseded' AND entity_key IS NOT NULL"
        cols = ["scope", "entity_key", "version", "memory_id", "sensitivity"]
        tbl = self._select(where, cols)
        return list(zip(*(tbl.column(c).to_pylist() for c in cols)))

    def get(self, memory_ids: list[str]) -> tuple[list[dict], list]:
        """The rows of these memory ids and their vectors."""
        if not memory_ids:
            return [], []
        return _rows(self._select(F.ids_in(memory_ids)))

    def versions_of_many(self, facts: list[tuple[str, str]]) -> list[dict]:
        """Every row of these facts ((scope, entity key) pairs), whatever their status, in one
        query (a batch of erasures asks for many)."""
        if not facts:
            return []
        scopes = sorted({s for s, _ in facts})
        keys = ", ".join(F.quote(F.check_hex(k)) for k in sorted({k for _, k in facts}))
        rows = _rows(self._select(f"{F.scope_in(scopes)} AND entity_key IN ({keys})"))[0]
        want = set(facts)
        return [r for r in rows if (r["scope"], r["entity_key"]) in want]  # scopes x keys: only the pairs asked

    def rivals(self, scopes: list[str], entity_keys: list[str], now_us: int, *, extra: str | None = None,
               vector: np.ndarray | None = None) -> list[dict]:
        """Live rows of these scopes with one of these entity keys (conflict resolution needs
        every visible rival, cold scopes' too). ``extra``: a ``filters.visibility`` clause.
        ``vector``: a query's; each row then has its raw ``cosine``, computed from its stored
        vector read in the same query (a rival that wins its conflict is judged on its true
        relevance, as a hot one is)."""
        if not scopes or not entity_keys:
            return []
        keys = ", ".join(F.quote(F.check_hex(k)) for k in sorted(set(entity_keys)))
        where = f"{F.recall_filter(scopes, now_us)} AND entity_key IN ({keys})"
        if extra:
            where = f"{where} AND {extra}"
        if vector is None:
            return _rows(self._select(where, RECALL_COLUMNS))[0]
        rows, vecs = _rows(self._select(where, RECALL_COLUMNS + ["vector"]))
        if rows:
            for r, c in zip(rows, S.cosines(np.stack(vecs), np.asarray(vector, dtype=np.float32)).tolist()):
                r["cosine"] = c
        return rows

    def recent(self, where: str, k: int) -> list[dict]:
        """The ``k`` newest rows (by ``updated_at``) passing ``where`` (a ``filters`` pre-filter):
        a recall without a query lists by recency. Narrow columns first, whole rows for the k."""
        ids = self._select(where, ["memory_id", "updated_at"])
        if ids.num_rows == 0:
            return []
        top = ids.sort_by([("updated_at", "descending"), ("memory_id", "ascending")]).slice(0, k)
        rows = _rows(self._select(F.ids_in(top["memory_id"].to_pylist()), RECALL_COLUMNS))[0]
        return rows

    def search_whole(self, vector: np.ndarray, scopes: list[str], where: str) -> list[dict] | None:
        """Every row passing ``where`` (a ``filters`` pre-filter naming ``scopes``: the recall
        filter's, or narrower), each with its raw ``cosine``, best first, when those scopes hold
        at most ``SCAN_ROWS`` rows in all (else None): one scan, a superset of what
        ``hybrid_search``'s two queries would find."""
        if sum(self._rows_of.get(s, SCAN_ROWS + 1) for s in scopes) > SCAN_ROWS:
            return None
        q = np.asarray(vector, dtype=np.float32)
        rows, vecs = _rows(self._select(where, RECALL_COLUMNS + ["vector"]))
        if not rows:
            return []
        cos = S.cosines(np.stack(vecs), q)
        for r, c in zip(rows, cos.tolist()):
            r["cosine"] = c
        return [rows[i] for i in np.argsort(-cos, kind="stable")]

    def _fts(self, ds, terms: str, where: str, k: int) -> pa.Table:
        return ds.to_table(full_text_query={"query": terms, "columns": ["search_text"]}, filter=where, prefilter=True,
                           columns=RECALL_COLUMNS + ["vector"], limit=k, disable_scoring_autoprojection=True)

    def hybrid_search(self, vector: np.ndarray, terms: list[str], scopes: list[str], now_us: int,
                      k: int, *, where: str | None = None) -> list[dict]:
        """Candidates from the pre-filtered vector search and the pre-filtered full-text search
        over ``terms``, merged by memory id, each with its raw ``cosine`` (computed here from its
        stored vector, as the hot index does) and its ``search_text``: the caller computes the
        keyword share from it (Lance's own BM25 only picks the full-text side's candidates).
        ``where``: another pre-filter built by ``memactors.store.filters`` (default: the recall
        filter at now). Over scopes of at most ``SCAN_ROWS`` rows in all: every row it passes,
        best cosine first (``search_whole``)."""
        where = where or F.recall_filter(scopes, now_us)
        q = np.asarray(vector, dtype=np.float32)
        whole = self.search_whole(q, scopes, where)
        if whole is not None:
            return whole
        ds = self._reader()
        text = " ".join(dict.fromkeys(terms))
        # The full-text side runs beside the vector side (Lance releases the GIL). Flat: the
        # table has no vector index (a scope's rows are few once pre-filtered).
        fts_future = self._pool.submit(self._fts, ds, text, where, k) if text and "search_text" in self._indexed \
            else None
        vec_tbl = ds.to_table(nearest={"column": "vector", "q": q, "k": k, "metric": "cosine"}, filter=where,
                              prefilter=True, columns=RECALL_COLUMNS + ["vector"], disable_scoring_autoprojection=True)
        out = {}
        for tbl in [vec_tbl] + ([fts_future.result()] if fts_future is not None else []):
            rows, vecs = _rows(tbl)
            cos = S.cosines(np.stack(vecs), q).tolist() if rows else []
            for r, c in zip(rows, cos):
                if r["memory_id"] not in out:
                    r["cosine"] = c
                    out[r["memory_id"]] = r
        return list(out.values())


def _fts() -> FTS:
    return FTS(**P.FTS_PARAMS)


def _rows(tbl: pa.Table) -> tuple[list[dict], list]:
    """Rows as record dicts (integer microsecond times) and their vectors beside them."""
    vecs = []
    if "vector" in tbl.column_names:
        if tbl.num_rows:
            vecs = list(tbl.column("vector").combine_chunks().flatten().to_numpy().reshape(tbl.num_rows, -1))
        tbl = tbl.drop_columns(["vector"])
    rows = _plain(tbl).to_pylist()
    if "session" in tbl.column_names and tbl.column("session").null_count < tbl.num_rows:
        for r in rows:
            r["session"] = R.session_of(r["session"])
    return rows, vecs


def _plain(tbl: pa.Table) -> pa.Table:
    # The rest of the code speaks integer microseconds, the storage type of the timestamps. A
    # float32 column (confidence, importance, TTL days) is read as the shortest decimal it holds
    # (0.8, not 0.800000011920929): what the hot state has of a value written as 0.8, so a
    # record reads the same from memory and from Lance, and a TTL restarted after a reopen
    # ends when it would have before.
    for i, f in enumerate(tbl.schema):
        if pa.types.is_timestamp(f.type):
            tbl = tbl.set_column(i, f.name, tbl.column(i).cast(pa.int64()))
        elif pa.types.is_float32(f.type):
            tbl = tbl.set_column(i, f.name, tbl.column(i).cast(pa.string()).cast(pa.float64()))
    return tbl
