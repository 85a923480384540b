"""`memactors backup` and `memactors restore`: a consistent copy of a data folder taken while
it runs, and a verified restore into a new folder (docs/cli.md, docs/threat-model.md). A
passphrase is read from an environment variable named on the command line, never taken as a
value there (a command line is seen by other users and kept in shell histories)."""

from __future__ import annotations

import os

import click

from memactors.cli.group import CliError, cli, common
from memactors.cli.output import Out

PASSPHRASE_HELP = ("The environment variable NAME holds the key passphrase (at least 12 characters; never "
                   "give a passphrase itself on the command line).")


def passphrase_from(name: str | None) -> str | None:
    """The passphrase in the environment variable ``name`` (None when no name is given)."""
    if name is None:
        return None
    value = os.environ.get(name)
    if not value:
        raise CliError(f"--key-passphrase-env {name}: that environment variable is not set or empty")
    return value


@cli.command()
@click.argument("dest")
@click.option("--key-passphrase-env", "passphrase_env", metavar="NAME",
              help="Also seal the folder's key into the backup under a passphrase, for a restore that has lost "
                   "the key folder. " + PASSPHRASE_HELP)
@common
def backup(dest: str, passphrase_env: str | None, data: str, as_json: bool) -> None:
    """Copy the data folder into the new folder DEST while it runs (writes go on): the ledger
    as one snapshot saw it, L2 as of the same applied events, and the anchor of its last event.
    The key is not in it (a restore needs the key folder) unless sealed with
    --key-passphrase-env. Nothing erased before the backup is in it; what is erased after it is
    erased again on restore."""
    from memactors.server import open_runtime

    out = Out(as_json)
    passphrase = passphrase_from(passphrase_env)
    with open_runtime(data) as (rt, _mode):
        res = rt.backup(dest, key_passphrase=passphrase)
    if as_json:
        out.json(res)
        return
    out.kv([("path", res["path"]), ("seq", res["seq"]), ("events", res["events"]), ("L2 rows", res["rows"]),
            ("key", "sealed under the passphrase" if res["key"] == "sealed" else "none (restore needs the key folder)"),
            ("bytes", f"{res['bytes']:,}"), ("seconds", res["seconds"]["total"])])


@cli.command()
@click.argument("src")
@click.option("--to", "to", metavar="DIR", help="The new, empty data folder to restore into (default: --data).")
@click.option("--config", "config", metavar="FILE",
              help="A TOML config (its [runtime].key_dir: where the key is looked for and goes).")
@click.option("--key-passphrase-env", "passphrase_env", metavar="NAME",
              help="Open the key sealed in the backup (needed when the key folder lacks the key). " + PASSPHRASE_HELP)
@click.option("--no-verify", is_flag=True, help="Skip opening the restored folder to run audit verify.")
@click.option("--accept-lost-erasures", is_flag=True,
              help="Restore with the key sealed in the backup although the key folder holds no erasure journal for "
                   "it: memories erased after the backup come back (erase them again).")
@common
def restore(src: str, to: str | None, config: str | None, passphrase_env: str | None, no_verify: bool,
            accept_lost_erasures: bool, data: str, as_json: bool) -> None:
    """Restore the backup SRC as the new data folder DIR: the key is read from the key folder
    (or opened from the backup with --key-passphrase-env), the backup is verified under it (a
    changed one is refused), restored under a new folder id with the same key, what its folder
    erased since the backup is erased again, and the result is opened once to verify ledger and
    L2."""
    from memactors.runtime.backup import restore as do_restore

    out = Out(as_json)
    passphrase = passphrase_from(passphrase_env)
    # An empty --to (an unset shell variable) is refused, never read as "--data".
    if to is not None and not to.strip():
        raise CliError("--to is empty: name the new folder to restore into")
    res = do_restore(src, data if to is None else to, config=config, verify=not no_verify,
                     key_passphrase=passphrase, accept_lost_erasures=accept_lost_erasures)
    if as_json:
        out.json(res)
        return
    key_from = {"key_dir": "the key folder", "sealed": "sealed in the backup",
                "clear": "in clear in the backup (format 1)"}.get(res["key_from"], res["key_from"])
    out.kv([("path", res["path"]), ("backup seq", res["backup_seq"]), ("events", res["events"]),
            ("L2 rows", res["rows"]), ("erased again", res["erased_again"]),
            ("erasure journal", "found" if res["erasure_journal"] else "NOT found: later erasures unknown"),
            ("key from", key_from),
            ("verified", "yes" if res.get("verified", {}).get("ok") else "not checked"), ("seconds", res["seconds"])])
