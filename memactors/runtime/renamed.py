"""Old parameter names kept for one release: each use warns (DeprecationWarning) and names the
new one; giving both is an error. One name per idea across the API: ``at`` a point in time,
``top_k`` a count, ``erase`` what a forget takes."""

from __future__ import annotations

import warnings

from ..core.errors import InvalidRecord

class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()  # the default of an old name: "not given" (None may be a real value)


def renamed(verb: str, old: str, old_value, new: str, new_value, default=None):
    """``new_value``, or (with a warning) ``old_value`` when the old name was given."""
    if old_value is UNSET:
        return new_value
    if new_value != default:
        raise InvalidRecord(f"{verb}: give {new}= only ({old}= is its old name)")
    warnings.warn(f"{verb}({old}=...) is deprecated and goes in the next release; use {new}=", DeprecationWarning,
                  stacklevel=3)
    return old_value
