"""The memory record (DESIGN section 3): one Arrow schema from which storage, JSON and the API derive.

In memory a record is a plain dict keyed by the schema's field names (cheap to build, batch and
ship between actors); ``to_arrow`` and ``to_json`` are the two ways out.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import operator
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter

import orjson
import pyarrow as pa

from . import validate as V
from .errors import InvalidRecord, ValidationError
from .idempotency import is_made_key
from .randoms import random_bytes
from .scopes import Scope, check_identifier, parse_scope

# 2: category, TTL policy, provenance, entity key, citation count and review flag; vectors
# travel beside records, never inside them. 3: the runtime's own provenance (copy_of,
# context_of) beside the caller's claim (derived_from). 4: the session a working item belongs
# to. An L2 table of an older version is rebuilt from the ledger when opened (a record from an
# older ledger gets the new fields' defaults: ``complete``). 5: the text a memory's vector is
# of when it is not its content (``embed_text``, e.g. a LangGraph item's indexed field). 6: the
# session as JSON text in L2, no longer a struct column (``SESSION``).
SCHEMA_VERSION = 6
TS = pa.timestamp("us", tz="UTC")
# The session a working item belongs to, set by the runtime for a session's own items (never
# from a caller's write): which session (a runtime-made id), its task and actor, and the item's
# place in L0 (turn, slot, index in the slot, critical). None for every other record.
SESSION_SLOTS = ("goal", "plan", "step", "constraint", "observation", "reasoning", "scratchpad")
SESSION = pa.struct([("id", pa.string()), ("task", pa.string()), ("actor", pa.string()), ("turn", pa.int32()),
                     ("slot", pa.string()), ("n", pa.int32()), ("critical", pa.bool_())])

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
_SOURCES = tuple(SOURCE_CONFIDENCE)
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
    ("derived_from", pa.list_(pa.string()), True, ""),  # provenance the caller claims: ids it was made from
    # Provenance the runtime recorded itself, never taken from a caller (erasure follows it,
    # across scopes and owners): ids whose text this record is a copy of (a promotion, a
    # demotion), and ids whose text its retrieval context carried (their words are indexed here).
    ("copy_of", pa.list_(pa.string()), True, ""),
    ("context_of", pa.list_(pa.string()), True, ""),
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
    ("session", pa.string(), True, ""),  # a session's own working item: its session and place in L0 (JSON)
    # Derived, for keyword search: tokens of the content as stored (words, CJK bigrams), plus
    # those of retrieval context from the write's session (e.g. the turn before).
    ("search_text", pa.string(), True, ""),
    # The text the vector is made from when it is not the content (as the gate left it): kept so
    # that a rebuild or a revival embeds the same text. None: the content.
    ("embed_text", pa.string(), True, ""),
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


def fill_columns(cols: dict, n: int, dim: int) -> pa.Table:
    """A table of the memory schema from the columns given, every other field at its default
    (or null): for bulk generation, where records are too many to build one by one."""
    schema = memory_schema(dim)
    out = {}
    for f in schema:
        if f.name in cols:
            out[f.name] = cols[f.name]
        elif f.name in _DEFAULTS and not f.nullable:
            out[f.name] = pa.array([_DEFAULTS[f.name]] * n, f.type)
        else:
            out[f.name] = pa.nulls(n, f.type)
    return pa.table(out, schema=schema)


# The fields of an L2 row that only the ledger's events set (what a memory says, where, how
# sensitive, its status and version): ``audit.verify`` compares their digest in each L2 row with
# the ledger's own fold of the record, so a row edited in Lance's files is found.
GOVERNED = ("memory_id", "scope", "subject", "predicate", "object", "content", "source_kind", "sensitivity",
            "category", "pool", "status", "version", "supersedes", "entity_key", "content_hash", "review")
_GOVERNED = itemgetter(*GOVERNED)
DIGESTS = pa.schema([("memory_id", pa.string()), ("scope", pa.string()), ("digest", pa.binary())])


def governed_digest(rec: dict) -> bytes:
    """A record's (or an L2 row's: both carry every field) governed fields, digested."""
    return hashlib.blake2b(orjson.dumps(_GOVERNED(rec)), digest_size=16).digest()


def digests_of(rows: list[dict]) -> pa.Table:
    """(memory_id, scope, digest) of records or L2 rows (``DIGESTS``)."""
    return pa.table({"memory_id": [r["memory_id"] for r in rows], "scope": [r["scope"] for r in rows],
                     "digest": [governed_digest(r) for r in rows]}, schema=DIGESTS)


def upgraded(tbl: pa.Table, dim: int) -> pa.Table:
    """An L2 table of an older record schema (a backup's) in this one: the session as JSON text
    (schema 6), the fields it predates at their defaults (or null)."""
    cols = {}
    for f in memory_schema(dim):
        if f.name in tbl.column_names:
            col = tbl.column(f.name)
            if f.name == "session" and pa.types.is_struct(col.type):
                col = pa.array([None if v is None else orjson.dumps(v).decode() for v in col.to_pylist()], pa.string())
            cols[f.name] = col
    return fill_columns(cols, tbl.num_rows, dim)


def to_arrow(records: list[dict], vectors, dim: int) -> pa.Table:
    """Records and their vectors (a (n, dim) array, or None for zeros) to one Arrow table of
    the memory schema."""
    import numpy as np  # local: the vector column is built in one piece, not row by row

    schema = memory_schema(dim)
    flat = np.zeros((len(records), dim), dtype=np.float32) if vectors is None else np.asarray(vectors, np.float32)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1)), dim)
    # Each record read once, all its fields at a time, then the columns made: 2x faster than
    # a pass over the records per column (from_pylist's way) once they are many and scattered
    # in memory (a rebuild's folded records: 50,000 in 0.3 s instead of 0.7).
    columns = list(zip(*map(_ROW, map(complete, records)))) if records else [[] for _ in _BODY]
    columns[_SESSION_AT] = [None if v is None else orjson.dumps(v).decode() for v in columns[_SESSION_AT]]
    arrays = [pa.array(list(c), schema.field(n).type) for n, c in zip(_BODY, columns)]
    arrays.insert(schema.get_field_index("vector"), vec)
    return pa.Table.from_arrays(arrays, schema=schema)


_BODY = tuple(f for f in FIELDS if f != "vector")
_ROW = itemgetter(*_BODY)
_SESSION_AT = _BODY.index("session")


def session_of(stored: str | None) -> dict | None:
    """A record's session as L2 stores it (``to_arrow``) back as the record has it."""
    return None if stored is None else orjson.loads(stored)


def to_json(record: dict) -> bytes:
    return orjson.dumps(complete(record))


def new_memory_id(tag: str | None = None) -> str:
    return new_memory_ids([tag])[0]


def new_memory_ids(tags: list[str | None]) -> list[str]:
    """Fresh memory ids, 32 lowercase hex characters: a tag (8 hex characters naming the tenant,
    so the id says which owner holds it) then random ones (``core.randoms``)."""
    rnd = random_bytes(16 * len(tags)).hex()
    return [(t + rnd[32 * i + 8:32 * i + 32]) if t else rnd[32 * i:32 * i + 32] for i, t in enumerate(tags)]


def check_memory_id(value: object) -> str:
    return V.hex_id(value, "memory_id")


_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?。，；：！？、\"'`~-_()[]{}<>「」『』（）【】"


# Characters that show nothing (zero-width, soft hyphen, word joiner, byte-order mark, bidi
# marks) are not part of what a text says; the minus sign (U+2212) is "-" (NFKC keeps it).
_UNSEEN = {cp: None for cp in (0x00AD, 0x034F, 0x061C, 0x180E, *range(0x200B, 0x2010), *range(0x202A, 0x202F),
                               *range(0x2060, 0x2065), *range(0x2066, 0x2070), 0xFEFF)}
_UNSEEN[0x2212] = "-"


def normalise(text: str) -> str:
    """The form content is deduplicated on: NFKC, case-folded, white space collapsed, edge
    punctuation dropped, but for the minus sign of a leading number ("-5 degrees" is not "5
    degrees": one was refreshed by the other, the new value lost); characters that show
    nothing dropped ("ali\u200bce" is "alice")."""
    return _edged(_folded(text))


def _folded(text: str) -> str:
    """NFKC, case-folded, white space collapsed, unseen characters dropped (``normalise`` but
    its edges): per character, so a span of the folded text is the folded span."""
    if not text.isascii():
        text = text.translate(_UNSEEN)
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold())


def _edged(t: str) -> str:
    """A folded text's edge punctuation dropped (``normalise``'s last step)."""
    out = t.strip(_EDGE_PUNCT)
    if out[:1].isdigit() and t[:len(t) - len(t.lstrip(_EDGE_PUNCT))].endswith("-"):
        return "-" + out
    return out or t.strip()  # punctuation only: itself ("..." is not "!!!")


def content_hash(text: str) -> str:
    # Computed only on text as stored (after the gate), never on blocked input. "surrogatepass":
    # defined for every str (validation refuses lone surrogates; a hash must not crash on one),
    # and the same bytes as plain UTF-8 for every other text.
    return hashlib.sha256(normalise(text).encode("utf-8", "surrogatepass")).hexdigest()


_PIECE = re.compile(r"[\n\r]+|(?<=[.!?;\u3002\uff01\uff1f\uff1b])\s*")
# Where a text another memory's text sits in may start or end: line and sentence ends, clause
# marks, quotes and brackets ("From her diary: <text>, she said", 'She wrote "<text>"').
_CUT = re.compile(r"[\n\r]+|[.!?;:,\u3002\uff01\uff1f\uff1b\uff1a\uff0c\u3001\"\u201c\u201d\u201e\u00ab\u00bb\u300c\u300d()\[\]{}]"
                  r"|\s[-\u2013\u2014]\s")
_SPAN_MARKS = 4  # a span runs over at most this many cut marks (a text with commas of its own)
_MAX_SPANS = 256  # a bound on the spans one context is cut into (a long context: its first ones)
_SPAN_MIN_WORDS = 5  # words of a piece other than the whole context (fewer: a common phrase)


def piece_hashes(text: str) -> list[str]:
    """Content hashes of a text and of each span of it between two cut marks (line and
    sentence ends, clause marks, quotes, brackets; ``_CUT``): what a memory whose text a
    retrieval context carries, alone or inside a sentence, quoted or not, would hash to
    (``context_of``: erasing that memory erases the one whose context carried its words).
    The text is folded once; each span then only loses its edges (``content_hash``'s form)."""
    t = _folded(text)
    marks = list(_CUT.finditer(t))
    starts = [0, *(m.end() for m in marks)]
    ends = [*(m.start() for m in marks), len(t)]
    # Each line and sentence (however long the text), clause and quotation of a few words at
    # least: "Ok", "Thanks!" or "Paris" as a sentence or inside one is no other memory's text
    # carried (erasing a chat item "Thanks!" took the booking whose context began with it).
    spans = {p for p in _PIECE.split(t) if len(p.split()) >= _SPAN_MIN_WORDS}
    spans.add(t)  # the whole context, whatever its length
    budget = _MAX_SPANS
    for a, i in enumerate(starts):
        if budget <= 0:
            break
        spans.update(p for j in ends[a:a + _SPAN_MARKS + 1] if len((p := t[i:j]).split()) >= _SPAN_MIN_WORDS)
        budget -= _SPAN_MARKS + 1
    out = set()
    for p in spans:
        n = _edged(p)
        if n and n.strip(_EDGE_PUNCT):
            out.add(hashlib.sha256(n.encode("utf-8", "surrogatepass")).hexdigest())
    return sorted(out)


def entity_key(subject: str | None, predicate: str | None) -> str | None:
    """The (subject, predicate) key of an entity memory, normalised, as 32 hex characters:
    the same for "Alice"/"alice ", and safe to put in a storage filter."""
    if subject is None:
        return None
    if type(subject) is str and type(predicate) in (str, type(None)):
        return _entity_key(subject, predicate)
    return _entity_key.__wrapped__(subject, predicate)


@lru_cache(maxsize=65536)
def _entity_key(subject: str, predicate: str | None) -> str:
    # Cached by the exact strings (a pure function of them): promotion keys every item of a
    # session's history by its fact each turn, and a tenant's facts repeat few subjects.
    return hashlib.sha256(f"{normalise(subject)}\x1f{normalise(predicate or '')}".encode()).hexdigest()[:32]


MAX_CONTENT_CHARS = 32_000
NEVER = "never"  # a TTL that never runs out (per write: ttl_days="never")
MAX_DERIVED_FROM = 256
MAX_FIELD_CHARS = 512  # subject, predicate, object, source_id
MAX_TTL_DAYS = 36_500
MAX_TOP_K = 1_000
MAX_TOKEN_BUDGET = 10_000_000  # far beyond any model's window: a larger one is a mistake
MAX_ALLOWED_SCOPES = 1_000


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
    ttl_days: float | str | None = None  # hard TTL in days; "never"; None: the category's
    soft_ttl_days: float | str | None = None  # soft TTL in days; "never"; None: the category's
    importance: float = 0.5
    pool: str = "vault"
    idempotency_key: str | None = None
    context: str | None = None  # retrieval context (e.g. the previous turn): indexed, never shown
    category: str = "default"  # picks the TTL policy ([lifecycle]); e.g. preference, task_learning
    derived_from: list[str] | None = None  # ids of the memories this one was made from (provenance)
    session: dict | None = None  # set by the runtime's sessions only (``write_request`` refuses it)
    replaces: str | None = None  # an update: the live vault memory of this scope this write is the next version of
    embed_text: str | None = None  # the text its vector is made from (default: the text); gated like it, never shown
    copy_of: list[str] | None = None  # set by the runtime's sessions only: the items whose text this one copies

    # Its routing (see ``memactors.core.ops.Routing``): it names its scope, needs a write grant
    # there, and goes through the prepare stage (gate, derive, embed) before it is decided.
    ADDRESS, CHECK, SYSTEM, BULK, GATHER = "scope", "write", False, False, frozenset({"prepared", "view"})

    @property
    def key(self) -> str | None:
        """The key the ledger and the owners know this write by: a caller's key within its
        actor's own ("actor/key": ids hold no "/"), so that one actor's keys never answer or
        block another's writes; a key the runtime made (unique already) as it is."""
        k = self.idempotency_key
        return k if k is None or is_made_key(k) else f"{self.actor}/{k}"

    @property
    def author(self) -> str:
        return self.actor

    def validate(self) -> WriteRequest:
        """Check every field (types, ranges, text without lone surrogates); fill the default
        confidence of the source. Returns self; raises a ValidationError subclass."""
        # A field left None (most of them, most writes) passes each allow_none check as it is: not
        # asked at all (a write is validated at the door of every call: ~20k a simulated run).
        s = self.scope
        self.scope = _canonical(s) if type(s) is str else str(parse_scope(s))
        check_identifier(self.actor, "actor")
        V.text(self.text, "text", MAX_CONTENT_CHARS)
        for name in SCANNED_FIELDS:
            if (v := getattr(self, name)) is not None:
                V.text(v, name, MAX_FIELD_CHARS)
        if (self.subject is None) != (self.predicate is None):
            raise InvalidRecord("subject and predicate go together: give both or neither")
        self.source = V.choice(self.source, "source", _SOURCES)
        if self.confidence is None:
            self.confidence = SOURCE_CONFIDENCE[self.source]
        self.confidence = V.number(self.confidence, "confidence", 0.0, 1.0)
        self.sensitivity = V.choice(self.sensitivity, "sensitivity", SENSITIVITIES)
        self.pool = V.choice(self.pool, "pool", POOLS)
        for name in ("ttl_days", "soft_ttl_days"):
            v = getattr(self, name)
            if v is None:
                continue
            if (isinstance(v, str) and v == NEVER) or (isinstance(v, float) and v == float("inf")):
                setattr(self, name, NEVER)  # the policy says "never", overriding the category's
                continue
            setattr(self, name, _plain(v, V.number(v, f"{name} (days)", 0.0, MAX_TTL_DAYS, lo_open=True)))
        self.importance = _plain(self.importance, V.number(self.importance, "importance", 0.0, 1.0))
        if self.idempotency_key is not None:
            check_identifier(self.idempotency_key, "idempotency_key")
        if self.context is not None:
            V.text(self.context, "context", MAX_CONTENT_CHARS, allow_blank=True)
        if self.embed_text is not None:
            V.text(self.embed_text, "embed_text", MAX_CONTENT_CHARS)
        check_identifier(self.category, "category")
        if self.derived_from is not None:
            V.str_list(self.derived_from, "derived_from", min_len=0, max_len=MAX_DERIVED_FROM, max_chars=32)
            self.derived_from = sorted({check_memory_id(m) for m in self.derived_from})
        if self.session is not None:
            self.session = check_session(self.session, self.actor, self.pool)
        if self.copy_of is not None:
            if self.session is None:
                raise InvalidRecord("copy_of is set by the runtime for a session's own items; a write cannot set it")
            self.copy_of = sorted({check_memory_id(m) for m in self.copy_of})
        if self.replaces is not None:
            check_memory_id(self.replaces)
            if self.pool != "vault":
                raise InvalidRecord("an update (replaces) is a new version of a vault memory: pool must be vault")
        return self

    @property
    def scope_obj(self) -> Scope:
        return parse_scope(self.scope)


# Read once: ``SESSION.names`` asks Arrow each time (9 us, twice a session item's validation).
_SESSION_NAMES = frozenset(SESSION.names)


def check_session(value: object, actor: str, pool: str) -> dict:
    """A working item's session field (``SESSION``): its actor is the write's own."""
    if not isinstance(value, dict) or value.keys() != _SESSION_NAMES:
        raise InvalidRecord(f"session must be a dict of {', '.join(SESSION.names)}")
    if pool != "working" or value["actor"] != actor:
        raise InvalidRecord("a session's items are working-pool items written by the session's own actor")
    return {"id": V.hex_id(value["id"], "session id"), "task": check_identifier(value["task"], "task_id"),
            "actor": actor, "turn": V.integer(value["turn"], "session turn", 0, 2**31 - 1),
            "slot": V.choice(value["slot"], "session slot", SESSION_SLOTS),
            "n": V.integer(value["n"], "session slot index", 0, 2**31 - 1),
            "critical": V.choice(value["critical"], "critical", (True, False))}


def _plain(value, checked):
    """A checked number as the request keeps it: a plain int or float as given (the idempotency
    fingerprint of a valid write stays what it was), anything else numeric (NumPy, Fraction) as
    the float it was checked as (orjson and Arrow take only plain numbers)."""
    return value if type(value) in (int, float) else checked


# Decisions a write can come back with.
MERGED = "merged"  # a near-copy of a live memory (cosine >= [lifecycle].dedup_cosine): that one refreshed
CONTRADICTION = "contradiction_queued"  # a close call against a live version: both kept, flagged, for review
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
                 content_hash_: str | None = None, search_text: str | None = None,
                 ttl: tuple[float | None, float | None] | None = None) -> dict:
    """A new record for a validated write whose text (and other fields) passed the gate:
    ``text`` and the fields of ``req`` are as stored. ``content_hash_`` and ``search_text``
    come precomputed from the prepare stage, or are derived here. ``ttl``: the resolved
    (soft days, hard days) policy, None for never (default: the write's own numbers)."""
    from .scoring import tokenize  # the one tokenizer of the keyword side, hot and cold

    day = 86_400_000_000
    if ttl is None:
        ttl = tuple(None if isinstance(v, str) else v for v in (req.soft_ttl_days, req.ttl_days))
    soft, hard = ttl
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
        "copy_of": None,
        "context_of": None,
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
        "session": req.session,
        "embed_text": req.embed_text,
    }


def embedded_text(rec: dict) -> str:
    """The text a record's vector is made from: its ``embed_text``, else its content."""
    return rec.get("embed_text") or rec["content"]


# What a caller's write may set: everything but the session field, which only the runtime's
# sessions set (a plain write must never pass for a session's own item).
_WRITE_FIELDS = tuple(k for k in WriteRequest.__dataclass_fields__ if k not in ("session", "copy_of"))
_WRITE_NAMES = frozenset(_WRITE_FIELDS)  # looked up per key of every write


def write_request(item: dict | WriteRequest, *, sessions: bool = False) -> WriteRequest:
    """A WriteRequest from a dict of write() keyword arguments (or a WriteRequest), validated.
    Raises a ValidationError subclass; field names the caller got wrong are described, not shown.
    ``sessions``: the runtime's own sessions' writes, the only ones that may set ``session``."""
    if isinstance(item, WriteRequest):
        if item.session is not None and not sessions:
            raise InvalidRecord("session is set by the runtime for a session's own items (rt.session); "
                                "a write cannot set it")
        return item.validate()
    if not isinstance(item, dict):
        raise InvalidRecord(f"each write must be a dict of write() arguments, not {V.got(item)}")
    if "session" in item or "copy_of" in item:
        raise InvalidRecord(f"{'session' if 'session' in item else 'copy_of'} is set by the runtime for a "
                            "session's own items (rt.session); a write cannot set it")
    unknown = [k for k in item if not (isinstance(k, str) and k in _WRITE_NAMES)]
    if unknown:
        hint = _suggest(unknown[0])
        raise InvalidRecord(f"{len(unknown)} unknown write field(s){hint}; known: {', '.join(_WRITE_FIELDS)}")
    missing = [k for k in ("scope", "text", "actor") if k not in item]
    if missing:
        raise InvalidRecord(f"missing write field(s): {missing}")
    return WriteRequest(**item).validate()


def _suggest(name: object) -> str:
    """A known field close to a mistyped one: the suggestion is ours, nothing of the input."""
    if not isinstance(name, str) or len(name) > 64:
        return ""
    close = difflib.get_close_matches(name, _WRITE_FIELDS, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def write_requests(items: object, *, max_items: int = 1_000_000,
                   sessions: bool = False) -> list[WriteRequest | ValidationError]:
    """A write_many batch validated item by item: a WriteRequest for each good item, the
    ValidationError (its message prefixed with the item's position) in place of each bad one,
    so the caller can write the good items and refuse the bad ones (or refuse the whole batch).
    Raises InvalidRecord when ``items`` itself is not a list or tuple of at most ``max_items``."""
    if not isinstance(items, (list, tuple)):
        raise InvalidRecord(f"write_many takes a list of writes (dicts of write() arguments), not {V.got(items)}")
    if len(items) > max_items:
        raise InvalidRecord(f"write_many takes at most {max_items} writes per call, not {len(items)}")
    out: list[WriteRequest | ValidationError] = []
    for i, it in enumerate(items):
        try:
            out.append(write_request(it, sessions=sessions))
        except ValidationError as exc:
            out.append(type(exc)(f"write at position {i}: {exc}"))
    return out


def fingerprint(req: WriteRequest, key: bytes) -> bytes:
    """A keyed digest of everything a write asks for but its idempotency key: a retry carries
    the same one; a reused key with another write does not. Keyed, so it reveals nothing of
    the text (a bare hash of a short text with a phone number could be brute-forced)."""
    # embed_text only when given: a retry of a write recorded before it existed keeps its digest
    # (a tuple dumps as the list it was: the same bytes, read in C: 3.7 -> 2.5 us a write)
    body = orjson.dumps(_FP_FIELDS(req) if req.embed_text is not None else _FP_FIELDS_NO_EMBED(req))
    return hmac.digest(key, body, "sha256")


def op_fingerprint(op, key: bytes) -> bytes:
    """``fingerprint`` for a caller's decision on a memory (a forget, a review): its kind and
    every field but its key, so that a key reused for another memory is a conflict, never the
    first one's result while nothing happens to the second."""
    body = orjson.dumps([type(op).__name__, *[getattr(op, k) for k in op.__dataclass_fields__ if k != "idem_key"]],
                        default=str)
    return hmac.digest(key, body, "sha256")


_FP_NAMES = [k for k in WriteRequest.__dataclass_fields__ if k != "idempotency_key"]
_FP_FIELDS = operator.attrgetter(*_FP_NAMES)
_FP_FIELDS_NO_EMBED = operator.attrgetter(*[k for k in _FP_NAMES if k != "embed_text"])


def request_fields(req: WriteRequest) -> dict:
    """A write's fields as ``write_many`` takes them back (a session's own items keep theirs)."""
    out = {k: getattr(req, k) for k in WriteRequest.__dataclass_fields__}
    for own in ("session", "copy_of"):  # the runtime's own, set only on a session's items
        if out[own] is None:
            del out[own]
    return out


UNSPECIFIED = "unspecified"  # a recall's task_id and purpose when the caller states none (logged so)


@dataclass(slots=True)
class RecallRequest:
    """A recall (DESIGN section 5): who asks, for which task and purpose, over which scopes."""

    query: str | None
    actor: str
    task_id: str
    allowed_scopes: list[str]
    purpose: str
    top_k: int = 5
    token_budget: int | None = None

    def validate(self) -> RecallRequest:
        """Check every field; ``allowed_scopes`` (a list, tuple or set of scope paths or Scope
        objects, never a bare str) becomes a list of canonical scope strs. Returns self."""
        check_identifier(self.actor, "actor")
        check_identifier(self.task_id, "task_id")
        V.purpose(self.purpose)
        if self.query is not None:  # None: a listing by recency (recall(query=None, where=...))
            V.text(self.query, "query", MAX_CONTENT_CHARS)
        scopes = self.allowed_scopes
        if scopes is None or (isinstance(scopes, (list, tuple, set, frozenset)) and not scopes):
            raise InvalidRecord("allowed_scopes is required: a list of scopes this recall may read")
        if not isinstance(scopes, (list, tuple, set, frozenset)):
            raise InvalidRecord(f"allowed_scopes must be a list of scopes this recall may read, not {V.got(scopes)}")
        if len(scopes) > MAX_ALLOWED_SCOPES:
            raise InvalidRecord(f"allowed_scopes holds {len(scopes)} scopes; at most {MAX_ALLOWED_SCOPES}")
        self.allowed_scopes = [_canonical(s) if type(s) is str else str(parse_scope(s)) for s in scopes]
        self.top_k = V.integer(self.top_k, "top_k", 1, MAX_TOP_K)
        self.token_budget = V.integer(self.token_budget, "token_budget", 1, MAX_TOKEN_BUDGET, allow_none=True)
        return self


@lru_cache(maxsize=65536)
def _canonical(path: str) -> str:
    """A scope path as ``str(parse_scope(path))`` (a refusal is raised every time, never kept):
    an agent's recalls name the same few scopes, and rebuilding each was a tenth of checking one."""
    return str(parse_scope(path))
