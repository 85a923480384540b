"""Where actors live: a Ray namespace per data folder, fixed names inside it, and which owner
holds a scope. Tenants (orgs) are hashed onto a fixed number of owners; /global/ has its own
slot in the same hash."""

from __future__ import annotations

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
    tenant = scope.org or "global"
    return zlib.crc32(tenant.encode()) % num_owners
