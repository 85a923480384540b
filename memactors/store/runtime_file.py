"""``DIR/runtime.json``: where a folder's long-lived runtime (``memactors up``) is, and whether a
file found there is really this folder's and its head still runs.

The file names the folder it was written for (its path and the folder's identity, device and
inode), so a ``cp -r`` of a live folder, whose copied file still points at the original's
runtime, is recognised as a copy: nothing attaches through it and ``down`` never stops the
original through it. It records how to authenticate (the mode and Ray's token file, never the
token), never a secret.
"""

from __future__ import annotations

import contextlib
import os
import shlex

import orjson

from ..core.errors import ServerError
from .layout import Layout


def read(data_dir: str) -> dict | None:
    """The contents of ``data_dir``'s runtime.json, or None when there is none. Raises
    ServerError when it is unreadable or names no address."""
    path = Layout(data_dir).runtime_file
    try:
        with open(path, "rb") as f:
            info = orjson.loads(f.read())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ServerError(f"cannot read {path}: {exc}; remove it or run `memactors down`") from None
    if not isinstance(info, dict) or not isinstance(info.get("address"), str):
        raise ServerError(f"{path} has no address; remove it or run `memactors down`")
    return info


def write(data_dir: str, info: dict) -> None:
    # Atomic: a verb reading it concurrently sees the whole file or none.
    path = Layout(data_dir).runtime_file
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(info, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def remove(data_dir: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(Layout(data_dir).runtime_file)


def identity(data_dir: str) -> str:
    """The folder itself, not its name: a copy or a folder made again at the same path differs."""
    st = os.stat(data_dir)
    return f"{st.st_dev}:{st.st_ino}"


def belongs(info: dict, data_dir: str) -> bool:
    """True when ``info`` was written for this very folder (not copied here from another one).
    A file that names no folder (written by hand or by another tool) is trusted."""
    if "data_dir" in info and info["data_dir"] != data_dir:
        return False
    return "folder" not in info or info["folder"] == identity(data_dir)


def is_zombie(pid: int) -> bool:
    """True when ``pid`` has exited and waits for its parent to reap it."""
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b")")[-1].split()[0] == b"Z"
    return False


def gone(pid: int) -> bool:
    """True when no process ``pid`` runs (a zombie has ended; another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return is_zombie(pid)


def head_alive(info: dict) -> bool:
    """True when the ``ray start --block`` process that ``info`` names still runs and is ours:
    its command line names our temp dir, so a recycled pid is not mistaken for it. Without a pid
    (a file written by hand or another tool) the address is trusted."""
    pid = info.get("ray_pid")
    if not isinstance(pid, int) or pid <= 0:
        return True
    if gone(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True  # no /proc (or not ours to read): the pid check is all we have
    temp_dir = info.get("temp_dir")
    return "start" in cmd and (not temp_dir or temp_dir in cmd)


def attachable(data_dir: str, shown: str) -> dict | None:
    """The runtime.json of ``data_dir`` to attach through, or None when there is none. Raises
    ServerError (saying what to do) when the file is a copy's or names a head that is gone.
    ``shown`` is the folder as the user gave it, so the suggested command is the one they typed."""
    info = read(data_dir)
    if info is None:
        return None
    path = Layout(data_dir).runtime_file
    if not belongs(info, data_dir):
        raise ServerError(f"{path} was copied from {info.get('data_dir')} (this folder is a copy), so its runtime "
                          f"is not this folder's; `memactors down --data {shlex.quote(shown)}` removes the copied "
                          "file and leaves that runtime running")
    if not head_alive(info):
        raise ServerError(f"{path} names a runtime that is no longer running; "
                          f"run `memactors down --data {shlex.quote(shown)}` to clean up")
    return info
