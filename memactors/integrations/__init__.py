"""Adapters to where agents already are, each behind an extra: ``langgraph`` (a LangGraph
``BaseStore``), ``mcp`` (the memory as MCP tools), ``otel`` (OpenTelemetry spans and metrics).
Each goes through an agent handle (``rt.agent``) and ``rt.batch``: grants, the gate, evidence
and the ledger apply as everywhere."""
