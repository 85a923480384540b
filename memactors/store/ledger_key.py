"""The ledger's key and anchor, kept outside the data folder (DESIGN section 8, docs/threat-model.md).

The hash chain alone proves order and content only to someone who trusts the file: with the
file in hand, an attacker can append a forged event (a grant, say) and recompute every hash.
So each commit also stores an HMAC of its last event's hash under a key that never enters the
data folder, and the newest (seq, hash) is recorded beside that key (the *anchor*). Then:

- a forged, inserted or edited event breaks a MAC the attacker cannot recompute;
- deleted tail events leave the ledger shorter than its anchor.

Layout: ``KEY_DIR/<folder id>.key`` (32 random bytes, hex) and ``KEY_DIR/<folder id>.head``
(JSON: seq, hash, mac). The folder id is a random id kept in the ledger's ``meta`` table, so a
moved folder finds its key again. ``KEY_DIR`` is ``[runtime].key_dir``, else
``$MEMACTORS_KEY_DIR``, else ``~/.memactors/keys``. Purpose-bound subkeys (HKDF-SHA256, from
``cryptography``) key the chain MACs, idempotency fingerprints, recall-query digests and identifier pseudonyms.

A backup holds the anchor, never the key in clear (``store.backup``): at most the key sealed
under a passphrase (``store.key_seal``). Keep a copy of the key folder apart from the backups.
"""

from __future__ import annotations

import hmac
import os

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..core.errors import LedgerKeyMissing, StoreError

ENV = "MEMACTORS_KEY_DIR"
CHAIN = b"memactors ledger chain mac v1"
FINGERPRINT = b"memactors idempotency fingerprint v1"
DIGEST = b"memactors recall query digest v1"
PSEUDONYM = b"memactors identifier pseudonym v1"


def key_dir(configured: str = "") -> str:
    """Where ledger keys live: the configured folder, else $MEMACTORS_KEY_DIR, else ~/.memactors/keys."""
    path = configured or os.environ.get(ENV) or os.path.join("~", ".memactors", "keys")
    return os.path.realpath(os.path.expanduser(path))


class LedgerKey:
    """One data folder's secret and its anchor file."""

    def __init__(self, secret: bytes, folder_id: str, directory: str) -> None:
        self._secret = secret
        self.folder_id = folder_id
        self.directory = directory
        self._chain = self.subkey(CHAIN)

    @classmethod
    def open(cls, directory: str, folder_id: str, *, create: bool) -> LedgerKey:
        """Load the key of ``folder_id``; create it (mode 0600) only when ``create`` (a new
        ledger, or one from before keys existed). A missing key of a keyed ledger is an error:
        a new key would make every MAC fail."""
        path = os.path.join(directory, f"{folder_id}.key")
        try:
            with open(path, "rb") as f:
                return cls(bytes.fromhex(f.read().decode().strip()), folder_id, directory)
        except FileNotFoundError:
            if not create:
                raise LedgerKeyMissing(
                    f"the ledger key of this data folder (id {folder_id}) is not in {directory}: put "
                    f"{folder_id}.key back there from a copy of the key folder, or point [runtime].key_dir / ${ENV} "
                    "at the folder that holds it (backups do not hold the key, unless made with a key passphrase)"
                ) from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read the ledger key {path}: {type(exc).__name__}") from None
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            secret = os.urandom(32)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(secret.hex().encode())
                f.flush()
                os.fsync(f.fileno())
        except FileExistsError:  # another process created it first: use that one
            return cls.open(directory, folder_id, create=False)
        except OSError as exc:
            raise StoreError(f"cannot create the ledger key in {directory}: {exc.strerror}") from None
        return cls(secret, folder_id, directory)

    def install(self, directory: str, folder_id: str | None = None) -> LedgerKey:
        """This key's secret written as ``<folder_id>.key`` (default: this folder's id) in
        ``directory`` (0600, never over an existing file): a restored folder's key under its
        new id (the same secret: its MACs, digests, fingerprints and pseudonyms stay what they
        were). Returns the key as it lives there."""
        folder_id = folder_id or self.folder_id
        path = os.path.join(directory, f"{folder_id}.key")
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(self._secret.hex().encode())
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise StoreError(f"cannot write a ledger key in {directory}: {exc.strerror or type(exc).__name__}") from None
        return LedgerKey(self._secret, folder_id, directory)

    def at(self, directory: str) -> LedgerKey:
        """The same key with its anchor read and written in ``directory``; nothing is written
        (a backup's anchor, which holds no key beside it)."""
        return LedgerKey(self._secret, self.folder_id, directory)

    def same(self, other: LedgerKey) -> bool:
        return hmac.compare_digest(self._secret, other._secret)  # noqa: SLF001 - the same class

    def sealed(self, passphrase: str) -> bytes:
        """This key encrypted under ``passphrase`` (``store.key_seal``): a sealed file's bytes."""
        from .key_seal import seal

        return seal(self._secret, self.folder_id, passphrase)

    @classmethod
    def unsealed(cls, blob: bytes, folder_id: str, passphrase: str, directory: str) -> LedgerKey:
        """The key a sealed file holds for ``folder_id`` (LedgerTampered when the passphrase
        does not open it)."""
        from .key_seal import unseal

        return cls(unseal(blob, folder_id, passphrase), folder_id, directory)

    def subkey(self, purpose: bytes) -> bytes:
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(self._secret)

    def mac(self, seq: int, event_hash: bytes) -> bytes:
        """The MAC a commit stores with its last event: binds the seq and the chain up to it."""
        return hmac.digest(self._chain, seq.to_bytes(8, "big") + event_hash, "sha256")

    def check(self, seq: int, event_hash: bytes, mac: bytes | None) -> bool:
        return mac is not None and hmac.compare_digest(self.mac(seq, event_hash), bytes(mac))

    # --- the anchor: the newest committed (seq, hash), outside the data folder ---------------

    @property
    def head_path(self) -> str:
        return os.path.join(self.directory, f"{self.folder_id}.head")

    def write_head(self, seq: int, event_hash: bytes) -> None:
        tmp = f"{self.head_path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps({"seq": seq, "hash": event_hash.hex(), "mac": self.mac(seq, event_hash).hex()}))
        os.replace(tmp, self.head_path)

    def read_head(self) -> tuple[int, bytes] | None:
        """The anchored (seq, hash), or None when no commit has been anchored yet. A head file
        whose own MAC fails is reported as an error (it was edited)."""
        try:
            with open(self.head_path, "rb") as f:
                d = orjson.loads(f.read())
            seq, h = int(d["seq"]), bytes.fromhex(d["hash"])
            ok = self.check(seq, h, bytes.fromhex(d["mac"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            ok = False
        if not ok:
            raise StoreError(f"the ledger anchor {self.head_path} is unreadable or was edited")
        return seq, h


# --- the folder's home: where the data folder of an id lives ----------------------------------
#
# A plain copy of a data folder (``cp -r``) carries its folder id: both would read and write the
# one key's anchor, and whichever wrote last would make the other look tampered with. So the key
# folder records, beside each id, the folder that holds it; a folder found elsewhere while that
# one still holds a ledger is a copy, and becomes a folder of its own (``Ledger._become_copy``).


def home_path(directory: str, folder_id: str) -> str:
    return os.path.join(directory, f"{folder_id}.home")


def read_home(directory: str, folder_id: str) -> str | None:
    try:
        with open(home_path(directory, folder_id), "rb") as f:
            return f.read().decode(errors="replace").strip() or None
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {home_path(directory, folder_id)}: {exc.strerror}") from None


def write_home(directory: str, folder_id: str, folder: str) -> None:
    path = home_path(directory, folder_id)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(folder.encode())
        os.replace(tmp, path)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror}") from None


# --- the erasure journal: which memories a folder's line has erased, outside the folder -------
#
# A backup holds the data keys of what was live when it was taken. A memory erased afterwards
# must not come back when that backup is restored, even if the data folder itself is gone: so
# every erasure's memory ids (random hex ids, nothing of the content) are appended here, beside
# the key, under the folder's *lineage* (its first folder id, kept by restores), and a restore
# erases them again. Forks start a lineage of their own (they never held what came after them).


def journal_path(directory: str, lineage: str) -> str:
    return os.path.join(directory, f"{lineage}.erased")


def record_erased(directory: str, lineage: str, memory_ids: list[str]) -> None:
    """Append erased memory ids (one a line, fsynced) to the lineage's journal."""
    if not memory_ids:
        return
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(journal_path(directory, lineage), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as f:
        f.write("".join(f"{m}\n" for m in memory_ids).encode())
        f.flush()
        os.fsync(f.fileno())


def read_erased(directory: str, lineage: str) -> set[str] | None:
    """The memory ids the lineage has erased (None: no journal there)."""
    try:
        with open(journal_path(directory, lineage), "rb") as f:
            return {line.strip() for line in f.read().decode(errors="replace").splitlines() if line.strip()}
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read the erasure journal in {directory}: {exc.strerror}") from None
