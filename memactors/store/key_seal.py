"""A ledger key sealed under a passphrase, for a backup that must restore without its key
folder (``rt.backup(dest, key_passphrase=...)``, docs/threat-model.md).

Only ``cryptography``'s primitives: scrypt (a random 16-byte salt) turns the passphrase into a
256-bit wrapping key, and AES-256-GCM (a random 12-byte nonce) encrypts the ledger key with
the folder id as associated data, so a sealed key moved to another folder's backup does not
open. The sealed file is JSON: the KDF and its parameters, salt, nonce and ciphertext (hex).

A sealed key is as strong as its passphrase: whoever holds the backup can try passphrases
offline, each costing one scrypt run (about 0.35 s and 128 MiB at the default cost). So a
passphrase has at least ``MIN_PASSPHRASE`` characters; use a long random one, kept apart from
the backups.
"""

from __future__ import annotations

import os

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from ..core.errors import InvalidRecord, LedgerTampered

VERSION = 1
N, R, P = 2**17, 8, 1  # scrypt's cost: 128 MiB, about 0.35 s on one core of a small machine
MIN_PASSPHRASE = 12
MAX_PASSPHRASE = 4096
_MAX_MEMORY = 256 * 2**20  # what a sealed file may ask scrypt for (128 * N * R bytes): a larger one is refused
_AAD = b"memactors sealed ledger key v1:"


def check_passphrase(passphrase: object) -> str:
    """A key passphrase: text of MIN_PASSPHRASE..MAX_PASSPHRASE characters (InvalidRecord)."""
    if not isinstance(passphrase, str):
        raise InvalidRecord("key_passphrase is text (at least 12 characters)")
    if not MIN_PASSPHRASE <= len(passphrase) <= MAX_PASSPHRASE:
        raise InvalidRecord(f"key_passphrase has {MIN_PASSPHRASE} to {MAX_PASSPHRASE} characters: a short one "
                            "is guessed offline by whoever holds the backup")
    return passphrase


def _wrapping_key(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def seal(secret: bytes, folder_id: str, passphrase: str) -> bytes:
    """``secret`` (the ledger key) encrypted under ``passphrase`` for ``folder_id``: the sealed
    file's bytes."""
    check_passphrase(passphrase)
    salt, nonce = os.urandom(16), os.urandom(12)
    ct = AESGCM(_wrapping_key(passphrase, salt, N, R, P)).encrypt(nonce, secret, _AAD + folder_id.encode())
    return orjson.dumps({"version": VERSION, "folder_id": folder_id, "kdf": "scrypt", "n": N, "r": R, "p": P,
                         "salt": salt.hex(), "cipher": "aes-256-gcm", "nonce": nonce.hex(),
                         "ciphertext": ct.hex()}, option=orjson.OPT_INDENT_2)


def unseal(blob: bytes, folder_id: str, passphrase: str) -> bytes:
    """The ledger key a sealed file holds for ``folder_id``. LedgerTampered when the file is
    malformed, names another folder, or the passphrase does not open it (a wrong passphrase
    and a changed file are the same failure to AES-GCM)."""
    check_passphrase(passphrase)
    try:
        d = orjson.loads(blob)
        n, r, p = d["n"], d["r"], d["p"]
        ok = (isinstance(d, dict) and d["version"] == VERSION and d["kdf"] == "scrypt"
              and d["cipher"] == "aes-256-gcm" and all(type(v) is int for v in (n, r, p))
              and 2**14 <= n and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 4 and 128 * n * r <= _MAX_MEMORY)
        salt, nonce, ct = bytes.fromhex(d["salt"]), bytes.fromhex(d["nonce"]), bytes.fromhex(d["ciphertext"])
        ok = ok and len(salt) >= 16 and len(nonce) == 12 and len(ct) == 32 + 16
        sealed_for = d["folder_id"]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        ok = False
    if not ok:
        raise LedgerTampered("the backup's sealed key is malformed: it was changed after it was written")
    if sealed_for != folder_id:
        raise LedgerTampered("the backup's sealed key is another data folder's: it was changed after it was written")
    try:
        return AESGCM(_wrapping_key(passphrase, salt, n, r, p)).decrypt(nonce, ct, _AAD + folder_id.encode())
    except InvalidTag:
        raise LedgerTampered("the key passphrase does not open this backup's key (a wrong passphrase, or a sealed "
                             "key changed after it was written)") from None
