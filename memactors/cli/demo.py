"""`memactors demo`: the narrated walk behind the README's quickstart (`make run`)."""

from __future__ import annotations

import shlex
import time
from typing import Any

import click
from rich.text import Text

from memactors.cli.fresh import fresh as fresh_folder
from memactors.cli.fresh import refuse_used
from memactors.cli.group import cli, common
from memactors.cli.output import (
    GRANT_COLUMNS,
    HIT_COLUMNS,
    Out,
    decision_text,
    gate_summary,
    grant_rows,
    hit_rows,
    mask,
    print_evidence,
    short,
)
from memactors.core.errors import AccessDenied
from memactors.server import open_runtime


API_KEY_DEMO = "sk-proj-" + "d3m0K3yN0tR3al" + "x" * 16  # 30 characters after the prefix; the gate blocks it

ACME_ALICE = "/org/acme/user/alice/"
ACME_BOB = "/org/acme/user/bob/"
ACME = "/org/acme/"
GLOBEX_CAROL = "/org/globex/user/carol/"


@cli.command()
@click.option("--fresh", is_flag=True, help="Delete DIR first (only if it looks like a memactors data folder).")
@common(json_help="Print one JSON object per step, a line each, instead of the narration.")
def demo(fresh: bool, data: str, as_json: bool) -> None:
    """A narrated walk: two tenants, grants, the write gate, recall, an update, a forget,
    refused and cross-tenant recalls, and the ledger verified. It runs on a new folder: one that
    already holds a ledger is refused unless --fresh deletes it first."""
    out = Out(as_json)
    t_all = time.monotonic()
    if fresh:
        fresh_folder(data)
    else:
        refuse_used(data)
    step_no = 0

    def step(key: str, title: str, note: str, **payload: Any) -> None:
        nonlocal step_no
        step_no += 1
        if as_json:
            out.json({"step": step_no, "key": key, "title": title, **payload})
        else:
            out.heading(f"{step_no}. {title}", note)

    t0 = time.monotonic()
    with open_runtime(data, create=True) as (rt, mode):
        if mode == "attached":  # an `up` runtime's folder: used or not, only its ledger can tell
            refuse_used(data, rt.audit.head()["seq"])
        connect_s = time.monotonic() - t0
        step("connect", "Open the data folder",
             "A runtime in this process, no Ray (`memactors up` serves one to many clients): the ledger "
             "(DuckDB) and the scope owners (LanceDB L2)." if mode == "embedded" else
             "The runtime `memactors up` serves for this folder: a ledger-writer actor (DuckDB) and "
             "scope-owner actors (LanceDB L2) on its Ray.",
             data_dir=rt.data_dir, namespace=rt.namespace, mode=mode, seconds=round(connect_s, 2))
        out.kv([("data", rt.data_dir), ("namespace", rt.namespace),
                ("runtime", f"{mode} ("
                            f"{'attached to `memactors up`' if mode == 'attached' else 'started for this demo'})"),
                ("took", f"{connect_s:.1f} s")])

        # -- grants
        plan = [
            ("assistant-alice", ACME_ALICE, True, True),
            ("assistant-bob", ACME_BOB, True, True),
            ("assistant-carol", GLOBEX_CAROL, True, True),
            ("admin", ACME, True, True),
        ]
        granted = [rt.grant(a, s, read=r, write=w, by="demo-admin") for a, s, r, w in plan]
        step("grants", "Grants: who may read and write where",
             "Two tenants (acme, globex). A grant covers its scope and every descendant; no grant, no access. "
             "An assistant still sees its org's memories: /org/acme/ is an ancestor of alice's scope.",
             grants=granted)
        out.table(GRANT_COLUMNS, grant_rows(granted))

        # -- writes through the gate
        writes = [
            dict(scope=ACME, actor="admin",
                 text="Acme default: meeting notes are written in English and shared within 24 hours."),
            dict(scope=ACME_ALICE, actor="assistant-alice",
                 text="Alice prefers green tea, no sugar, in the afternoon."),
            dict(scope=ACME_ALICE, actor="assistant-alice", text="爱丽丝下午喜欢喝乌龙茶，不加糖。"),
            dict(scope=ACME_ALICE, actor="assistant-alice",
                 text="Alice's mobile is +86 138 1234 5678; call her after 6pm."),
            dict(scope=ACME_ALICE, actor="assistant-alice", text=f"Alice's deploy key is {API_KEY_DEMO}"),
            dict(scope=ACME_ALICE, actor="assistant-alice", text="Alice dislikes brand X's teas.",
                 subject="alice", predicate="opinion_of_brand_x", object="dislikes"),
            dict(scope=ACME_BOB, actor="assistant-bob", text="Bob is allergic to peanuts; never suggest nut snacks."),
            dict(scope=ACME_BOB, actor="assistant-bob", text="Bob prefers aisle seats on flights."),
            dict(scope=GLOBEX_CAROL, actor="assistant-carol",
                 text="Carol drinks black coffee every morning, never tea."),
        ]
        results = rt.write_many(writes)
        phone_id = results[3].memory_id
        brand_v1 = results[5]
        rows, payload = [], []
        for w, r in zip(writes, results):
            shown = mask(w["text"], r.gate)
            rows.append([w["actor"], w["scope"], Text(shown), decision_text(r.decision), short(r.memory_id),
                         gate_summary(r.gate)])
            payload.append({"actor": w["actor"], "scope": w["scope"], "text": shown, **r.to_dict()})
        step("writes", "Writes through the gate",
             "Every write is scanned before anything is stored: the phone number is redacted to a "
             "placeholder, the API key blocks the write (nothing of it is stored, the ledger included).",
             writes=payload)
        out.table(["actor", "scope", "text (matched spans masked)", "decision", "id", "gate"], rows)

        # -- recall
        def do_recall(query: str, actor: str, scopes: list[str], task: str, top_k: int = 5):
            return rt.recall(query, actor=actor, task_id=task, allowed_scopes=scopes, purpose="answer", top_k=top_k)

        r_en = do_recall("what tea does alice like to drink?", "assistant-alice", [ACME_ALICE], "demo-tea")
        r_zh = do_recall("爱丽丝喜欢喝什么茶", "assistant-alice", [ACME_ALICE], "demo-tea", top_k=3)
        step("recall", "Recall through the recall contract",
             "A recall names its actor, task, purpose and allowed scopes; it sees those scopes and their "
             "ancestors (alice's scope, acme's org scope, /global/). The stored phone memory reads [PHONE_CN].",
             recalls=[{"query": "what tea does alice like to drink?", **r_en.to_dict()},
                      {"query": "爱丽丝喜欢喝什么茶", **r_zh.to_dict()}])
        out.table(HIT_COLUMNS, hit_rows(r_en.hits),
                  title="assistant-alice: \"what tea does alice like to drink?\"  "
                        f"(recall {short(r_en.recall_id, 12)}, "
                        f"{r_en.path})")
        out.table(HIT_COLUMNS, hit_rows(r_zh.hits), title="assistant-alice: \"爱丽丝喜欢喝什么茶\"  (top 3)")
        out.line(f"visible scopes: {', '.join(r_en.visible_scopes)}", style="dim")

        # -- update: a new version
        v2 = rt.write(ACME_ALICE, "Alice now likes brand X's new spring series of teas.", actor="assistant-alice",
                      subject="alice", predicate="opinion_of_brand_x", object="likes the new series")
        r_brand = do_recall("alice opinion of brand X teas", "assistant-alice", [ACME_ALICE], "demo-brand")
        old_seen = any(h.memory_id == brand_v1.memory_id for h in r_brand.hits)
        step("update", "An update makes a new version",
             "Same subject+predicate (alice / opinion_of_brand_x), a new object, equal confidence: version "
             f"{v2.version} supersedes version {brand_v1.version}; only the new version is recalled.",
             previous=brand_v1.to_dict(), update=v2.to_dict(), recall=r_brand.to_dict(), old_version_recalled=old_seen)
        out.kv([("decision", decision_text(v2.decision)), ("new memory", f"{short(v2.memory_id)} v{v2.version}"),
                ("supersedes", f"{short(v2.supersedes)} v{brand_v1.version}"),
                ("old version recalled", Text("yes" if old_seen else "no", style="red" if old_seen else "green"))])
        out.table(HIT_COLUMNS, hit_rows(r_brand.hits), title="assistant-alice: \"alice opinion of brand X teas\"")

        # -- forget
        fg = rt.forget(phone_id, actor="assistant-alice", reason="alice asked to remove her phone number")
        r_phone = do_recall("how can I call alice? her mobile phone number", "assistant-alice", [ACME_ALICE],
                            "demo-phone")
        seen = any(h.memory_id == phone_id for h in r_phone.hits)
        step("forget", "Forget is erasure",
             "A tombstone event; the L2 row and caches are gone and the memory's data key is destroyed. "
             "It is not recalled again.",
             forget=fg, recall=r_phone.to_dict(), forgotten_recalled=seen)
        out.kv([("decision", decision_text(fg.get("decision"))), ("memory", fg.get("memory_id")),
                ("recalled afterwards", Text("yes" if seen else "no", style="red" if seen else "green"))])
        out.table(HIT_COLUMNS, hit_rows(r_phone.hits), title="assistant-alice: \"how can I call alice? ...\"")

        # -- refused
        attempts = [
            ("assistant-alice recalls bob's scope",
             lambda: do_recall("what is bob allergic to?", "assistant-alice", [ACME_BOB], "demo-probe")),
            ("assistant-alice writes acme's org scope",
             lambda: rt.write(ACME, "Everyone at acme loves green tea.", actor="assistant-alice")),
            ("assistant-carol recalls alice's scope",
             lambda: do_recall("alice's tea", "assistant-carol", [ACME_ALICE], "demo-probe")),
        ]
        refused = []
        for label, call in attempts:
            try:
                call()
                refused.append({"attempt": label, "refused": False, "error": None, "message": "allowed (unexpected)"})
            except AccessDenied as exc:
                refused.append({"attempt": label, "refused": True, "error": type(exc).__name__, "message": str(exc)})
        step("refused", "Grants stop what the model asks for",
             "The host sets the agent's identity; the model picks queries and scopes. Grants refuse the rest.",
             attempts=refused)
        out.table(["attempt", "result", "message"],
                  [[a["attempt"], Text(a["error"] or "allowed", style="red" if a["refused"] else "bold yellow"),
                    Text(a["message"])] for a in refused])

        # -- cross tenant
        r_x = do_recall("alice's tea", "assistant-carol", [GLOBEX_CAROL], "demo-cross")
        acme_hits = [h for h in r_x.hits if h.scope.startswith("/org/acme/")]
        step("cross_tenant", "Cross-tenant recall",
             "assistant-carol recalls \"alice's tea\" with her own scope: only globex and /global/ are visible, "
             "so nothing of acme's can come back.",
             recall=r_x.to_dict(), acme_hits=len(acme_hits))
        out.table(HIT_COLUMNS, hit_rows(r_x.hits), title="assistant-carol: \"alice's tea\"", empty="no hits")
        out.kv([("visible scopes", r_x.visible_scopes),
                ("acme memories returned", Text(str(len(acme_hits)), style="red" if acme_hits else "bold green"))])

        # -- audit
        v = rt.audit.verify()
        rt.flush()
        ev = rt.audit.recall(r_en.recall_id, actor="assistant-alice")
        step("audit", "The ledger verifies",
             "Every write, grant, update and erasure is a hash-chained ledger event; erasure destroyed a data "
             "key without breaking the chain. Each recall logged ids and scores, the query only as a keyed digest.",
             verify=v, recall_evidence=ev)
        out.kv([("ok", Text("yes" if v.get("ok") else "NO", style="bold green" if v.get("ok") else "bold red")),
                ("events", v.get("events")), ("first bad seq", v.get("first_bad_seq"))])
        if ev is not None and not as_json:
            out.line(Text(f"evidence of recall {short(r_en.recall_id, 12)}:", style="bold"))
            print_evidence(out, ev)
    secs = time.monotonic() - t_all
    step("done", "Done", f"Runtime closed. {secs:.1f} s in all.", seconds=round(secs, 2), ok=bool(v.get("ok")))
    if not as_json:
        out.line(Text("try: memactors recall \"alice tea\" --actor assistant-alice --task-id t1 "
                      f"--scope {ACME_ALICE} --purpose answer --data {shlex.quote(data)}", style="dim"))
