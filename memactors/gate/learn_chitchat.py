"""Write the chit-chat rule's token weights (``rules/chitchat_model.py``) from a labelled set:

    .venv/bin/python -m memactors.gate.learn_chitchat tests/fixtures/chitchat.json

tests/test_gate_chitchat.py fails when the shipped weights are not what the set teaches.
"""

from __future__ import annotations

import json
import os
import sys

from .rules.low_value import learn


def render(weights: dict[str, float]) -> str:
    return ('"""Token weights of the chit-chat rule, learned from tests/fixtures/chitchat.json by\n'
            '``python -m memactors.gate.learn_chitchat tests/fixtures/chitchat.json``. Generated: do not edit."""\n\n'
            "WEIGHTS = {\n" + "".join(f"    {t!r}: {v!r},\n" for t, v in weights.items()) + "}\n")


def main(argv: list[str] | None = None) -> None:
    (path,) = argv if argv is not None else sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules", "chitchat_model.py")
    with open(out, "w", encoding="utf-8") as f:
        f.write(render(learn(d["chitchat"], d["keep"])))


if __name__ == "__main__":
    main()
