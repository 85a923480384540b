"""Where actors live: a Ray namespace per data folder, fixed names inside it, and which owner
holds a scope. Tenants (orgs) are hashed onto a fixed number of owners; /global/ has its own
slot in the same hash."""

from __future__ import annotations

import functools
import hashlib
import os
import zlib

from ..core.scopes import Scope

LEDGER = "ledger"


def namespace_for(data_dir: str) -> str:
    digest = hashlib.sha256(os.path.realpath(data_dir).encode()).hexdigest()[:12]
    return f"memactors-{digest}"


def owner_name(index: int) -> str:
    return f"owner-{index}"


def gate_worker_name(index: int) -> str:
    return f"gate-{index}"


def embed_worker_name(index: int) -> str:
    return f"embed-{index}"


def owner_index(scope: Scope, num_owners: int) -> int:
    return _tenant_hash(scope) % num_owners


def _tenant_hash(scope: Scope) -> int:
    return zlib.crc32((scope.org or "global").encode())


def tenant_tag(scope: str | Scope) -> str:
    """The first 8 characters of every memory id made in this scope's tenant: a memory id says
    which owner holds it (``owner_of_memory``) without asking anyone."""
    return _tag(str(scope))


@functools.lru_cache(maxsize=1 << 16)
def _tag(scope: str) -> str:
    # remembered by scope: a write asked for it, parsing its scope again (1.5% of an owner's time)
    from ..core.scopes import parse_scope

    return f"{_tenant_hash(parse_scope(scope)):08x}"


def owner_of_memory(memory_id: str, num_owners: int) -> int:
    """The owner a memory id points to (ids from before tenant tags point anywhere: the owner
    answers "not here" and the caller asks the ledger)."""
    return int(memory_id[:8], 16) % num_owners
