"""Planted secret values: generated with the shapes real ones have (valid check digits), and
found again by scanning text or the bytes of a backend's files.

A value is planted compact (no separators) so that a byte scan finds it exactly; the scanner
looks for each kind's shape, then keeps only values that were planted (a set lookup), so nothing
else that merely looks like a key is ever counted.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable

import numpy as np
import re2
from stdnum import luhn
from stdnum.cn import ric

from ..core.errors import ValidationError

KINDS = ("phone_cn", "resident_id_cn", "bank_card", "openai_key", "github_token", "aws_key_id")

_ALNUM = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
_UPPER_DIGITS = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", dtype=np.uint8)
_REGIONS = ("110101", "110102", "110105", "310101", "310104", "120101")  # existed for every birth year drawn
_EPOCH = _dt.date(1960, 1, 1)


def _chars(rng: np.random.Generator, alphabet: np.ndarray, n: int) -> str:
    return alphabet[rng.integers(0, alphabet.size, n)].tobytes().decode("ascii")


def _digits(rng: np.random.Generator, n: int) -> str:
    return "".join(map(str, rng.integers(0, 10, n)))


def make_secret(kind: str, rng: np.random.Generator) -> str:
    """One value of ``kind`` (one of KINDS), drawn from ``rng``; checksums are valid."""
    if kind == "phone_cn":
        return "1" + "3456789"[int(rng.integers(0, 7))] + _digits(rng, 9)
    if kind == "resident_id_cn":
        birth = _EPOCH + _dt.timedelta(days=int(rng.integers(0, 46 * 365)))
        body = _REGIONS[int(rng.integers(0, len(_REGIONS)))] + birth.strftime("%Y%m%d") + _digits(rng, 3)
        return body + ric.calc_check_digit(body + "0")  # stdnum expects a placeholder check digit
    if kind == "bank_card":
        body = "622202" + _digits(rng, 9)  # a UnionPay IIN, 16 digits with the Luhn digit
        return body + luhn.calc_check_digit(body)
    if kind == "openai_key":
        return "sk-proj-" + _chars(rng, _ALNUM, 40)
    if kind == "github_token":
        return "ghp_" + _chars(rng, _ALNUM, 36)
    if kind == "aws_key_id":
        return "AKIA" + _chars(rng, _UPPER_DIGITS, 16)
    raise ValidationError(f"unknown secret kind; known: {', '.join(KINDS)}")


# Shapes to look for. Digit runs are cut into every window of a planted length, so a value glued
# to other digits in a binary file (no separator between column values) is still found. RE2: the
# storage scan reads every byte of a data folder twice, ~11x faster than re over binary files.
_DIGIT_RUN = re2.compile(rb"[0-9]{11,}X?")
_KEYS = re2.compile(rb"sk-proj-[A-Za-z0-9]{40}|ghp_[A-Za-z0-9]{36}|AKIA[A-Z0-9]{16}")
_CHUNK = 8 << 20
_OVERLAP = 64  # longer than any planted value


class SecretScanner:
    """Finds planted values in text and files. Build it from ``(kind, value)`` pairs."""

    def __init__(self, planted: Iterable[tuple[str, str]]) -> None:
        self.kind_of: dict[bytes, str] = {v.encode("ascii"): k for k, v in planted}
        self._digit_lengths = sorted({len(v) for v in self.kind_of if v[:1].isdigit()})

    def add_from(self, planted: dict[str, str]) -> None:
        """Add the values of ``planted`` (value -> kind, insertion-ordered) not added yet."""
        for v, k in list(planted.items())[len(self.kind_of):]:
            self.kind_of[v.encode("ascii")] = k
            if v[:1].isdigit() and len(v) not in self._digit_lengths:
                self._digit_lengths = sorted({*self._digit_lengths, len(v)})

    def __len__(self) -> int:
        return len(self.kind_of)

    def find_bytes(self, data: bytes) -> set[bytes]:
        """Planted values present in ``data``: as raw bytes (utf-8 and ascii alike) and, after
        dropping NUL bytes, as utf-16-le or utf-32-le text."""
        if not self.kind_of:
            return set()
        found = self._find(data)
        if b"\x00" in data:
            found |= self._find(data.replace(b"\x00", b""))
        return found

    def find_text(self, text: str) -> set[bytes]:
        """Planted values present in a string (a recalled hit's content, say)."""
        return self._find(text.encode("utf-8", "replace")) if self.kind_of else set()

    def _find(self, data: bytes) -> set[bytes]:
        kinds = self.kind_of
        found = {m.group() for m in _KEYS.finditer(data) if m.group() in kinds}
        for m in _DIGIT_RUN.finditer(data):
            run = m.group()
            for n in self._digit_lengths:
                for i in range(len(run) - n + 1):
                    w = run[i:i + n]
                    if w in kinds:
                        found.add(w)
        return found

    def scan_paths(self, paths: Iterable[str]) -> set[bytes]:
        """Planted values in any file under ``paths`` (files or folders, walked), read in chunks."""
        found: set[bytes] = set()
        for path in paths:
            for file in _files(path):
                try:
                    with open(file, "rb") as f:
                        tail = b""
                        while chunk := f.read(_CHUNK):
                            found |= self.find_bytes(tail + chunk)
                            tail = chunk[-_OVERLAP:]
                except OSError:
                    continue  # a file removed while we walk (a WAL checkpointed): nothing to read
        return found

    def by_kind(self, values: Iterable[bytes]) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for v in values:
            out[self.kind_of[v]] += 1
        return out


def _files(path: str) -> Iterable[str]:
    if os.path.isfile(path):
        yield path
        return
    for root, _dirs, names in os.walk(path):
        for name in names:
            yield os.path.join(root, name)
