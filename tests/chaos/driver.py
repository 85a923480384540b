"""A driver process for the chaos tests: it connects to a data folder, runs a recorded workload
(or collects what the checker needs) and may be killed at any moment by the test.

    python driver.py SPEC_JSON

SPEC (a JSON file) names: ``data`` (the data folder), ``hist`` (a history folder outside it),
``address`` (a Ray address to join; None: a local Ray of the driver's own, under ``temp_dir``
when given), ``detached`` (attach to a ``memactors up`` runtime), ``config``, ``mode``
("work", "collect" or "gc": one ``rt.gc()``, not before the time ``not_before``), ``client``, ``seed``,
``scopes``, ``ops`` (per thread), ``threads`` (each "single" or "batched"), ``grant`` (grant the
workload's actors first), ``ready`` (a file created once connected) and ``out`` (collect: where
the JSON goes; work: counts).

Work mode also interleaves ``audit.verify()`` calls when ``verify_every`` is set, and records a
verify that is not ok in ``out`` (a false alarm while nothing is wrong is a failure).
"""

from __future__ import annotations

import os
import sys
import threading
import time

import orjson


def main(spec_path: str) -> int:
    spec = orjson.loads(open(spec_path, "rb").read())
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    if spec.get("key_dir"):
        os.environ["MEMACTORS_KEY_DIR"] = spec["key_dir"]
    import ray

    import memactors
    from memactors.testing import History, Workload, collect

    if spec.get("temp_dir") and not spec.get("address"):
        # A Ray of this driver's own, under a temp dir the test can find its processes by.
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 configure_logging=False, _temp_dir=spec["temp_dir"])
    rt = memactors.connect(spec["data"], address=spec.get("address"), config=spec.get("config"),
                           detached=bool(spec.get("detached")))
    out: dict = {"pid": os.getpid(), "verify_alarms": []}
    try:
        if spec.get("grant"):
            from memactors.core.scopes import parse_scope

            orgs = sorted({parse_scope(s).org for s in spec["scopes"]})
            rt.grant_many([{"actor": "agent", "scope": f"/org/{o}/", "write": True} for o in orgs]
                          + [{"actor": "checker", "scope": "/global/"}])
        if spec["mode"] == "gc":  # a sweep; ``ready`` + "." + step is created as each step starts
            def progress(step: str) -> None:
                if spec.get("ready"):
                    open(f"{spec['ready']}.{step}", "w").close()

            time.sleep(max(0.0, spec.get("not_before", 0.0) - time.time()))  # what it sweeps is due by then
            out["gc"] = rt.gc(progress=progress).by_rule
        elif spec["mode"] == "collect":
            c = collect(rt, spec["scopes"], actor="checker")
            out.update(ledger_events=c.ledger_events, store_rows=c.store_rows, verify=c.verify, notes=c.notes)
        else:
            if spec.get("ready"):
                open(spec["ready"], "w").close()
            wl = Workload(spec["scopes"], actor="agent", seed=spec["seed"], gate_mix=True,
                          working=spec.get("working", 0.05), mix=tuple(spec.get("mix", (0.75, 0.08, 0.17))),
                          lower_confidence=spec.get("lower_confidence", 0.15), shared=spec.get("shared", 0.2))
            counts: dict = {}
            left, lock, done = [len(spec["threads"])], threading.Lock(), threading.Event()

            def run(i: int, kind: str) -> None:
                try:
                    h = History(os.path.join(spec["hist"], f"{spec['client']}-{i}.jsonl"),
                                client=f"{spec['client']}-{i}")
                    if kind == "batched":
                        counts[i] = wl.run_batched(rt, h, spec["ops"], batch=spec.get("batch", 20))
                    else:
                        counts[i] = {k: v for k, v in wl.run(rt, h, spec["ops"]).items() if k != "memory_ids"}
                    h.close()
                finally:
                    with lock:
                        left[0] -= 1
                        if not left[0]:
                            done.set()

            threads = [threading.Thread(target=run, args=(i, k)) for i, k in enumerate(spec["threads"])]
            for t in threads:
                t.start()
            every = spec.get("verify_every_s")
            while not done.is_set():
                done.wait(every or 0.1)  # woken as the work ends, not up to ``every`` later
                if every:
                    v = rt.audit.verify()
                    if not v["ok"]:
                        out["verify_alarms"].append(v)
            for t in threads:
                t.join()
            out["counts"] = counts
    finally:
        if spec.get("out"):
            tmp = spec["out"] + ".tmp"
            with open(tmp, "wb") as f:
                f.write(orjson.dumps(out, default=str, option=orjson.OPT_NON_STR_KEYS))
            os.replace(tmp, spec["out"])
        rt.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
