"""The rule modules' patterns compile on first use (``memactors.gate.rules.lazy``): the same
answers as ``re``'s, nothing compiled at import, and a pattern survives a copy or a pickle."""

from __future__ import annotations

import copy
import pickle
import re as real_re

from memactors.gate.rules import lazy
from memactors.gate.rules.lazy import re


def test_a_pattern_answers_as_re_and_compiles_once_used():
    p = re.compile(r"(?P<w>\b[a-z]+)(\d+)", re.I)
    assert p._compiled is None
    real = real_re.compile(r"(?P<w>\b[a-z]+)(\d+)", real_re.I)
    text = "Alice42 and bob7, not 99"
    assert [m.span() for m in p.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert p._compiled is not None
    assert p.search(text).group("w") == "Alice"
    assert p.sub("#", text) == real.sub("#", text)
    assert p.findall(text) == real.findall(text)
    assert p.fullmatch("x1") and not p.match("1x")
    assert (p.flags, p.groups, p.groupindex) == (real.flags, real.groups, real.groupindex)
    assert p.pattern == real.pattern


def test_the_shim_is_re_but_for_compile():
    assert re.I == real_re.I and re.escape("a.b") == real_re.escape("a.b")
    assert isinstance(re.compile("x"), lazy.Pattern)
    assert re.sub(r"\d", "#", "a1b2") == "a#b#"


def test_a_pattern_survives_a_copy_and_a_pickle():
    p = re.compile(r"ab+c", re.I)
    for q in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert q.search("xABBC").span() == (1, 5)
    p.search("abc")  # compiled, then copied
    assert pickle.loads(pickle.dumps(p)).search("ABC")


def test_every_rule_module_takes_its_patterns_from_the_shim():
    import importlib
    import pkgutil

    from memactors.gate import rules

    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"memactors.gate.rules.{info.name}")
        if info.name != "lazy" and hasattr(module, "re"):
            assert module.re is re, info.name  # a module with `import re` would compile its patterns at import
