"""OpenTelemetry spans and metrics for memory operations, named after the GenAI semantic
conventions' memory operations (``pip install 'memactors[otel]'``).

``instrument(rt)`` observes every batch and the plain verbs' own paths (``rt.write`` /
``write_many``, ``rt.recall``, ``rt.forget``; ``rt.observe``): one span per op, ``{operation}
{store}``, with ``gen_ai.operation.name`` = ``create_memory`` / ``update_memory`` (a write that
made a new version or refreshed one) / ``search_memory`` (a recall or a read by key) /
``delete_memory``, ``gen_ai.memory.store.id`` = the scope, ``gen_ai.memory.id`` = the memory id
(a search: ``gen_ai.memory.ids``, the hits' ids, and ``gen_ai.memory.search.result.count``),
``memactors.decision`` (the gate's or the version decision), ``memactors.recall_id`` and
``error.type`` (our typed error's name) on a refusal. Metrics: ``gen_ai.client.operation.duration``
(seconds, by operation) and ``memactors.memory.operations`` (count, by operation and outcome).
Ids only: never a memory's content, a query or anything the gate matched. (Grants are not
memory operations and get no span; nor does a call refused before anything is sent, bad input
or no grant: it touched no memory, and its typed error reaches the caller.)
"""

from __future__ import annotations

from opentelemetry import metrics, trace

from ..core.errors import MemactorsError

_UPDATE = {"superseded_previous", "refreshed", "merged", "kept_as_superseded", "contradiction_queued"}


class Instrumentation:
    def __init__(self, rt, tracer_provider=None, meter_provider=None) -> None:
        self.tracer = trace.get_tracer("memactors", tracer_provider=tracer_provider)
        meter = metrics.get_meter("memactors", meter_provider=meter_provider)
        self.duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                               description="Duration of memory operations")
        self.count = meter.create_counter("memactors.memory.operations", description="Memory operations by outcome")
        rt.observe(self)

    def __call__(self, units: list, results: list, start_ns: int, end_ns: int) -> None:
        for unit, res in zip(units, results):
            if isinstance(unit, MemactorsError):
                continue  # refused at the door, before anything was sent: nothing of the store was touched
            kind, payload = unit
            op, attrs = _describe(kind, payload, res)
            if op is None:
                continue
            span = self.tracer.start_span(f"{op} {attrs.get('gen_ai.memory.store.id', '')}".strip(),
                                          kind=trace.SpanKind.CLIENT, start_time=start_ns, attributes=attrs)
            outcome = attrs.get("memactors.decision", "ok")
            if isinstance(res, MemactorsError):
                span.set_attribute("error.type", type(res).__name__)
                span.set_status(trace.Status(trace.StatusCode.ERROR, type(res).__name__))
                outcome = "error"
            span.end(end_time=end_ns)
            base = {"gen_ai.operation.name": op}
            if isinstance(res, MemactorsError):
                base["error.type"] = type(res).__name__
            self.duration.record((end_ns - start_ns) / 1e9, base)
            self.count.add(1, {**base, "memactors.outcome": outcome})


def _describe(kind: str, payload, res) -> tuple[str | None, dict]:
    ok = not isinstance(res, MemactorsError)
    if kind == "write":
        attrs = {"gen_ai.memory.store.id": payload.scope}
        op = "create_memory"
        if ok:
            attrs["memactors.decision"] = res.decision
            if res.memory_id:
                attrs["gen_ai.memory.id"] = res.memory_id
            if res.decision in _UPDATE:
                op = "update_memory"
        return op, {"gen_ai.operation.name": op, **attrs}
    if kind in ("recall", "recall_at"):
        plan = payload[0] if kind == "recall_at" else payload
        attrs = {"gen_ai.operation.name": "search_memory",
                 "gen_ai.memory.store.id": ",".join(plan.req.allowed_scopes)}
        if ok:
            attrs.update({"memactors.recall_id": res.recall_id, "gen_ai.memory.ids": [h.memory_id for h in res.hits],
                          "gen_ai.memory.search.result.count": len(res.hits)})
        return "search_memory", attrs
    if kind == "lookup":
        _actor, scope, _kw, _limit = payload
        attrs = {"gen_ai.operation.name": "search_memory", "memactors.lookup": True}
        if scope:
            attrs["gen_ai.memory.store.id"] = scope
        if ok:
            attrs.update({"gen_ai.memory.ids": [m.memory_id for m in res],
                          "gen_ai.memory.search.result.count": len(res)})
        return "search_memory", attrs
    if kind == "forget":
        attrs = {"gen_ai.operation.name": "delete_memory", "gen_ai.memory.id": payload.memory_id}
        if ok:
            attrs.update({"gen_ai.memory.store.id": res.scope, "memactors.decision": res.decision})
        return "delete_memory", attrs
    return None, {}


def instrument(rt, *, tracer_provider=None, meter_provider=None) -> Instrumentation:
    """Spans and metrics for every op ``rt`` runs through ``batch`` / ``abatch`` (the agent
    handle, the LangGraph store and the MCP tools all do) and through ``write`` / ``write_many``,
    ``recall`` and ``forget``. Default providers: the global ones."""
    return Instrumentation(rt, tracer_provider, meter_provider)
