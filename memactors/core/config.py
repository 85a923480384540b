"""Configuration: typed sections with defaults; ``configs/default.toml`` documents every key.

Pure: parsing a mapping. Reading the file is the runtime's job.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields

from . import validate as V
from .errors import ConfigError, ValidationError
from .records import MAX_TOKEN_BUDGET, MAX_TOP_K, SENSITIVITIES
from .scopes import check_identifier, parse_scope


@dataclass(slots=True)
class RuntimeConfig:
    # Where the cores run: "ray" (named actors of a local or given Ray cluster: simulations,
    # sweeps, clusters, `memactors up`) or "process" (in the caller's process, no Ray).
    # "": $MEMACTORS_HOST, else "ray".
    host: str = ""
    num_owners: int = 0  # scope-owner actors; tenants are hashed onto them (0: sized by the host)
    gate_workers: int = -1  # stateless gate actors the owners send batches to (0: scan inside the owner; -1: sized)
    gate_pool_min_batch: int = 32  # smaller batches are scanned inside the owner: a hop costs more
    embed_workers: int = 0  # embedding actors owners send batches to (0: embed inside the owner, right for
    # the default hashing embedder; 1-2 for MiniLM, so each owner does not load a model)
    owner_queue_max: int = 10_000  # writes waiting per owner before callers get BackPressure
    write_batch_max: int = 500  # items per owner call; write_many sends its calls concurrently
    ledger_chunk: int = 250  # an owner sends a batch's ledger events in chunks of this many writes, pipelined
    ledger_commit_max_wait_ms: float = 0.0  # group commit: extra wait for company (events that arrive during a commit share the next one anyway)
    ledger_commit_max_events: int = 20_000  # group commit: most events per DuckDB transaction
    ledger_wal_max_mb: int = 128  # the ledger's log is folded into its file when idle, at the latest at this size
    l2_flush_interval_s: float = 0.5  # how far Lance may trail the ledger
    l2_flush_max_rows: int = 5_000  # flush early once this many rows wait
    l2_reindex_rows: int = 10_000  # bring scalar indexes up to date after this many appended rows
    l2_compact_fragments: int = 8  # compact after a flush once this many fragments are small (0: never)
    hot_cache_max_memories: int = 200_000  # active memories an owner keeps in memory, all scopes
    l2_cache_mb: int = 512  # Lance's index and metadata caches per owner (Lance's own default: 7 GB each)
    working_pool_size: int = 200  # L1 working pool: items per scope (LRU)
    # L1 working pool: how long a session never completed may stay idle before its items are let
    # go (they age from its newest item; complete() releases them at once), and the lifetime of
    # an item outside any session (a direct write to the pool, a demoted copy).
    session_ttl_s: float = 86_400.0
    idempotency_window_s: float = 86_400.0  # how long a retry with the same key is recognised
    call_timeout_s: float = 60.0  # longest the facade waits for an actor call
    owner_max_restarts: int = -1  # Ray restarts a killed owner (-1: always)
    # Where the ledger's key and anchor live: outside the data folder, so that write access to
    # the folder alone cannot forge events. "": $MEMACTORS_KEY_DIR, else ~/.memactors/keys.
    key_dir: str = ""


@dataclass(slots=True)
class EmbedderConfig:
    name: str = "hash-ngram-v1"
    dim: int = 384


@dataclass(slots=True)
class RecallConfig:
    default_top_k: int = 5
    weights: list = field(default_factory=lambda: [0.4, 0.3, 0.2, 0.1])  # vector, keyword, recency, importance
    threshold: float = 0.35  # relevance threshold on the fused score; why this value: benchmarks/RESULTS.md
    push_max_items: int = 5  # push recall at task start: most items
    push_token_budget: int = 2_000  # push recall: most tokens (CJK-aware estimate)
    push_refresh_turns: int = 5  # push again every this many turns
    push_threshold: float = 0.5  # push recall's own relevance threshold (above the pull threshold)
    min_score: float = 0.0  # owners drop candidates whose fused score is not above this
    log_flush_s: float = 0.2  # recall evidence is batched and committed at least this often
    compiled_path: bool = True  # hot recalls over the direct path to an owner on this node (a local socket); False: plain actor calls
    # [recall.purposes]: purpose -> {categories, source_kinds, sensitivities} it may see. Empty:
    # no policy (every purpose sees everything its grants allow); else unlisted purposes are refused.
    purposes: dict = field(default_factory=dict)


@dataclass(slots=True)
class AlertsConfig:
    """Where alerts go (``memactors.runtime.alerts``): blocked writes, held injections, a data
    folder refused as tampered, a verify that failed. Both may be set; neither: no alerts."""

    hook: str = ""  # "package.module:function": called with each alert (a dict), off the caller's path
    webhook: str = ""  # "http://127.0.0.1:PORT/path": each alert POSTed as JSON; loopback only
    timeout_s: float = 2.0  # longest a hook call or a POST may take


@dataclass(slots=True)
class BackupConfig:
    """Scheduled backups (``memactors.runtime.backup``): every ``interval_s`` a consistent copy of
    the ledger, L2 and the key anchor into a new folder under ``dir``, the newest ``keep`` kept.
    A crash of the data folder loses at most the writes since the last backup began: the RPO
    is ``interval_s`` plus one backup's duration. They hold no key (a restore needs the key
    folder); no setting takes a key passphrase, on purpose (docs/threat-model.md)."""

    interval_s: float = 0.0  # 0: off (run rt.backup / `memactors backup` yourself)
    dir: str = ""  # where scheduled backups go (required when interval_s > 0)
    keep: int = 7  # scheduled backups kept (older ones deleted once a new one is complete)


# --- [lifecycle] ------------------------------------------------------------------------------

NEVER = "never"  # a TTL or review period that never runs out (TOML has no null)
MAX_DAYS = 36_500.0  # 100 years: a longer period is a mistake, not a policy
_CATEGORY_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}", re.ASCII)


@dataclass(frozen=True, slots=True)
class CategoryTTL:
    """One category's lifetime policy, in days from ``updated_at``; None = never.

    soft_days: past it a memory is soft-expired (recalled at x0.5, evicted once unused too).
    hard_days: past it a memory is out of recall at once and evicted at the next sweep.
    review_days: a period after which the memory is due for review (a queue, never a
    down-weight or an eviction); for facts that must not expire on their own.
    """

    soft_days: float | None = 30.0
    hard_days: float | None = 365.0
    review_days: float | None = None

    def to_dict(self) -> dict:
        return {k: NEVER if getattr(self, k) is None else getattr(self, k) for k in ("soft_days", "hard_days", "review_days")}


def _default_ttl() -> dict[str, CategoryTTL]:
    # The seed: soft 30 d / hard 365 d unless the category says otherwise.
    return {
        "default": CategoryTTL(30.0, 365.0),
        "preference": CategoryTTL(90.0, 365.0),  # preferences drift slowly
        "task_learning": CategoryTTL(30.0, 365.0),
        "entity_fact": CategoryTTL(None, None, 180.0),  # no expiry; reviewed twice a year
        "instruction": CategoryTTL(None, None, 90.0),  # stands until replaced; reviewed quarterly
        "observation": CategoryTTL(7.0, 90.0),  # promoted tool output: short-lived
    }


def days_value(value: object, what: str, *, error=ConfigError) -> float | None:
    """A period in days: a number in (0, 36500], or "never" / math.inf (returned as None).
    Anything else (bool, NaN, zero, negative, absurd, other types) raises ``error``."""
    if (isinstance(value, str) and value == NEVER) or (isinstance(value, float) and value == math.inf):
        return None
    # Compared as given: float() of a huge int would overflow; NaN fails both comparisons.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_DAYS:
        raise error(f"{what} must be a number of days in (0, {MAX_DAYS:g}] or \"never\"")
    return float(value)


# key -> (type, low, high, low_inclusive); floats accept TOML integers, ints refuse floats.
_LIFECYCLE_RANGES: dict[str, tuple[type, float, float, bool]] = {
    "refresh_confidence_bump": (float, 0.0, 1.0, True),
    "stale_threshold": (float, 0.0, 1.0, True),
    "evict_threshold": (float, 0.0, 1.0, True),
    "age_half_life_days": (float, 0.0, MAX_DAYS, False),
    "access_half_life_days": (float, 0.0, MAX_DAYS, False),
    "unused_days": (float, 0.0, MAX_DAYS, False),
    "superseded_days": (float, 0.0, MAX_DAYS, False),
    "low_confidence": (float, 0.0, 1.0, True),
    "low_confidence_days": (float, 0.0, MAX_DAYS, False),
    "sweep_interval_s": (float, 0.0, 366 * 86_400.0, True),
    "compact_deleted_fraction": (float, 0.0, 1.0, False),
    "compact_small_fragments": (int, 1, 1_000_000, True),
    "compact_small_fragment_rows": (int, 1, 1 << 40, True),
    "version_retention_s": (float, 0.0, MAX_DAYS * 86_400.0, True),
    "plan_workers": (int, 0, 4096, True),
    "contradiction_gap": (float, 0.0, 1.0, True),
    "purge_delay_s": (float, 0.0, 7 * 86_400.0, True),
    "dedup_cosine": (float, 0.0, 1.0, False),
    "text_contradiction_cosine": (float, 0.0, 2.0, False),
    "promote_min_turns": (int, 1, 1_000_000, True),
    "demote_after": (int, 1, 1_000_000, True),
}


@dataclass(slots=True)
class LifecycleConfig:
    """TTLs, staleness and the GC sweep (DESIGN section 7); ``configs/default.toml`` explains
    each key. Thresholds compare with ">" ("above"), so 1.0 switches a staleness rule off."""

    ttl: dict[str, CategoryTTL] = field(default_factory=_default_ttl)
    refresh_confidence_bump: float = 0.05  # another source kind's refresh raises confidence by this, capped at 1
    staleness_weights: list = field(default_factory=lambda: [0.4, 0.3, 0.3])  # age, access decay, contradiction
    stale_threshold: float = 0.5  # staleness above: marked stale (recalled at x0.5)
    evict_threshold: float = 0.8  # staleness above: evicted
    age_half_life_days: float = 90.0  # age component: 1 - 0.5 ** (days since updated_at / this)
    access_half_life_days: float = 30.0  # access component: 1 - 0.5 ** (days since last use / this)
    unused_days: float = 30.0  # soft_expired_unused: not recalled for this long
    superseded_days: float = 90.0  # superseded_old: superseded at least this long ago
    low_confidence: float = 0.3  # low_confidence_stale: confidence below this ...
    low_confidence_days: float = 60.0  # ... and not verified (updated or refreshed) for this long
    sweep_interval_s: float = 0.0  # seconds between automatic sweeps; 0 = off (run gc yourself)
    compact_deleted_fraction: float = 0.1  # compact a fragment once this share of its rows is deleted
    compact_small_fragments: int = 16  # ... or once this many small fragments exist
    compact_small_fragment_rows: int = 100_000  # a fragment with fewer rows is small
    version_retention_s: float = 86_400.0  # old Lance versions (evicted rows still readable) kept this long
    plan_workers: int = 0  # Ray tasks of the plan phase; 0 = one per CPU Ray offers
    contradiction_gap: float = 0.2  # another source's write: a confidence gap above this decides; closer -> review
    dedup_cosine: float = 0.95  # a text-only write this close (cosine) to a live memory of its scope merges into it
    # text-only writes this close (cosine) to a live text-only memory are checked for a contradiction (> 1: off)
    text_contradiction_cosine: float = 0.4
    purge_delay_s: float = 300.0  # an erasure's bytes leave old Lance versions and freed ledger blocks within this
    judge: str = ""  # "package.module:Factory" building a core.contradictions.Judge for close calls; "" = a reviewer
    promote_min_turns: int = 3  # a fact observed in this many distinct turns of a session is promoted to L2
    demote_after: int = 5  # a vault memory returned this many times in a row without a citation is demoted

    @classmethod
    def from_dict(cls, values: object) -> LifecycleConfig:
        """From the ``[lifecycle]`` table; unknown keys, wrong types and out-of-range values
        raise ConfigError naming the key."""
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise ConfigError("[lifecycle] must be a table; see configs/default.toml")
        cfg = cls()
        values = dict(values)
        ttl = values.pop("ttl", None)
        if ttl is not None:
            cfg.ttl = _parse_ttl(ttl)
        judge = values.pop("judge", None)
        if judge is not None:
            if not isinstance(judge, str) or len(judge) > 300 or (judge and ":" not in judge):
                raise ConfigError("[lifecycle].judge must be 'package.module:Factory' or \"\"")
            cfg.judge = judge
        weights = values.pop("staleness_weights", None)
        if weights is not None:
            if (not isinstance(weights, list) or len(weights) != 3
                    or any(isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w <= 1e6 for w in weights)
                    or sum(weights) <= 0):
                raise ConfigError("[lifecycle].staleness_weights must be 3 non-negative numbers (age, access, "
                                  "contradiction), not all zero")
            cfg.staleness_weights = [float(w) for w in weights]
        for key, value in values.items():
            if key not in _LIFECYCLE_RANGES:
                raise ConfigError(f"unknown key [lifecycle].{key}; see configs/default.toml")
            kind, lo, hi, lo_incl = _LIFECYCLE_RANGES[key]
            ok_type = isinstance(value, int) if kind is int else isinstance(value, (int, float))
            if isinstance(value, bool) or not ok_type or not (lo <= value if lo_incl else lo < value) or not value <= hi:
                span = f"{'[' if lo_incl else '('}{lo:g}, {hi:g}]"
                raise ConfigError(f"[lifecycle].{key} must be {'an integer' if kind is int else 'a number'} in {span}")
            setattr(cfg, key, kind(value))
        if cfg.stale_threshold > cfg.evict_threshold:
            raise ConfigError("[lifecycle].stale_threshold must not be above evict_threshold")
        return cfg

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "ttl"}
        out["staleness_weights"] = list(self.staleness_weights)
        out["ttl"] = {name: policy.to_dict() for name, policy in self.ttl.items()}
        return out


def _parse_ttl(ttl: object) -> dict[str, CategoryTTL]:
    """[lifecycle.ttl.<category>] tables over the defaults: a key left out keeps the built-in
    value of that category (for a new category, the configured "default" category's)."""
    if not isinstance(ttl, dict) or not all(isinstance(v, dict) for v in ttl.values()):
        raise ConfigError("[lifecycle.ttl] must hold one table per category; see configs/default.toml")
    out = _default_ttl()
    order = sorted(ttl, key=lambda name: name != "default")  # "default" first: new categories build on it
    for name in order:
        if not isinstance(name, str) or not _CATEGORY_NAME.fullmatch(name):
            raise ConfigError("[lifecycle.ttl] category names are 1-64 lowercase letters, digits or '_', "
                              "starting with a letter")
        table = ttl[name]
        unknown = set(table) - {"soft_days", "hard_days", "review_days"}
        if unknown:
            raise ConfigError(f"unknown key(s) {sorted(unknown)} in [lifecycle.ttl.{name}]; "
                              "known: soft_days, hard_days, review_days")
        base = out.get(name, out["default"])
        vals = {k: days_value(table[k], f"[lifecycle.ttl.{name}].{k}") if k in table else getattr(base, k)
                for k in ("soft_days", "hard_days", "review_days")}
        if vals["soft_days"] is not None and vals["hard_days"] is not None and vals["soft_days"] > vals["hard_days"]:
            raise ConfigError(f"[lifecycle.ttl.{name}].soft_days must not exceed hard_days")
        out[name] = CategoryTTL(**vals)
    return out


@dataclass(frozen=True, slots=True)
class Allowed:
    """What one configuration key takes: a kind and, for numbers, bounds (None: no bound)."""

    kind: str  # int | float | bool | str | path | weights | choice
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False  # lo itself is out of range (a timeout of 0 s is not a timeout)
    options: tuple = ()  # a choice's values


_DAY_S = 86_400.0
HOSTS = ("", "ray", "process")
# Every key of RuntimeConfig, EmbedderConfig and RecallConfig, with the values that make sense.
# A test checks this table covers each dataclass field, and that every default lies inside.
ALLOWED: dict[str, dict[str, Allowed]] = {
    "runtime": {
        "host": Allowed("choice", options=HOSTS),
        "num_owners": Allowed("int", 0, 1024),  # an actor is a process: tens, not thousands
        "gate_workers": Allowed("int", -1, 256),
        "gate_pool_min_batch": Allowed("int", 0, 1_000_000),
        "embed_workers": Allowed("int", 0, 256),
        "owner_queue_max": Allowed("int", 1, 100_000_000),
        "write_batch_max": Allowed("int", 1, 1_000_000),
        "ledger_chunk": Allowed("int", 1, 1_000_000),
        "ledger_commit_max_wait_ms": Allowed("float", 0.0, 60_000.0),
        "ledger_commit_max_events": Allowed("int", 1, 10_000_000),
        "ledger_wal_max_mb": Allowed("int", 1, 65_536),
        "l2_flush_interval_s": Allowed("float", 0.0, 3_600.0, lo_open=True),
        "l2_flush_max_rows": Allowed("int", 1, 10_000_000),
        "l2_reindex_rows": Allowed("int", 1, 1_000_000_000),
        "l2_compact_fragments": Allowed("int", 0, 1_000_000),
        "hot_cache_max_memories": Allowed("int", 0, 1_000_000_000),
        "l2_cache_mb": Allowed("int", 16, 1_048_576),
        "working_pool_size": Allowed("int", 1, 1_000_000),
        "session_ttl_s": Allowed("float", 0.0, 36_500 * _DAY_S, lo_open=True),
        "idempotency_window_s": Allowed("float", 0.0, 36_500 * _DAY_S),
        "call_timeout_s": Allowed("float", 0.0, 7 * _DAY_S, lo_open=True),
        "owner_max_restarts": Allowed("int", -1, 1_000_000),  # -1: always
        "key_dir": Allowed("path", 0, 4096),
    },
    "embedder": {
        "name": Allowed("str", 1, 128),  # and registered, when the caller passes the registry's names
        "dim": Allowed("int", 8, 4096),
    },
    "recall": {
        "default_top_k": Allowed("int", 1, MAX_TOP_K),
        "weights": Allowed("weights"),  # 4 non-negative finite numbers, not all zero, finite sum
        "threshold": Allowed("float", 0.0, 1.0),
        "push_max_items": Allowed("int", 1, MAX_TOP_K),
        "push_token_budget": Allowed("int", 1, MAX_TOKEN_BUDGET),
        "push_refresh_turns": Allowed("int", 1, 1_000_000),
        "push_threshold": Allowed("float", 0.0, 1.0),
        "min_score": Allowed("float", -1.0, 1.0),  # fused scores lie in [0, 1]; below 0: no floor
        "log_flush_s": Allowed("float", 0.0, 3_600.0, lo_open=True),
        "compiled_path": Allowed("bool"),
        "purposes": Allowed("purposes"),  # a table of purpose rules (core.visibility.parse_purposes)
    },
    "alerts": {
        "hook": Allowed("str", 0, 300),  # and "module:function" (checked in from_dict)
        "webhook": Allowed("str", 0, 2048),  # and an http(s) URL on a loopback address
        "timeout_s": Allowed("float", 0.0, 60.0, lo_open=True),
    },
    "backup": {
        "interval_s": Allowed("float", 0.0, 366 * _DAY_S),
        "dir": Allowed("path", 0, 4096),
        "keep": Allowed("int", 1, 10_000),
    },
}
SECTIONS = tuple(ALLOWED)
_GRANT_KEYS = ("actor", "scope", "read", "write", "clearance")


def check_value(section: str, key: str, value: object) -> object:
    """``value`` for ``[section].key`` as the config keeps it (ints for int keys, floats for
    float keys, a list of 4 floats for weights), or ConfigError naming the key and its range."""
    a = ALLOWED[section][key]
    what = f"[{section}].{key}"
    if a.kind == "int":
        return V.integer(value, what, a.lo, a.hi, error=ConfigError)
    if a.kind == "float":
        return V.number(value, what, a.lo, a.hi, lo_open=a.lo_open, error=ConfigError)
    if a.kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{what} must be true or false, not {V.got(value)}")
        return value
    if a.kind == "weights":
        return list(V.weights(value, what=what, error=ConfigError).as_tuple())
    if a.kind == "choice":
        return V.choice(value, what, a.options, error=ConfigError)
    if a.kind == "purposes":
        from .visibility import parse_purposes  # local: visibility imports the records module

        return parse_purposes(value)
    out = V.text(value, what, int(a.hi), allow_blank=a.lo == 0, error=ConfigError)
    if a.kind == "path" and "\x00" in out:
        raise ConfigError(f"{what} has a NUL character at position {out.index(chr(0)) + 1}: no path holds one")
    return out


def _key(key: object) -> str:
    """A rejected key for a message: described, never echoed (a config may be built from
    anything a caller passes); the "did you mean" hint names a known key instead."""
    return f"({V.got(key)})"


def _unknown(key: object, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1) if isinstance(key, str) and len(key) <= 64 else []
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(slots=True)
class Config:
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    alerts: AlertsConfig = field(default_factory=AlertsConfig)
    backup: BackupConfig = field(default_factory=BackupConfig)
    grants: list[dict] = field(default_factory=list)  # [{actor, scope, read, write}]
    # The write gate's policy, as memactors.gate.GatePolicy.from_dict takes it (validated where
    # the gate is built: the core does not import the gate). Empty: the gate's defaults.
    gate: dict = field(default_factory=dict)
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)

    @classmethod
    def from_dict(cls, data: Mapping | None, *, embedders: Collection[str] | None = None) -> Config:
        """A Config from a mapping shaped like configs/default.toml (None: all defaults). Every
        key is checked for its type and range (``ALLOWED``); with ``embedders`` (the registered
        embedder names, ``memactors.embed.embedder_names()``: the core does not import the
        embedders) ``[embedder].name`` must be one of them. Raises ConfigError."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"a configuration is a table of sections (a dict), not {V.got(data)}")
        data = dict(data)
        cfg = cls()
        for section in SECTIONS:
            values = data.pop(section, None)
            if values is None:
                continue
            if not isinstance(values, Mapping):
                raise ConfigError(f"[{section}] must be a table of key = value lines, not {V.got(values)}; "
                                  "see configs/default.toml")
            target = getattr(cfg, section)
            for key, value in values.items():
                if not (isinstance(key, str) and key in ALLOWED[section]):
                    raise ConfigError(f"unknown key [{section}].{_key(key)}{_unknown(key, ALLOWED[section])}; "
                                      "see configs/default.toml")
                setattr(target, key, check_value(section, key, value))
        _check_alerts(cfg.alerts)
        if cfg.backup.interval_s > 0 and not cfg.backup.dir:
            raise ConfigError("[backup].interval_s needs [backup].dir: the folder scheduled backups go to")
        if embedders is not None and cfg.embedder.name not in set(embedders):
            raise ConfigError(f"[embedder].name is not a registered embedder ({V.got(cfg.embedder.name)}); "
                              f"known: {sorted(embedders)}")
        cfg.grants = _grants(data.pop("grants", None))
        gate = data.pop("gate", None)
        if gate is not None and not isinstance(gate, Mapping):
            raise ConfigError(f"[gate] must be a table, not {V.got(gate)}; see configs/default.toml")
        cfg.gate = dict(gate or {})
        cfg.lifecycle = LifecycleConfig.from_dict(data.pop("lifecycle", None))
        for i, rule in enumerate(cfg.recall.purposes.values()):  # categories are [lifecycle]'s
            unknown = [c for c in rule.get("categories", ()) if c not in cfg.lifecycle.ttl]
            if unknown:
                raise ConfigError(f"[recall.purposes] entry {i + 1}.categories names {len(unknown)} category(ies) "
                                  f"[lifecycle] does not define; known: {sorted(cfg.lifecycle.ttl)}")
        if data:
            names = ", ".join(_key(k) for k in data)
            raise ConfigError(f"unknown config section(s): {names}; "
                              f"known: {', '.join((*SECTIONS, 'grants', 'gate', 'lifecycle'))}")
        return cfg

    def checked(self, *, embedders: Collection[str] | None = None) -> Config:
        """This configuration checked as ``from_dict`` checks one (a Config built in code skips
        the door): a new, equal Config, or ConfigError."""
        return Config.from_dict(self.to_dict(), embedders=embedders)

    def to_dict(self) -> dict:
        out = {}
        for section in SECTIONS:
            obj = getattr(self, section)
            out[section] = {f.name: getattr(obj, f.name) for f in fields(obj)}
        out["grants"] = list(self.grants)
        out["gate"] = dict(self.gate)
        out["lifecycle"] = self.lifecycle.to_dict()
        return out


def _grants(grants: object) -> list[dict]:
    """[[grants]] tables: actor (an identifier), scope (a scope path), read and write (bools)."""
    if grants is None:
        return []
    if not isinstance(grants, (list, tuple)):
        raise ConfigError(f"grants must be a list of tables with actor and scope (and read, write), not {V.got(grants)}")
    out = []
    seen: dict[tuple[str, str], int] = {}
    for i, g in enumerate(grants):
        if not isinstance(g, Mapping) or "actor" not in g or "scope" not in g:
            raise ConfigError(f"grants[{i}] must be a table with actor and scope (and read, write)")
        extra = [k for k in g if k not in _GRANT_KEYS]
        if extra:
            raise ConfigError(f"grants[{i}] has {len(extra)} unknown key(s); known: {', '.join(_GRANT_KEYS)}")
        try:
            check_identifier(g["actor"], f"grants[{i}].actor")
            parse_scope(g["scope"])
        except ValidationError as exc:
            raise ConfigError(str(exc)) from None
        flags = {}
        for k, default in (("read", True), ("write", False)):
            v = g.get(k, default)
            if not isinstance(v, bool):
                raise ConfigError(f"grants[{i}].{k} must be true or false, not {V.got(v)}")
            flags[k] = v
        item = {"actor": g["actor"], "scope": g["scope"], **flags}
        if "clearance" in g:
            item["clearance"] = V.choice(g["clearance"], f"grants[{i}].clearance", SENSITIVITIES, error=ConfigError)
        # Two entries for one binding that disagree: which one holds would depend on the order
        # and on what the folder already holds (connect applies only the entries that differ).
        key = (g["actor"], str(parse_scope(g["scope"])))
        j = seen.setdefault(key, i)
        if j != i and _binding(out[j]) != _binding(item):
            raise ConfigError(f"grants[{i}] and grants[{j}] name the same actor and scope with different "
                              "read, write or clearance: list each binding once")
        out.append(item)
    return out


def _binding(g: dict) -> tuple:
    from .visibility import DEFAULT_CLEARANCE  # local, as in check_value

    return g["read"], g["write"], g.get("clearance", DEFAULT_CLEARANCE)


_HOOK = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", re.ASCII)


def _check_alerts(a: AlertsConfig) -> None:
    """A hook is "package.module:function"; a webhook an http(s) URL on a loopback address (an
    alert names scopes and rule ids: it must not leave the machine unless the deployment's own
    relay there sends it on). Pure: no name is resolved and nothing is imported here."""
    if a.hook and not _HOOK.fullmatch(a.hook):
        raise ConfigError("[alerts].hook must be 'package.module:function'")
    if a.webhook and not is_loopback_url(a.webhook):
        raise ConfigError("[alerts].webhook must be an http:// or https:// URL on a loopback address "
                          "(127.0.0.1, ::1 or localhost)")


def is_loopback_url(url: str) -> bool:
    """An http(s) URL whose host is a loopback address literal or ``localhost`` (no user info)."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port  # a bad port raises ValueError
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or host is None or "@" in parts.netloc:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
