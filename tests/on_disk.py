"""What a data folder holds on disk, for the tests that an erasure leaves nothing there."""

from __future__ import annotations

import glob
import os


def files_holding(data_dir: str, needle: bytes) -> list[str]:
    """The files under ``data_dir`` whose bytes contain ``needle``."""
    found = []
    for p in glob.glob(os.path.join(data_dir, "**", "*"), recursive=True):
        if os.path.isfile(p):
            with open(p, "rb") as f:
                if needle in f.read():
                    found.append(p)
    return found
