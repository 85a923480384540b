"""OpenTelemetry (``memactors.integrations.otel``) with the SDK's in-memory exporters: one span
per memory op named after the GenAI memory operations, ids and decisions as attributes, never
content, a query or a gate match; duration and count metrics by operation."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

import memactors  # noqa: E402
from memactors.integrations.otel import instrument  # noqa: E402

S = "/org/acme/user/alice/"


def test_spans_and_metrics_carry_ids_never_content():
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(spans))
    with memactors.connect("memory://") as rt:
        instrument(rt, tracer_provider=tp, meter_provider=MeterProvider(metric_readers=[reader]))
        rt.grant("ag", S, write=True)
        ag = rt.agent("ag", scopes=[S])
        w = ag.remember("Alice's favourite tea is a smoky lapsang", subject="alice", predicate="tea", object="lapsang")
        w2 = ag.remember("Alice's favourite tea is now a green sencha", subject="alice", predicate="tea", object="sencha")
        ph = ag.remember("call alice on +1 415 555 2671 after six")
        r = ag.recall("smoky lapsang tea")
        ag.get(w2.memory_id)
        ag.forget(w2.memory_id, reason="asked")
        with pytest.raises(memactors.AccessDenied):
            ag.recall("anything", scopes=["/org/acme/user/bob/"])
        # the plain verbs are memory ops too (their own path, not the batch's)
        plain = rt.write(S, "written outside the handle: the facade's own path", actor="ag")
        rt.recall("written outside", actor="ag", allowed_scopes=[S], task_id="t", purpose="p")
        rt.forget(plain.memory_id, actor="ag", reason="asked")
    got = spans.get_finished_spans()
    ops = [s.attributes["gen_ai.operation.name"] for s in got]
    assert ops == ["create_memory", "update_memory", "create_memory", "search_memory", "search_memory",
                   "delete_memory", "create_memory", "search_memory", "delete_memory"]
    assert got[6].attributes["gen_ai.memory.id"] == plain.memory_id == got[8].attributes["gen_ai.memory.id"]
    assert got[0].name == f"create_memory {S}" and got[0].attributes["gen_ai.memory.id"] == w.memory_id
    assert got[2].attributes["memactors.decision"] == "redacted" and ph.memory_id == got[2].attributes["gen_ai.memory.id"]
    assert got[3].attributes["memactors.recall_id"] == r.recall_id
    assert list(got[3].attributes["gen_ai.memory.ids"]) == [h.memory_id for h in r.hits]
    dump = repr([(s.name, dict(s.attributes)) for s in got])
    for text in ("lapsang", "sencha", "415 555", "555 2671", "smoky", "favourite"):  # (not "415" alone: a hex id may hold it)
        assert text not in dump.replace("/org/acme/user/alice/", "")
    metrics = {m.name: m for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics
               for m in sm.metrics}
    assert {"gen_ai.client.operation.duration", "memactors.memory.operations"} <= set(metrics)
    counted = {tuple(sorted(p.attributes.items())): p.value for p in metrics["memactors.memory.operations"].data.data_points}
    assert counted[(("gen_ai.operation.name", "delete_memory"), ("memactors.outcome", "forgotten"))] == 2
