"""The command line reference, generated from the commands' own help:
``python -m memactors.cli_reference > docs/cli-reference.md`` (a test keeps the file in step)."""

from __future__ import annotations

import click

from memactors.cli import cli

WIDTH = 100


def _walk(group: click.Group, parent: click.Context, path: tuple[str, ...]):
    for name, cmd in sorted(group.commands.items()):
        # Each command's context made as the command line makes it (its settings, its parents').
        ctx = cmd.make_context(name, [], parent=parent, resilient_parsing=True)
        yield (*path, name), cmd, ctx
        if isinstance(cmd, click.Group):
            yield from _walk(cmd, ctx, (*path, name))


def render() -> str:
    out = ["# Command line reference", "",
           "Generated from each command's `--help` by `python -m memactors.cli_reference`; the overview is",
           "[cli.md](cli.md).", ""]
    root = cli.make_context("memactors", [], resilient_parsing=True, terminal_width=WIDTH, max_content_width=WIDTH)
    out += ["## memactors", "", "```", cli.get_help(root).rstrip(), "```", ""]
    for path, cmd, ctx in _walk(cli, root, ()):
        out += [f"## memactors {' '.join(path)}", "", "```", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
