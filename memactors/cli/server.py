"""`memactors up` and `memactors down`: the long-lived runtime of a data folder
(``memactors.server`` does the work)."""

from __future__ import annotations

import shlex

from rich.text import Text

from memactors import head, server
from memactors.cli.group import cli, common
from memactors.cli.output import Out


@cli.command()
@common
def up(data: str, as_json: bool) -> None:
    """Start a long-lived local runtime for DIR that the other verbs attach to.

    Starts a Ray head of its own (own port and temp dir; Ray's token authentication on unless
    RAY_AUTH_MODE=disabled), opens the data folder with detached ledger and owner actors, writes
    DIR/runtime.json and returns; the actors keep running until `memactors down`. Verbs and
    connect(DIR, detached=True) attach with nothing to set.
    """
    out = Out(as_json)
    res = server.up(data)
    if as_json:
        out.json(res)
    elif res["status"] == "already_up":
        out.line(Text(f"already up: {res['address']} (namespace {res.get('namespace')})", style="green"))
    else:
        out.kv([("status", Text("up", style="green")), ("address", res["address"]), ("namespace", res["namespace"]),
                ("data", res["data_dir"]), ("auth", _auth(res)), ("ray pid", res["ray_pid"]),
                ("ray log", head.log_path(res)), ("took", f"{res['seconds']:.1f} s")])
        out.line(Text(f"stop it with: memactors down --data {shlex.quote(data)}", style="dim"))


def _auth(res: dict) -> str:
    if res.get("auth") != "token":
        return str(res.get("auth", "Ray's default"))
    return f"Ray token ({res.get('token_file') or res.get('token_env')})"


@cli.command()
@common
def down(data: str, as_json: bool) -> None:
    """Stop the long-lived runtime of DIR started by `memactors up`.

    Flushes, checkpoints the ledger and releases its lock, stops the actors, stops that Ray head
    (only that one, by the pid in runtime.json) and whatever it left running, and removes
    DIR/runtime.json. A runtime.json copied from another folder is removed; nothing is stopped.
    """
    out = Out(as_json)
    res = server.down(data)
    if as_json:
        out.json(res)
    elif res["status"] == "not_up":
        out.line(f"no runtime is up for {res['data_dir']}")
    else:
        out.kv([("status", Text("down", style="green")), ("data", res["data_dir"]),
                *[("", s) for s in res["steps"]], ("took", f"{res['seconds']:.1f} s")])
