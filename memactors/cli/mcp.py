"""`memactors mcp`: the memory as MCP tools (``memactors.integrations.mcp``; the [mcp] extra),
and `memactors mcp token`: a bearer token for the HTTP transport."""

from __future__ import annotations

import os
import sys

import click

from memactors.cli.group import CliError, Group, cli, common
from memactors.cli.output import Out
from memactors.core.scopes import check_identifier


@cli.group(cls=Group, invoke_without_command=True)
@click.option("--actor", help="stdio: the actor every call is made as (needs grants).")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio (bearer tokens).")
@click.option("--host", "bind", default="127.0.0.1", show_default=True,
              help="HTTP: the address to bind (loopback unless told otherwise).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="HTTP: the port.")
@click.option("--tokens", metavar="FILE", help="HTTP: the token file (digests only) mapping tokens to actors.")
@click.option("--runtime-host", type=click.Choice(["process", "ray"]), default="process", show_default=True,
              help="Where the runtime runs when no `memactors up` runtime is attached.")
@common(json_help="No effect: the stdio server's output is the MCP protocol, the HTTP server's one line "
                  "goes to stderr.")
@click.pass_context
def mcp(ctx: click.Context, actor: str | None, http: bool, bind: str, port: int, tokens: str | None,
        runtime_host: str, data: str, as_json: bool) -> None:
    """Serve the memory as MCP tools: remember, recall, forget, get, list (and add, search,
    delete).

    stdio (default): every call is --actor's. --http: streamable HTTP on --host:--port (loopback
    by default) at /mcp; each request's bearer token is looked up in --tokens (make one with
    `memactors mcp token ACTOR --tokens FILE`) and a missing or unknown token is refused. Grants,
    the write gate, evidence and the ledger apply to every call.
    """
    if ctx.invoked_subcommand is not None:
        return
    if actor is not None:  # refused now, not on every call of a server that looked healthy
        check_identifier(actor, "--actor")
    try:
        from memactors.integrations import mcp as M
    except ImportError as exc:
        raise CliError(str(exc)) from None
    if http == (tokens is None):
        raise CliError("--http needs --tokens FILE (and stdio takes --actor, no tokens)")
    if not http and not actor:
        raise CliError("stdio needs --actor (who the calls are made as)")
    import contextlib

    import memactors
    from memactors.server import open_runtime
    from memactors.store import runtime_file
    from memactors.store.layout import resolve

    with contextlib.ExitStack() as stack:
        if runtime_file.attachable(resolve(data), data) is not None:  # attach to the `memactors up` runtime
            rt, _ = stack.enter_context(open_runtime(data))
        else:
            rt = memactors.connect(data, host=runtime_host)
            stack.callback(rt.close)
        if not http:
            M.build(rt, actor=actor).run("stdio")  # stdout is the protocol's: nothing else is printed there
            return
        server = M.HTTPServer(M.build(rt, tokens=tokens, host=bind, port=port), host=bind, port=port).start()
        click.echo(f"memactors mcp: serving {server.url} (tokens: {tokens}); Ctrl-C stops", err=True)
        try:
            server.thread.join()
        except KeyboardInterrupt:
            server.stop()


@mcp.command("token")
@click.argument("actor")
@click.option("--tokens", metavar="FILE", required=True, help="The token file (created 0600 if missing).")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def token(actor: str, tokens: str, as_json: bool) -> None:
    """A new bearer token for ACTOR: its SHA-256 digest is added to FILE, the token printed once."""
    from memactors.integrations.mcp.tokens import mint

    if not tokens.strip() or not os.path.isdir(os.path.dirname(os.path.abspath(tokens))):
        raise CliError(f"--tokens {tokens!r}: name a file in a folder that exists")
    tok = mint(tokens, actor)
    out = Out(as_json)
    if as_json:
        out.json({"actor": actor, "token": tok, "tokens": tokens})
    else:
        click.echo(tok)
        click.echo(f"(for {actor}; only its digest is in {tokens}: keep the token, it is not shown again)",
                   err=True)
    sys.stdout.flush()
