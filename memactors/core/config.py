"""Configuration: typed sections with defaults; ``configs/default.toml`` documents every key.

Pure: parsing a mapping. Reading the file is the runtime's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from .errors import ConfigError


@dataclass(slots=True)
class RuntimeConfig:
    num_owners: int = 2  # scope-owner actors; tenants are hashed onto them
    gate_workers: int = 1  # stateless gate actors the owners send batches to (0: scan inside the owner)
    gate_pool_min_batch: int = 32  # smaller batches are scanned inside the owner: a hop costs more
    embed_workers: int = 0  # embedding actors owners send batches to (0: embed inside the owner, right for
    # the default hashing embedder; 1-2 for MiniLM, so each owner does not load a model)
    owner_queue_max: int = 10_000  # writes waiting per owner before callers get BackPressure
    write_batch_max: int = 1_000  # items per owner call; write_many sends its calls concurrently
    ledger_chunk: int = 250  # an owner sends a batch's ledger events in chunks of this many writes, pipelined
    ledger_commit_max_wait_ms: float = 0.0  # group commit: extra wait for company (events that arrive during a commit share the next one anyway)
    ledger_commit_max_events: int = 20_000  # group commit: most events per DuckDB transaction
    l2_flush_interval_s: float = 0.5  # how far Lance may trail the ledger
    l2_flush_max_rows: int = 5_000  # flush early once this many rows wait
    l2_reindex_rows: int = 10_000  # bring scalar indexes up to date after this many appended rows
    hot_cache_max_memories: int = 200_000  # active memories an owner keeps in memory, all scopes
    working_pool_size: int = 200  # L1 working pool: items per scope (LRU)
    session_ttl_s: float = 3_600.0  # L1 working pool: item lifetime
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
    min_score: float = 0.0  # owners drop candidates whose fused score is not above this
    log_flush_s: float = 0.2  # recall evidence is batched and committed at least this often
    compiled_path: bool = True  # hot recalls over a Ray compiled graph; False: plain actor calls


@dataclass(slots=True)
class Config:
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    grants: list[dict] = field(default_factory=list)  # [{actor, scope, read, write}]
    # The write gate's policy, as memactors.gate.GatePolicy.from_dict takes it (validated where
    # the gate is built: the core does not import the gate). Empty: the gate's defaults.
    gate: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict | None) -> Config:
        data = dict(data or {})
        cfg = cls()
        for section in ("runtime", "embedder", "recall"):
            values = data.pop(section, {}) or {}
            target = getattr(cfg, section)
            known = {f.name: f for f in fields(target)}
            for key, value in values.items():
                if key not in known:
                    raise ConfigError(f"unknown key [{section}].{key}; see configs/default.toml")
                default = getattr(target, key)
                if isinstance(default, bool) or not isinstance(value, (type(default), int)):
                    if type(value) is not type(default):
                        raise ConfigError(f"[{section}].{key} must be {type(default).__name__}")
                try:
                    setattr(target, key, type(default)(value))
                except (TypeError, ValueError):
                    raise ConfigError(f"[{section}].{key} must be {type(default).__name__}") from None
        grants = data.pop("grants", []) or []
        if not isinstance(grants, list) or not all(isinstance(g, dict) and "actor" in g and "scope" in g for g in grants):
            raise ConfigError("grants must be a list of tables with actor and scope (and read, write)")
        cfg.grants = [
            {"actor": g["actor"], "scope": g["scope"], "read": bool(g.get("read", True)), "write": bool(g.get("write", False))}
            for g in grants
        ]
        gate = data.pop("gate", {}) or {}
        if not isinstance(gate, dict):
            raise ConfigError("[gate] must be a table; see configs/default.toml")
        cfg.gate = gate
        if data:
            raise ConfigError(f"unknown config section(s): {sorted(data)}; see configs/default.toml")
        if cfg.runtime.num_owners < 1:
            raise ConfigError("[runtime].num_owners must be at least 1")
        if cfg.embedder.dim < 8:
            raise ConfigError("[embedder].dim must be at least 8")
        return cfg

    def to_dict(self) -> dict:
        out = {}
        for section in ("runtime", "embedder", "recall"):
            obj = getattr(self, section)
            out[section] = {f.name: getattr(obj, f.name) for f in fields(obj)}
        out["grants"] = list(self.grants)
        out["gate"] = dict(self.gate)
        return out
