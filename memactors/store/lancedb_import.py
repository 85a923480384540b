"""``import lancedb`` without the start-up cost of a client L2 never uses. Import this module
before lancedb.

lancedb imports ``lance_namespace``, which needs only the models of the REST namespace
client (``lance_namespace_urllib3_client``). But that package's ``__init__`` also imports its
whole HTTP API, and pydantic builds a validator for each of its ~360 methods: 1.9 s of the
3.2 s that ``import lancedb`` took on the 2-core machine (``python -X importtime``), in every
process that opens L2 (each Ray owner, the process host's first write, every CLI verb). A
local table never calls that API. So the package is registered here with its ``__init__``
deferred: its submodules (the models) import as usual, and the first use of a name the
package itself defines (``ApiClient``, a ``*Api`` class) runs the real
``__init__`` in the same module object, so a REST namespace still works, only later.
"""

from __future__ import annotations

import importlib.util
import sys

_CLIENT = "lance_namespace_urllib3_client"


def _defer_client_init() -> None:
    if _CLIENT in sys.modules:  # imported already (by the caller's own code): nothing to save
        return
    spec = importlib.util.find_spec(_CLIENT)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)

    def __getattr__(name: str):
        del module.__dict__["__getattr__"]
        spec.loader.exec_module(module)  # the real __init__, in place
        return getattr(module, name)

    module.__getattr__ = __getattr__
    sys.modules[_CLIENT] = module


_defer_client_init()
