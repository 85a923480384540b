"""The memory record (DESIGN section 3): one Arrow schema from which storage, JSON and the API derive.

In memory a record is a plain dict keyed by the schema's field names (cheap to build, batch and
ship between actors); ``to_arrow`` and ``to_json`` are the two ways out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import unicodedata
from dataclasses import dataclass, field

import orjson
import pyarrow as pa

from .errors import InvalidRecord
from .scopes import Scope, check_identifier, parse_scope

# 2: category, TTL policy, provenance, entity key, citation count and review flag; vectors
# travel beside records, never inside them. An L2 table of an older version is rebuilt from
# the ledger when opened.
SCHEMA_VERSION = 2
TS = pa.timestamp("us", tz="UTC")

SOURCE_CONFIDENCE = {
    "user_stated": 1.0,
    "config_change": 0.9,
    "task_outcome": 0.8,
    "tool": 0.7,
    "agent_inferred": 0.6,
    "pattern": 0.4,
    "web": 0.3,
    "document": 0.3,
}
UNTRUSTED_SOURCES = frozenset({"web", "document", "tool"})
SENSITIVITIES = ("public", "internal", "confidential", "restricted")
POOLS = ("working", "vault")
STATUSES = ("pending", "active", "superseded", "stale", "evicted", "tombstoned")
LIVE = ("active", "stale")  # recalled (stale at half score), and the current version of an entity
GONE = ("evicted", "tombstoned")  # no L2 row, no hot entry, never recalled

# The one description of the record (DESIGN section 3). Each field: name, Arrow type,
# nullable, roles. Roles: "hit" (shown in a recall hit), "scan" (free text the write gate
# scans besides the text itself). The schema, the hit fields, the scanned fields and the
# snapshot kept in the ledger all derive from this table. "vector" lives beside a record.
_FIELDS = (
    ("memory_id", pa.string(), False, "hit"),
    ("scope", pa.string(), False, "hit"),
    ("subject", pa.string(), True, "hit scan"),
    ("predicate", pa.string(), True, "hit scan"),
    ("object", pa.string(), True, "hit scan"),
    ("content", pa.string(), False, "hit"),
    ("source_kind", pa.string(), False, "hit"),
    ("source_id", pa.string(), True, "scan"),
    ("confidence", pa.float32(), False, "hit"),
    ("sensitivity", pa.string(), False, ""),
    ("category", pa.string(), False, "hit"),
    ("pool", pa.string(), False, "hit"),
    ("status", pa.string(), False, "hit"),
    ("version", pa.int32(), False, "hit"),
    ("supersedes", pa.string(), True, "hit"),
    ("derived_from", pa.list_(pa.string()), True, ""),  # provenance: ids this memory was made from
    ("entity_key", pa.string(), True, ""),  # digest of (subject, predicate): a filter-safe key
    ("content_hash", pa.string(), False, ""),
    ("vector", None, True, ""),  # a fixed-size list of the embedder's dimension
    ("importance", pa.float32(), False, "hit"),
    ("created_at", TS, False, "hit"),
    ("updated_at", TS, False, "hit"),
    ("last_accessed_at", TS, True, ""),
    ("retrieved_count", pa.int32(), False, ""),
    ("cited_count", pa.int32(), False, ""),
    ("soft_ttl_days", pa.float32(), True, ""),  # the TTL policy, kept so a refresh restarts it
    ("hard_ttl_days", pa.float32(), True, ""),  # and a new version inherits it
    ("soft_expires_at", TS, True, ""),
    ("hard_expires_at", TS, True, ""),
    ("review", pa.string(), True, "hit"),  # e.g. "contradiction": waiting for a reviewer, flagged at recall
    # Derived, for keyword search: tokens of the content as stored (words, CJK bigrams), plus
    # those of retrieval context from the write's session (e.g. the turn before).
    ("search_text", pa.string(), True, ""),
)


def memory_schema(dim: int) -> pa.Schema:
    """The memory record. ``dim`` is the embedder's dimension."""
    return pa.schema(
        [pa.field(name, typ if typ is not None else pa.list_(pa.float32(), dim), nullable=nullable)
         for name, typ, nullable, _ in _FIELDS],
        metadata={b"memactors.schema_version": str(SCHEMA_VERSION).encode()},
    )


FIELDS: tuple[str, ...] = tuple(f[0] for f in _FIELDS)
# A record in memory and in the ledger: everything but the vector.
PUBLIC_FIELDS: tuple[str, ...] = tuple(f for f in FIELDS if f != "vector")
HIT_FIELDS: tuple[str, ...] = tuple(f[0] for f in _FIELDS if "hit" in f[3].split())
SCANNED_FIELDS: tuple[str, ...] = tuple(f[0] for f in _FIELDS if "scan" in f[3].split())
_DEFAULTS = {"category": "default", "pool": "vault", "status": "active", "sensitivity": "internal",
             "retrieved_count": 0, "cited_count": 0, "importance": 0.5, "confidence": 1.0, "version": 1}


def complete(rec: dict) -> dict:
    """A record with every public field: one from an older ledger gets today's defaults."""
    if len(rec) == len(PUBLIC_FIELDS) and "vector" not in rec:
        return rec
    out = {k: rec.get(k, _DEFAULTS.get(k)) for k in PUBLIC_FIELDS}
    if out["entity_key"] is None and out["subject"] is not None:
        out["entity_key"] = entity_key(out["subject"], out["predicate"])
    return out


def to_arrow(records: list[dict], vectors, dim: int) -> pa.Table:
    """Records and their vectors (a (n, dim) array, or None for zeros) to one Arrow table of
    the memory schema."""
    import numpy as np  # local: the vector column is built in one piece, not row by row

    schema = memory_schema(dim)
    body = pa.Table.from_pylist([complete(r) for r in records],
                                schema=schema.remove(schema.get_field_index("vector")))
    flat = np.zeros((len(records), dim), dtype=np.float32) if vectors is None else np.asarray(vectors, np.float32)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1)), dim)
    return body.add_column(schema.get_field_index("vector"), schema.field("vector"), vec).replace_schema_metadata(
        schema.metadata
    )


def to_json(record: dict) -> bytes:
    return orjson.dumps(complete(record))


def new_memory_id(tag: str | None = None) -> str:
    return new_memory_ids([tag])[0]


def new_memory_ids(tags: list[str | None]) -> list[str]:
    """Fresh memory ids, 32 lowercase hex characters: a tag (8 hex characters naming the tenant,
    so the id says which owner holds it) then random ones (one read of the OS's randomness)."""
    rnd = os.urandom(16 * len(tags)).hex()
    return [(t + rnd[32 * i + 8:32 * i + 32]) if t else rnd[32 * i:32 * i + 32] for i, t in enumerate(tags)]


_MEMORY_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)


def check_memory_id(value: object) -> str:
    if not isinstance(value, str) or not _MEMORY_ID.fullmatch(value):
        raise InvalidRecord("memory_id must be 32 lowercase hex characters")
    return value


_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?。，；：！？、\"'`~-_()[]{}<>「」『』（）【】"


def normalise(text: str) -> str:
    """The form content is deduplicated on: NFKC, case-folded, white space collapsed."""
    t = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", t).strip(_EDGE_PUNCT)


def content_hash(text: str) -> str:
    # Computed only on text as stored (after the gate), never on blocked input.
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def entity_key(subject: str | None, predicate: str | None) -> str | None:
    """The (subject, predicate) key of an entity memory, normalised, as 32 hex characters:
    the same for "Alice"/"alice ", and safe to put in a storage filter."""
    if subject is None:
        return None
    return hashlib.sha256(f"{normalise(subject)}\x1f{normalise(predicate or '')}".encode()).hexdigest()[:32]


MAX_CONTENT_CHARS = 32_000
MAX_DERIVED_FROM = 256


@dataclass(slots=True)
class WriteRequest:
    """A write as the API takes it, validated at the door."""

    scope: str
    text: str
    actor: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    source: str = "user_stated"
    source_id: str | None = None
    confidence: float | None = None
    sensitivity: str = "internal"
    ttl_days: float | None = None
    soft_ttl_days: float | None = None
    importance: float = 0.5
    pool: str = "vault"
    idempotency_key: str | None = None
    context: str | None = None  # retrieval context (e.g. the previous turn): indexed, never shown
    category: str = "default"  # picks the TTL policy ([lifecycle]); e.g. preference, task_learning
    derived_from: list[str] | None = None  # ids of the memories this one was made from (provenance)

    def validate(self) -> WriteRequest:
        self.scope = str(parse_scope(self.scope))
        check_identifier(self.actor, "actor")
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidRecord("text must be a non-empty string")
        if len(self.text) > MAX_CONTENT_CHARS:
            raise InvalidRecord(f"text is longer than {MAX_CONTENT_CHARS} characters")
        if (self.subject is None) != (self.predicate is None):
            raise InvalidRecord("subject and predicate go together: give both or neither")
        for name in ("subject", "predicate", "object", "source_id"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v.strip() or len(v) > 512):
                raise InvalidRecord(f"{name} must be a non-empty string of at most 512 characters")
        if self.source not in SOURCE_CONFIDENCE:
            raise InvalidRecord(f"source must be one of {sorted(SOURCE_CONFIDENCE)}")
        if self.confidence is None:
            self.confidence = SOURCE_CONFIDENCE[self.source]
        if not isinstance(self.confidence, (int, float)) or not 0.0 <= float(self.confidence) <= 1.0:
            raise InvalidRecord("confidence must be a number between 0 and 1")
        self.confidence = float(self.confidence)
        if self.sensitivity not in SENSITIVITIES:
            raise InvalidRecord(f"sensitivity must be one of {list(SENSITIVITIES)}")
        if self.pool not in POOLS:
            raise InvalidRecord(f"pool must be one of {list(POOLS)}")
        for name in ("ttl_days", "soft_ttl_days"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, float)) or not 0 < float(v) <= 36_500):
                raise InvalidRecord(f"{name} must be a positive number of days (at most 36500)")
        if not isinstance(self.importance, (int, float)) or not 0.0 <= float(self.importance) <= 1.0:
            raise InvalidRecord("importance must be a number between 0 and 1")
        if self.idempotency_key is not None:
            check_identifier(self.idempotency_key, "idempotency_key")
        if self.context is not None and (not isinstance(self.context, str) or len(self.context) > MAX_CONTENT_CHARS):
            raise InvalidRecord(f"context must be a string of at most {MAX_CONTENT_CHARS} characters")
        check_identifier(self.category, "category")
        if self.derived_from is not None:
            if isinstance(self.derived_from, str) or not isinstance(self.derived_from, (list, tuple)) \
                    or len(self.derived_from) > MAX_DERIVED_FROM:
                raise InvalidRecord(f"derived_from must be a list of at most {MAX_DERIVED_FROM} memory ids")
            self.derived_from = sorted({check_memory_id(m) for m in self.derived_from})
        return self

    @property
    def scope_obj(self) -> Scope:
        return parse_scope(self.scope)


# Decisions a write can come back with.
ACCEPTED = "accepted"
REDACTED = "redacted"  # accepted after the gate replaced matched spans with placeholders
BLOCKED = "blocked"
PENDING = "pending"
WORKING_ONLY = "working_only"
REFRESHED = "refreshed"
SUPERSEDED_PREVIOUS = "superseded_previous"
KEPT_AS_SUPERSEDED = "kept_as_superseded"


@dataclass(slots=True)
class WriteResult:
    decision: str
    memory_id: str | None
    version: int | None
    scope: str
    status: str | None = None
    supersedes: str | None = None
    gate: dict = field(default_factory=dict)  # rule ids and spans only, never matched values

    def to_dict(self) -> dict:
        return {
            "decision": self.decision,
            "memory_id": self.memory_id,
            "version": self.version,
            "scope": self.scope,
            "status": self.status,
            "supersedes": self.supersedes,
            "gate": self.gate,
        }


def build_record(req: WriteRequest, text: str, memory_id: str, now_us: int, *, status: str = "active",
                 content_hash_: str | None = None, search_text: str | None = None) -> dict:
    """A new record for a validated write whose text (and other fields) passed the gate:
    ``text`` and the fields of ``req`` are as stored. ``content_hash_`` and ``search_text``
    come precomputed from the prepare stage, or are derived here."""
    from .scoring import tokenize  # the one tokenizer of the keyword side, hot and cold

    day = 86_400_000_000
    soft, hard = req.soft_ttl_days, req.ttl_days
    return {
        "memory_id": memory_id,
        "scope": req.scope,
        "subject": req.subject,
        "predicate": req.predicate,
        "object": req.object,
        "content": text,
        "source_kind": req.source,
        "source_id": req.source_id,
        "confidence": req.confidence,
        "sensitivity": req.sensitivity,
        "category": req.category,
        "pool": req.pool,
        "status": status,
        "version": 1,
        "supersedes": None,
        "derived_from": req.derived_from,
        "entity_key": entity_key(req.subject, req.predicate),
        "content_hash": content_hash_ or content_hash(text),
        "importance": req.importance,
        "created_at": now_us,
        "updated_at": now_us,
        "last_accessed_at": None,
        "retrieved_count": 0,
        "cited_count": 0,
        "soft_ttl_days": soft,
        "hard_ttl_days": hard,
        "soft_expires_at": now_us + int(soft * day) if soft else None,
        "hard_expires_at": now_us + int(hard * day) if hard else None,
        "review": None,
        "search_text": search_text if search_text is not None else " ".join(tokenize(text)),
    }


def write_request(item: dict | WriteRequest) -> WriteRequest:
    """A WriteRequest from a dict of write() keyword arguments, validated."""
    if isinstance(item, WriteRequest):
        return item.validate()
    if not isinstance(item, dict):
        raise InvalidRecord("each write must be a dict of write() arguments")
    known = set(WriteRequest.__dataclass_fields__)
    unknown = set(item) - known
    if unknown:
        raise InvalidRecord(f"unknown write field(s): {sorted(unknown)}")
    missing = {"scope", "text", "actor"} - set(item)
    if missing:
        raise InvalidRecord(f"missing write field(s): {sorted(missing)}")
    return WriteRequest(**item).validate()


def fingerprint(req: WriteRequest, key: bytes) -> bytes:
    """A keyed digest of everything a write asks for but its idempotency key: a retry carries
    the same one; a reused key with another write does not. Keyed, so it reveals nothing of
    the text (a bare hash of a short text with a phone number could be brute-forced)."""
    body = orjson.dumps([getattr(req, k) for k in WriteRequest.__dataclass_fields__ if k != "idempotency_key"])
    return hmac.digest(key, body, "sha256")


def request_fields(req: WriteRequest) -> dict:
    return {k: getattr(req, k) for k in WriteRequest.__dataclass_fields__}


@dataclass(slots=True)
class RecallRequest:
    """A recall (DESIGN section 5): who asks, for which task and purpose, over which scopes."""

    query: str
    actor: str
    task_id: str
    allowed_scopes: list[str]
    purpose: str
    top_k: int = 5
    token_budget: int | None = None

    def validate(self) -> RecallRequest:
        check_identifier(self.actor, "actor")
        check_identifier(self.task_id, "task_id")
        check_identifier(self.purpose, "purpose")
        if not isinstance(self.query, str) or not self.query.strip():
            raise InvalidRecord("query must be a non-empty string")
        if len(self.query) > MAX_CONTENT_CHARS:
            raise InvalidRecord(f"query is longer than {MAX_CONTENT_CHARS} characters")
        if not self.allowed_scopes or isinstance(self.allowed_scopes, str):
            raise InvalidRecord("allowed_scopes is required: a list of scopes this recall may read")
        self.allowed_scopes = [str(parse_scope(s)) for s in self.allowed_scopes]
        if not isinstance(self.top_k, int) or not 1 <= self.top_k <= 1000:
            raise InvalidRecord("top_k must be an integer from 1 to 1000")
        if self.token_budget is not None and (not isinstance(self.token_budget, int) or self.token_budget < 1):
            raise InvalidRecord("token_budget must be a positive integer")
        return self
