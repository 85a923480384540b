"""The command line reference, generated from the commands' own help:
``python -m memactors.cli_reference > docs/cli-reference.md`` (a test keeps the file in step)."""

from __future__ import annotations

import click

from memactors.cli import cli

WIDTH = 100


def _walk(group: click.Group, path: tuple[str, ...]):
    for name, cmd in sorted(group.commands.items()):
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from _walk(cmd, (*path, name))


def render() -> str:
    out = ["# Command line reference", "",
           "Generated from each command's `--help` by `python -m memactors.cli_reference`; the overview is",
           "[cli.md](cli.md).", ""]
    for path, cmd in _walk(cli, ()):
        ctx = click.Context(cmd, info_name=" ".join(("memactors", *path)), terminal_width=WIDTH, max_content_width=WIDTH)
        out += [f"## memactors {' '.join(path)}", "", "```", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
