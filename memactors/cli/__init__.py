"""The command line: thin commands over library calls.

    memactors up                      start a long-lived local runtime for a data folder
    memactors write SCOPE TEXT ...    write one memory through the gate
    memactors recall QUERY ...        recall through the recall contract
    memactors forget MEMORY_ID ...    erase one memory
    memactors grant ACTOR SCOPE ...   grant (or revoke) read / write on a scope
    memactors grants [ACTOR]          list grants
    memactors audit verify            walk the ledger's hash chain
    memactors audit recall ID         the evidence logged for one recall
    memactors audit head              the ledger's newest seq: a point to come back to
    memactors audit at T              the memories of a scope as they stood at T (seq or time)
    memactors rollback ... [--dry-run]   undo by compensating events: --to T, --memory-id, --source-kind/--by
    memactors fork PATH [--at T]      a new data folder as of a point; this one untouched
    memactors history MEMORY_ID ...   every version of a memory's fact, and why it changed
    memactors backup DEST             a consistent copy of the folder while it runs
    memactors restore SRC --to DIR    a verified restore of a backup into a new folder
    memactors explain / cite ID ...   why a recall's hits came back; which ones were used
    memactors scan [--text T]         run the write gate alone, no store
    memactors review list|approve|reject   the review queue of held writes
    memactors review due|confirm|retire    memories due for their periodic review
    memactors bench thresholds ...    the retrieval-threshold harness on a store of its own
    memactors gc [--dry-run]          a lifecycle sweep: plan by rule and tenant, then apply
    memactors contradictions ...      close calls between sources, waiting for a reviewer
    memactors stats                   lifecycle counters, memories by status, pool, tenant
    memactors eval [--set small]      the release gate: governance counters and must-recall on a store of its own
    memactors rebuild                 rebuild L2 from the ledger alone
    memactors purge                   erased bytes out of storage now
    memactors simulate --config F     the batch simulation: memactors beside a plain store, judged
    memactors demo --fresh            a narrated walk through all of it
    memactors mcp [--http --tokens F]   the memory as MCP tools (stdio, or streamable HTTP with bearer tokens)
    memactors down                    stop the long-lived runtime

Every verb takes ``--data DIR`` (default ``.memactors-data``, or $MEMACTORS_DATA) and ``--json``.
When ``DIR/runtime.json`` exists (written by ``memactors up``) a verb attaches to that runtime
in about a second; otherwise it starts an embedded runtime for the one command and closes it
(``memactors.server`` holds that lifecycle).

Layout: ``group`` holds the click group and the shared options, ``output`` the one output
module; every other module is a family of commands and registers them on the group when
imported here. Nothing imports Ray until a command runs.

Exit codes: 0 ok, 1 the ledger does not verify or a gate failed (`eval`; `bench thresholds` when
a governance counter is not 0), 2 a user error (one line on stderr).
"""

from __future__ import annotations

from memactors.cli import (  # noqa: F401 - registration
    audit, backup, bench, demo, eval, explain, gate, grants, history, lifecycle, listing, maintenance, mcp, memory,
    review, server, simulate)
from memactors.cli.group import cli

__all__ = ["cli", "main"]


def main() -> None:
    """The console script ``memactors``."""
    cli(prog_name="memactors")
