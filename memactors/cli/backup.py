"""`memactors backup` and `memactors restore`: a consistent copy of a data folder taken while
it runs, and a verified restore into a new folder (docs/backup.md)."""

from __future__ import annotations

import click

from memactors.cli.group import cli, common
from memactors.cli.output import Out


@cli.command()
@click.argument("dest")
@common
def backup(dest: str, data: str, as_json: bool) -> None:
    """Copy the data folder into the new folder DEST while it runs (writes go on): the ledger
    as one snapshot saw it, L2 as of the same applied events, the key and its anchor. Nothing
    erased before the backup is in it; what is erased after it is erased again on restore."""
    from memactors.server import open_runtime

    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.backup(dest)
    if as_json:
        out.json(res)
        return
    out.kv([("path", res["path"]), ("seq", res["seq"]), ("events", res["events"]), ("L2 rows", res["rows"]),
            ("bytes", f"{res['bytes']:,}"), ("seconds", res["seconds"]["total"])])


@cli.command()
@click.argument("src")
@click.option("--to", "to", metavar="DIR", help="The new, empty data folder to restore into (default: --data).")
@click.option("--config", "config", metavar="FILE", help="A TOML config (its [runtime].key_dir: where keys go).")
@click.option("--no-verify", is_flag=True, help="Skip opening the restored folder to run audit verify.")
@common
def restore(src: str, to: str | None, config: str | None, no_verify: bool, data: str, as_json: bool) -> None:
    """Restore the backup SRC as the new data folder DIR: the backup is verified first (a changed
    one is refused), restored under a new folder id with the same key, what its folder erased
    since the backup is erased again, and the result is opened once to verify ledger and L2."""
    from memactors.runtime.backup import restore as do_restore

    out = Out(as_json)
    res = do_restore(src, to or data, config=config, verify=not no_verify)
    if as_json:
        out.json(res)
        return
    out.kv([("path", res["path"]), ("backup seq", res["backup_seq"]), ("events", res["events"]),
            ("L2 rows", res["rows"]), ("erased again", res["erased_again"]),
            ("erasure journal", "found" if res["erasure_journal"] else "NOT found: later erasures unknown"),
            ("verified", "yes" if res.get("verified", {}).get("ok") else "not checked"), ("seconds", res["seconds"])])
