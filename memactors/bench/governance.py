"""A synthetic governance set, generated in code: memories that must never come back.

For each topic the recalling actor may read ``/org/gov/user/me/`` only, and the store also holds:
- the same fact in another user's scope and in another tenant (``cross_scope``);
- an older version of the fact, superseded by a newer write (``superseded``);
- a fact written with a hard expiry that has passed by recall time (``expired``);
- a fact that was erased with ``forget`` (``deleted``).

Every query is the fact's own wording, so any of them would rank first if the boundary leaked.
The harness counts them among returned hits at every configuration: each counter must stay 0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

ACTOR = "gov-bench"
ME = "/org/gov/user/me/"
OTHER_USER = "/org/gov/user/other/"
OTHER_TENANT = "/org/govx/user/me/"
KINDS = ("cross_scope", "expired", "superseded", "deleted")
EXPIRY_TTL_DAYS = 1e-5  # 0.864 s: long enough to be written and acknowledged, past before recall

TOPICS = [
    ("drink", "green tea", "black coffee"), ("city", "Lisbon", "Oslo"), ("pet", "a grey cat", "a parrot"),
    ("sport", "rowing", "fencing"), ("editor", "vim", "emacs"), ("car", "a red hatchback", "a blue van"),
    ("book", "Dune", "Emma"), ("meal", "ramen", "paella"), ("hobby", "pottery", "chess"),
    ("music", "jazz piano", "sea shanties"), ("airline", "a budget airline", "the night train"),
    ("bank", "a credit union", "an online bank"),
]


@dataclass(slots=True)
class GovSet:
    queries: list[dict] = field(default_factory=list)  # {qid, query, allowed_scopes, forbidden: {id: kind}}
    expires_at: float = 0.0  # wall time after which the expiring memories are past their expiry
    written: dict = field(default_factory=dict)  # kind -> count planted

    def wait_for_expiry(self) -> float:
        """Sleep until the planted expiries have passed; returns the seconds slept."""
        left = self.expires_at - time.time()
        if left > 0:
            time.sleep(left)
        return max(0.0, left)


def _fact(i: int, topic: str, value: str, tag: str = "") -> str:
    return f"Member {i} {tag}favourite {topic} is {value}."


def build_governance(rt, n_topics: int = 8) -> GovSet:
    """Plant the governance set through ``rt`` (grants, writes, one forget per topic)."""
    topics = TOPICS[:n_topics]
    for scope in (ME, OTHER_USER, OTHER_TENANT):
        rt.grant(ACTOR, scope, write=True)
    gov = GovSet()
    items, kinds, idx = [], [], []
    for i, (topic, old, new) in enumerate(topics):
        entity = {"subject": f"member-{i}", "predicate": f"favourite_{topic}"}
        planted = [
            (ME, _fact(i, topic, old), entity | {"object": old}, "superseded"),  # v1, replaced just below
            (OTHER_USER, _fact(i, topic, new), {}, "cross_scope"),
            (OTHER_TENANT, _fact(i, topic, new), {}, "cross_scope"),
            (ME, _fact(i, topic, new, "temporary "), {"ttl_days": EXPIRY_TTL_DAYS}, "expired"),
            (ME, _fact(i, topic, new, "former "), {}, "deleted"),
        ]
        for scope, text, extra, kind in planted:
            items.append({"scope": scope, "text": text, "actor": ACTOR, **extra})
            kinds.append(kind)
            idx.append(i)
    t0 = time.time()
    first = rt.write_many(items)
    gov.expires_at = t0 + EXPIRY_TTL_DAYS * 86_400 + 0.05
    # The new version of each fact: the v1 written above becomes superseded.
    second = rt.write_many([{"scope": ME, "text": _fact(i, t, new), "actor": ACTOR, "subject": f"member-{i}",
                             "predicate": f"favourite_{t}", "object": new} for i, (t, _, new) in enumerate(topics)])
    forbidden: list[dict] = [{} for _ in topics]
    for res, kind, i in zip(first, kinds, idx):
        if res.memory_id is None:
            continue  # the gate kept it out: nothing to leak
        if kind == "deleted":
            rt.forget(res.memory_id, actor=ACTOR, reason="governance benchmark: must never be recalled")
        forbidden[i][res.memory_id] = kind
        gov.written[kind] = gov.written.get(kind, 0) + 1
    for i, ((topic, _, new), res) in enumerate(zip(topics, second)):
        gov.queries.append({"qid": f"gov-q{i}", "query": f"What is member {i}'s favourite {topic}?",
                            "allowed_scopes": [ME], "forbidden": forbidden[i], "expected": res.memory_id})
    return gov
