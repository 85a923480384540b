"""Typed errors for calls that do not fit a public method's signature.

Python's own ``TypeError`` for a missing keyword names the class that defines the method
(``RecallAPI.recall()``, an internal mixin) and only the first missing argument; ``typed_calls``
wraps a class's public methods so the same call raises ``BadArguments`` naming the method as the
user calls it and every required argument missing. The wrapper costs nothing on a good call:
the signature is bound only after a ``TypeError``, and a ``TypeError`` from inside the method
(where binding succeeds) propagates unchanged. ``inspect.signature`` still shows the original.
"""

from __future__ import annotations

import functools
import inspect

from ..core.errors import BadArguments

_REQUIRED = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)


def _error(sig: inspect.Signature, call: str, args: tuple, kwargs: dict) -> BadArguments | None:
    """The typed error for a call that does not bind to ``sig`` (None: it binds)."""
    try:
        sig.bind(*args, **kwargs)
        return None
    except TypeError as exc:
        reason = str(exc)
    try:
        given = sig.bind_partial(*args, **kwargs).arguments
    except TypeError as exc:  # an unknown keyword or too many positions: say that first
        return BadArguments(f"{call}: {exc}")
    missing = [p.name for p in sig.parameters.values()
               if p.kind in _REQUIRED and p.default is inspect.Parameter.empty and p.name not in given]
    if missing:
        return BadArguments(f"{call} needs {', '.join(m + '=' for m in missing)} (missing); "
                            f"its arguments: {_shown(sig)}")
    return BadArguments(f"{call}: {reason}")


@functools.lru_cache(maxsize=64)
def _signature(fn) -> inspect.Signature:
    return inspect.signature(fn)


def check_as(fn, call: str, args: tuple, kwargs: dict) -> None:
    """Raise the ``BadArguments`` a call of ``fn`` with these arguments would: an async twin
    that takes ``**kw`` refuses what its sync method refuses, in the same words."""
    err = _error(_signature(fn), call, args, kwargs)
    if err is not None:
        raise err


def _shown(sig: inspect.Signature) -> str:
    return ", ".join(p.name + ("" if p.default is inspect.Parameter.empty else "=...")
                     for p in sig.parameters.values() if p.name != "self")


def _wrap(fn, call: str):
    sig = inspect.signature(fn)
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def awrapper(*args, **kwargs):
            try:
                coro = fn(*args, **kwargs)
            except TypeError:
                err = _error(sig, call, args, kwargs)
                if err is None:
                    raise
                raise err from None
            return await coro
        return awrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            err = _error(sig, call, args, kwargs)
            if err is None:
                raise
            raise err from None
    return wrapper


def typed_calls(prefix: str):
    """Class decorator: every public method (inherited ones too) raises ``BadArguments`` for a
    call that does not fit it, naming it ``<prefix>.<method>()``."""
    def decorate(cls):
        for name in dir(cls):
            if name.startswith("_"):
                continue
            fn = inspect.getattr_static(cls, name)
            if inspect.isfunction(fn):
                setattr(cls, name, _wrap(fn, f"{prefix}.{name}()"))
        return cls
    return decorate
