"""The click group every command registers on, the options every store verb shares, and the
error a command raises for a user error it detects itself. Command modules import this module;
``memactors.cli`` imports the command modules: no import goes the other way."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

import memactors

DEFAULT_DATA = ".memactors-data"


class CliError(Exception):
    """A user error the CLI itself detects (printed as one line, exit code 2)."""


class Command(click.Command):
    """Names every missing required option at once (click names only the first, one per run)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            opts, _, _ = self.make_parser(ctx).parse_args(args=list(args))
        except click.NoSuchOption as exc:
            # Never quoted: what looks like a mistyped option may be a text that starts with dashes
            # (a PEM block, a secret). A close option's name is said instead.
            close = f" (did you mean {exc.possibilities[0]}?)" if exc.possibilities else ""
            raise click.UsageError(f"an argument starts with '-' and is no option of this command{close}: put `--` "
                                   "before a text that starts with a dash", ctx) from None
        except click.UsageError:
            return self._parse(ctx, args)  # click's own message for a malformed line
        if not ctx.resilient_parsing and not any(p.is_eager and p.name in opts for p in self.get_params(ctx)):
            missing = [p for p in self.params if isinstance(p, click.Option) and p.required
                       and p.name not in opts and p.resolve_envvar_value(ctx) is None]
            if len(missing) > 1:
                raise click.UsageError("missing options: " + ", ".join(p.opts[0] for p in missing), ctx)
        return self._parse(ctx, args)

    def _parse(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if "unexpected extra argument" in exc.message:  # click quotes them: an unquoted text, maybe a secret
                raise click.UsageError("unexpected extra arguments: quote a text of several words", ctx) from None
            raise


class Group(click.Group):
    """Turns user errors into one line on stderr and exit code 2 (never a traceback)."""

    command_class = Command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (memactors.MemactorsError, CliError) as exc:
            msg = str(exc) or type(exc).__name__
            click.echo(f"error: {msg.splitlines()[0] if msg else msg}", err=True)
            ctx.exit(2)
        except OSError as exc:  # the machine's refusal (permissions, a missing folder, a full disk): one line
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"error: {exc.strerror or type(exc).__name__}{where}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - not typed yet (a bug, or a library's refusal): one line all the same
            # Its message is not shown: it may quote the input (a path's bytes, a value).
            verb = " ".join(p for p in (ctx.command_path, ctx.invoked_subcommand) if p)
            click.echo(f"error: unexpected {type(exc).__name__} in `{verb}` (a bug: please report the command, "
                       "without its values)", err=True)
            ctx.exit(2)


POINT_HELP = "A ledger seq (e.g. 1200) or an ISO 8601 time (e.g. 2026-11-30T10:00:00Z)."


def parse_point(value: str) -> int | str:
    """A point in the ledger from the command line: a seq when all digits, else a time string
    (the runtime parses and checks it). An empty one is refused: it never means "now"."""
    if not value.strip():
        raise CliError("a point in time is empty: give a ledger seq (e.g. 1200) or an ISO 8601 time")
    # ASCII digits only: "²".isdigit() holds and int() refuses it; "٣" is no seq 3 either
    return int(value) if value.isascii() and value.isdigit() else value


def data_folder(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--data``: refused when empty (an unset shell variable: never the current folder) or when
    it names something that is not a folder (a file), before any verb reads or makes it."""
    if value is None:  # an optional --data left out
        return None
    if not value.strip():
        raise CliError("--data is empty: name the data folder" + (f" (or leave --data out for {param.default})"
                                                                   if param.default else ""))
    if os.path.exists(value) and not os.path.isdir(value):
        raise CliError(f"--data {value} is a file, not a data folder")
    return value


JSON_HELP = "Print the result as one JSON object, on one line, instead of tables."


def common(fn: Callable | None = None, *, json_help: str = JSON_HELP) -> Callable:
    """Add ``--data DIR`` and ``--json`` to a command that works on a data folder. A verb whose
    JSON is not one object (``list``: an array; ``demo``: an object per step) says so in
    ``json_help``: ``@common(json_help=...)``."""
    if fn is None:
        return lambda f: common(f, json_help=json_help)
    fn = click.option("--json", "as_json", is_flag=True, help=json_help)(fn)
    fn = click.option("--data", default=DEFAULT_DATA, show_default=True, envvar="MEMACTORS_DATA",
                      metavar="DIR", callback=data_folder,
                      help="The data folder (ledger, L2 store, runtime.json).")(fn)
    return fn


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(memactors.__version__, prog_name="memactors")
def cli() -> None:
    """memactors: a governed memory runtime for LLM agents, on Ray.

    Every verb but scan and mcp token works on one data folder (--data). Run `memactors up` once to keep a runtime
    alive so each verb attaches in about a second; without it, each verb starts (and stops)
    an embedded runtime of its own.
    """
