"""The folders a caller names (a data folder, a backup's, a restore's, a fork's): checked and
made before anything is written there, refused typed (``InvalidRecord`` for what is not a
path, ``StoreError`` for a path that cannot be that folder), the messages naming neither the
path nor the OS's words about it."""

from __future__ import annotations

import errno
import os
import shutil
from contextlib import contextmanager

from ..core import validate as V
from ..core.errors import InvalidRecord, StoreError
from ..store.layout import resolve


def _checked(path: object, what: str) -> str:
    """``path`` as a str: a str or path, not empty, no NUL."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        raise InvalidRecord(f"{what} takes a folder's path (a str or path), not {V.got(path)}")
    if "\0" in os.fspath(path) or not os.fspath(path).strip():
        raise InvalidRecord(f"{what}'s path is empty or holds a NUL character")
    try:  # a surrogate: "\ud800" is no file name's (the OS call raises), "\udcff" (a byte that is not
        os.fspath(path).encode("utf-8")  # UTF-8, escaped) is one DuckDB cannot open (std::bad_cast)
    except UnicodeEncodeError:
        raise InvalidRecord(f"{what}'s path is not UTF-8 text (it holds a surrogate)") from None
    return os.fspath(path)


def _made(dest: str, what: str) -> str:
    try:
        os.makedirs(dest, exist_ok=True)
    except (OSError, ValueError) as exc:
        code = getattr(exc, "errno", None)
        raise StoreError(f"{what} cannot make that folder ({errno.errorcode.get(code) or type(exc).__name__})") \
            from None
    return dest


def data_folder(path: object) -> str:
    """A data folder's canonical path (``store.layout.resolve``), the folder made if new."""
    return _made(resolve(_checked(path, "connect")), "connect")


@contextmanager
def new_folder(path: object, what: str, *, outside: str | None = None):
    """``path`` as a new (absent or empty) folder's real path, outside ``outside``, made now:
    a path that cannot be one is refused before anything is copied there. Used as ``with
    new_folder(...) as dest:``: when the block fails, what it made goes again (the folder and
    the parents made for it; an empty folder found there is emptied), so a failed backup,
    restore or fork leaves no empty or half-made folder that a retry would refuse."""
    dest = os.path.realpath(os.path.expanduser(_checked(path, what)))
    if outside is not None and os.path.commonpath([dest, outside]) == outside:
        raise StoreError(f"{what} needs a folder outside the data folder")
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise StoreError(f"{what} needs a new, empty folder: that one exists and is not empty")
    top = None if os.path.exists(dest) else dest  # the outermost folder this call makes
    while top is not None and not os.path.exists(os.path.dirname(top)):
        top = os.path.dirname(top)
    _made(dest, what)
    try:
        yield dest
    except BaseException:
        if top is not None:
            shutil.rmtree(top, ignore_errors=True)
        else:
            for name in os.listdir(dest):
                p = os.path.join(dest, name)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    os.remove(p)
        raise
