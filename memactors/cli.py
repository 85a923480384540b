"""The command line: a thin layer over the runtime facade.

    memactors up                      start a long-lived local runtime for a data folder
    memactors write SCOPE TEXT ...    write one memory through the gate
    memactors recall QUERY ...        recall through the recall contract
    memactors forget MEMORY_ID ...    erase one memory
    memactors grant ACTOR SCOPE ...   grant (or revoke) read / write on a scope
    memactors grants [ACTOR]          list grants
    memactors audit verify            walk the ledger's hash chain
    memactors audit recall ID         the evidence logged for one recall
    memactors scan [--text T]         run the write gate alone, no store
    memactors review list|approve|reject   the review queue of held writes
    memactors demo --fresh            a narrated walk through all of it
    memactors down                    stop the long-lived runtime

Every verb takes ``--data DIR`` (default ``.memactors-data``, or $MEMACTORS_DATA) and ``--json``.
When ``DIR/runtime.json`` exists (written by ``memactors up``) a verb attaches to that runtime
in about a second; otherwise it starts an embedded runtime for the one command and closes it.

``memactors up`` starts its own Ray head with its own temp dir (so a plain ``ray.init()``
elsewhere on the machine never attaches to it), and ``memactors down`` stops exactly that head
by the process id recorded in runtime.json, never with a machine-wide ``ray stop``.

Exit codes: 0 ok, 1 the ledger does not verify, 2 a user error (one line on stderr).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import click
import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

import memactors
from memactors.actors.naming import namespace_for
from memactors.core import records as R
from memactors.core.grants import GrantTable
from memactors.core.scopes import check_identifier

DEFAULT_DATA = ".memactors-data"
RUNTIME_FILE = "runtime.json"
HEAD_LOG = "head.log"
UP_TIMEOUT_S = 90.0
DOWN_TIMEOUT_S = 30.0


class CliError(Exception):
    """A user error the CLI itself detects (printed as one line, exit code 2)."""


# --- output ---------------------------------------------------------------------------------


class Out:
    """Rich tables for people, one JSON object per line (orjson) for machines."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.console = Console(highlight=False, soft_wrap=False)
        if not self.console.is_terminal:
            self.console = Console(highlight=False, soft_wrap=False, width=120)  # piped: not the 80 default

    def json(self, obj: Any) -> None:
        sys.stdout.write(orjson.dumps(obj, default=str).decode() + "\n")
        sys.stdout.flush()

    def heading(self, title: str, note: str | None = None) -> None:
        if self.as_json:
            return
        self.console.print()
        self.console.rule(Text(title, style="bold cyan"), align="left")
        if note:
            self.console.print(Text(note, style="dim"))

    def line(self, text: str | Text, style: str | None = None) -> None:
        if not self.as_json:
            self.console.print(text if isinstance(text, Text) else Text(text, style=style or ""))

    def kv(self, pairs: list[tuple[str, Any]], title: str | None = None) -> None:
        if self.as_json:
            return
        t = Table(show_header=False, box=None, padding=(0, 2), title=title, title_justify="left")
        t.add_column(style="bold")
        t.add_column()
        for k, v in pairs:
            t.add_row(Text(k), v if isinstance(v, Text) else Text(_fmt(v)))
        self.console.print(t)

    def table(self, columns: list[str], rows: list[list[Any]], title: str | None = None,
              empty: str = "(none)") -> None:
        if self.as_json:
            return
        if not rows:
            self.console.print(Text(f"{title + ': ' if title else ''}{empty}", style="yellow"))
            return
        t = Table(title=title, title_justify="left", header_style="bold", show_lines=False)
        for c in columns:
            wide = c.split(" ")[0] in ("content", "text", "message")
            t.add_column(c, overflow="fold", min_width=36 if wide else None,
                         no_wrap=c in ("#", "score", "ver", "id", "memory id", "decision", "read", "write"))
        for r in rows:
            t.add_row(*[v if isinstance(v, Text) else Text(_fmt(v)) for v in r])
        self.console.print(t)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt(x) for x in v) or "-"
    return str(v)


DECISION_STYLE = {
    "accepted": "green", "redacted": "yellow", "blocked": "bold red", "pending": "magenta",
    "working_only": "blue", "refreshed": "cyan", "superseded_previous": "green",
    "kept_as_superseded": "yellow", "forgotten": "red",
}


def _decision(d: str | None) -> Text:
    return Text(d or "-", style=DECISION_STYLE.get(d or "", ""))


def _gate_summary(gate: dict) -> str:
    hits = gate.get("hits") or []
    if not hits:
        return "clean"
    rules = sorted({h.get("rule", "?") for h in hits})
    return f"{', '.join(rules)} (risk {float(gate.get('risk', 0)):.1f})"


def _mask(text: str, gate: dict) -> str:
    """The input with every span the gate matched replaced by the rule's placeholder, so the CLI
    never echoes a matched value (a key, a phone number) back to the terminal."""
    try:
        from memactors.gate.rules import RULES
    except ImportError:  # pragma: no cover - the gate always ships rules
        RULES = {}
    # Only values are masked (pii, secrets): code, injection and low-value hits show as written.
    spans = sorted(((h["span"][0], h["span"][1], h.get("rule", "?")) for h in gate.get("hits") or []
                    if h.get("span") and h.get("category") in ("pii", "secret")), reverse=True)
    for start, end, rule in spans:
        placeholder = getattr(RULES.get(rule), "placeholder", None) or f"[{rule}]"
        text = text[:start] + placeholder + text[end:]
    return text


def _short(s: str | None, n: int = 8) -> str:
    return s[:n] if s else "-"


def _hit_rows(hits: list, full_ids: bool = False) -> list[list[Any]]:
    return [[i + 1, f"{h.score:.3f}", h.scope, f"v{h.version}", h.memory_id if full_ids else _short(h.memory_id),
             Text(h.content)] for i, h in enumerate(hits)]


HIT_COLUMNS = ["#", "score", "scope", "ver", "memory id", "content"]


# --- data folder and runtime ----------------------------------------------------------------


def _data_dir(data: str) -> str:
    return os.path.realpath(os.path.expanduser(data))


def _runtime_file(data_dir: str) -> str:
    return os.path.join(data_dir, RUNTIME_FILE)


def _read_runtime(data_dir: str) -> dict | None:
    try:
        with open(_runtime_file(data_dir), "rb") as f:
            info = orjson.loads(f.read())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise CliError(f"cannot read {_runtime_file(data_dir)}: {exc}; remove it or run `memactors down`") from None
    if not isinstance(info, dict) or not isinstance(info.get("address"), str):
        raise CliError(f"{_runtime_file(data_dir)} has no address; remove it or run `memactors down`")
    return info


def _head_alive(info: dict) -> bool:
    """True when the `ray start --block` process that runtime.json names still runs (and is ours:
    its command line names our temp dir, so a recycled pid is not mistaken for it)."""
    pid = info.get("ray_pid")
    if not isinstance(pid, int) or pid <= 0:
        return True  # written by hand or by another tool: trust the address
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True  # no /proc: the pid check is all we have
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().split(b")")[-1].split()[0] == b"Z":
                return False
    temp_dir = info.get("temp_dir")
    return "start" in cmd and (not temp_dir or temp_dir in cmd)


def _temp_dir_for(data_dir: str) -> str:
    # Short on purpose: Ray puts unix sockets under it (paths are limited to ~107 bytes).
    return os.path.join(tempfile.gettempdir(), namespace_for(data_dir))


@contextlib.contextmanager
def open_runtime(data: str) -> Iterator[tuple[memactors.Runtime, str]]:
    """Attach to the `memactors up` runtime of ``data`` when there is one, else start an embedded
    runtime for this one command; close (detach) it at the end."""
    data_dir = _data_dir(data)
    info = _read_runtime(data_dir)
    if info is not None:
        if not _head_alive(info):
            raise CliError(
                f"{_runtime_file(data_dir)} names a runtime that is no longer running; "
                f"run `memactors down --data {data}` to clean up"
            )
        try:
            rt = memactors.connect(data_dir, address=info["address"], detached=True)
        except ConnectionError as exc:
            raise CliError(f"cannot reach the runtime at {info['address']} ({exc}); "
                           f"run `memactors down --data {data}` to clean up") from None
        mode = "attached"
    else:
        # address="local": a new Ray for this command, never whatever `ray start` left behind.
        rt = memactors.connect(data_dir, address="local")
        mode = "embedded"
    try:
        yield rt, mode
    finally:
        rt.close()


# --- click plumbing -------------------------------------------------------------------------


class _Group(click.Group):
    """Turns user errors into one line on stderr and exit code 2 (never a traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (memactors.MemactorsError, CliError) as exc:
            msg = str(exc) or type(exc).__name__
            click.echo(f"error: {msg.splitlines()[0] if msg else msg}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            ctx.exit(130)


def common(fn: Callable) -> Callable:
    fn = click.option("--json", "as_json", is_flag=True,
                      help="Print machine-readable JSON (one object per line) instead of tables.")(fn)
    fn = click.option("--data", default=DEFAULT_DATA, show_default=True, envvar="MEMACTORS_DATA",
                      metavar="DIR", help="The data folder (ledger, L2 store, runtime.json).")(fn)
    return fn


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(memactors.__version__, prog_name="memactors")
def cli() -> None:
    """memactors: a governed memory runtime for LLM agents, on Ray.

    Every verb works on one data folder (--data). Run `memactors up` once to keep a runtime
    alive so each verb attaches in about a second; without it, each verb starts (and stops)
    an embedded runtime of its own.
    """


# --- up / down ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_script() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "ray")
    if os.path.exists(here):
        return here
    found = shutil.which("ray")
    if not found:
        raise CliError("cannot find the `ray` command next to this Python or on PATH")
    return found


def _client_server_available() -> bool:
    try:
        from ray.scripts.scripts import get_ray_client_dependency_error
    except ImportError:
        return False
    return get_ray_client_dependency_error() is None


def _log_tail(path: str, n: int = 15) -> str:
    with contextlib.suppress(OSError):
        with open(path, "rb") as f:
            return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])
    return ""


def _stop_head(pid: int, timeout: float = DOWN_TIMEOUT_S) -> str:
    """Stop one `ray start --block` process (it stops its own node's processes on SIGTERM);
    SIGKILL its process group (created by `up`) if it does not finish in time."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "already gone"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "stopped"
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().split(b")")[-1].split()[0] == b"Z":
                    return "stopped"
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    return "killed"


@cli.command()
@common
def up(data: str, as_json: bool) -> None:
    """Start a long-lived local runtime for DIR that the other verbs attach to.

    Starts a Ray head of its own (own port and temp dir), opens the data folder with detached
    ledger and owner actors, writes DIR/runtime.json and returns; the actors keep running until
    `memactors down`.
    """
    out = Out(as_json)
    data_dir = _data_dir(data)
    info = _read_runtime(data_dir)
    if info is not None and _head_alive(info):
        if as_json:
            out.json({"status": "already_up", **info})
        else:
            out.line(Text(f"already up: {info['address']} (namespace {info.get('namespace')})", style="green"))
        return
    if info is not None:
        os.remove(_runtime_file(data_dir))  # stale: its head is gone
    os.makedirs(data_dir, exist_ok=True)
    t0 = time.monotonic()
    temp_dir = _temp_dir_for(data_dir)
    os.makedirs(temp_dir, exist_ok=True)
    addr_file = os.path.join(temp_dir, "ray_current_cluster")
    with contextlib.suppress(FileNotFoundError):
        os.remove(addr_file)
    cmd = [_ray_script(), "start", "--head", "--block", f"--port={_free_port()}", "--include-dashboard=false",
           "--disable-usage-stats", f"--temp-dir={temp_dir}", f"--dashboard-agent-listen-port={_free_port()}"]
    if _client_server_available():
        cmd.append(f"--ray-client-server-port={_free_port()}")
    env = dict(os.environ, RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0")
    env.pop("RAY_ADDRESS", None)
    log_path = os.path.join(temp_dir, HEAD_LOG)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env, close_fds=True)
    ok = False
    try:
        deadline = time.monotonic() + UP_TIMEOUT_S
        while not os.path.exists(addr_file):
            if proc.poll() is not None:
                raise CliError(f"ray start exited with code {proc.returncode}; see {log_path}: "
                               + _log_tail(log_path, 1))
            if time.monotonic() > deadline:
                raise CliError(f"ray start did not come up within {UP_TIMEOUT_S:.0f}s; see {log_path}")
            time.sleep(0.1)
        time.sleep(0.05)  # the address file is written in one go; let it land
        with open(addr_file) as f:
            address = f.read().strip()
        rt = memactors.connect(data_dir, address=address, detached=True)
        info = {"address": address, "namespace": rt.namespace, "ray_pid": proc.pid, "temp_dir": temp_dir,
                "data_dir": data_dir, "started_at": time.time()}
        tmp = _runtime_file(data_dir) + ".tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps(info, option=orjson.OPT_INDENT_2))
        os.replace(tmp, _runtime_file(data_dir))
        rt.close()  # runtime.json exists: this only detaches, the actors stay up
        ok = True
    finally:
        if not ok:
            with contextlib.suppress(FileNotFoundError):
                os.remove(_runtime_file(data_dir))
            _stop_head(proc.pid, timeout=10)
    secs = time.monotonic() - t0
    if as_json:
        out.json({"status": "up", **info, "seconds": round(secs, 2)})
    else:
        out.kv([("status", Text("up", style="green")), ("address", address), ("namespace", info["namespace"]),
                ("data", data_dir), ("ray pid", proc.pid), ("ray log", log_path), ("took", f"{secs:.1f} s")])
        out.line(Text(f"stop it with: memactors down --data {data}", style="dim"))


@cli.command()
@common
def down(data: str, as_json: bool) -> None:
    """Stop the long-lived runtime of DIR started by `memactors up`.

    Flushes, checkpoints the ledger and releases its lock, stops the actors, stops that Ray head
    (only that one, by the pid in runtime.json) and removes DIR/runtime.json.
    """
    out = Out(as_json)
    data_dir = _data_dir(data)
    info = _read_runtime(data_dir)
    if info is None:
        if as_json:
            out.json({"status": "not_up", "data_dir": data_dir})
        else:
            out.line(f"no runtime is up for {data_dir}")
        return
    t0 = time.monotonic()
    steps: list[str] = []
    alive = _head_alive(info)
    if alive:
        try:
            rt = memactors.connect(data_dir, address=info["address"], detached=True)
            os.remove(_runtime_file(data_dir))  # now close() flushes, shuts the ledger down and kills the actors
            rt.close()
            steps.append("actors stopped, ledger checkpointed")
        except Exception as exc:  # noqa: BLE001 - stopping the head below is what matters now
            steps.append(f"could not stop the actors cleanly ({type(exc).__name__}); stopping the head")
        pid = info.get("ray_pid")
        if isinstance(pid, int) and pid > 0:
            steps.append(f"ray head {pid}: {_stop_head(pid)}")
        else:
            steps.append("runtime.json names no ray pid: the Ray cluster was left running")
    else:
        steps.append("its ray head was already gone; cleaned up")
    with contextlib.suppress(FileNotFoundError):
        os.remove(_runtime_file(data_dir))
    temp_dir = info.get("temp_dir")
    if (isinstance(temp_dir, str) and os.path.dirname(temp_dir) == tempfile.gettempdir()
            and os.path.basename(temp_dir).startswith("memactors-")):
        shutil.rmtree(temp_dir, ignore_errors=True)
    secs = time.monotonic() - t0
    if as_json:
        out.json({"status": "down", "data_dir": data_dir, "steps": steps, "seconds": round(secs, 2)})
    else:
        out.kv([("status", Text("down", style="green")), ("data", data_dir),
                *[("", s) for s in steps], ("took", f"{secs:.1f} s")])


# --- write / recall / forget ----------------------------------------------------------------


@cli.command()
@click.argument("scope")
@click.argument("text")
@click.option("--actor", required=True, help="Who writes (needs a write grant on SCOPE).")
@click.option("--subject", help="Entity key, subject part (give with --predicate).")
@click.option("--predicate", help="Entity key, predicate part: same subject+predicate updates a memory.")
@click.option("--object", "object_", metavar="TEXT", help="The value (a different one makes a new version).")
@click.option("--source", type=click.Choice(sorted(R.SOURCE_CONFIDENCE)), default="user_stated", show_default=True,
              help="Where the memory comes from (sets the default confidence).")
@click.option("--confidence", type=float, help="0..1; defaults by source (user_stated 1.0 ... web 0.3).")
@click.option("--sensitivity", type=click.Choice(R.SENSITIVITIES), default="internal", show_default=True,
              help="Sensitivity label.")
@click.option("--ttl-days", type=float, help="Hard expiry in days.")
@click.option("--pool", type=click.Choice(R.POOLS), default="vault", show_default=True,
              help="vault (L2, persistent) or working (L1, session).")
@click.option("--idempotency-key", help="A retry with the same key never writes twice.")
@common
def write(scope: str, text: str, actor: str, subject: str | None, predicate: str | None, object_: str | None,
          source: str, confidence: float | None, sensitivity: str, ttl_days: float | None, pool: str,
          idempotency_key: str | None, data: str, as_json: bool) -> None:
    """Write TEXT to SCOPE through the write gate; prints the decision, memory id and version."""
    kw = dict(actor=actor, subject=subject, predicate=predicate, object=object_, source=source,
              confidence=confidence, sensitivity=sensitivity, ttl_days=ttl_days, pool=pool,
              idempotency_key=idempotency_key)
    R.write_request(dict(scope=scope, text=text, **kw))  # validate before paying for a runtime
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.write(scope, text, **kw)
    if as_json:
        out.json(res.to_dict())
        return
    out.kv([("decision", _decision(res.decision)), ("memory id", res.memory_id), ("version", res.version),
            ("scope", res.scope), ("status", res.status), ("supersedes", res.supersedes),
            ("gate", _gate_summary(res.gate))])


@cli.command()
@click.argument("query")
@click.option("--actor", required=True, help="Who recalls (needs read grants covering every --scope).")
@click.option("--task-id", required=True, help="The task this recall serves (logged).")
@click.option("--scope", "scopes", multiple=True, required=True,
              help="An allowed scope (repeat for several); ancestors are visible too.")
@click.option("--purpose", required=True, help="Why the recall is made, e.g. answer (logged).")
@click.option("--top-k", type=int, default=5, show_default=True, help="Most hits to return.")
@common
def recall(query: str, actor: str, task_id: str, scopes: tuple[str, ...], purpose: str, top_k: int,
           data: str, as_json: bool) -> None:
    """Recall memories for QUERY through the recall contract; prints hits and the recall id."""
    R.RecallRequest(query, actor, task_id, list(scopes), purpose, top_k).validate()
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.recall(query, actor=actor, task_id=task_id, allowed_scopes=list(scopes), purpose=purpose,
                        top_k=top_k)
    if as_json:
        out.json(res.to_dict())
        return
    out.table(HIT_COLUMNS, _hit_rows(res.hits, full_ids=True), empty="no hits")
    out.kv([("recall id", res.recall_id), ("visible scopes", res.visible_scopes), ("path", res.path)])


@cli.command()
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who forgets (logged).")
@click.option("--reason", required=True, help="Why (logged in the tombstone event).")
@common
def forget(memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    """Erase MEMORY_ID: a tombstone event, the row and caches gone, its data key destroyed."""
    R.check_memory_id(memory_id)
    check_identifier(actor, "actor")
    if not reason.strip():
        raise CliError("--reason must not be empty")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.forget(memory_id, actor=actor, reason=reason)
    if as_json:
        out.json(res)
        return
    out.kv([("decision", _decision(res.get("decision"))), ("memory id", res.get("memory_id")),
            ("scope", res.get("scope"))])


# --- grants ---------------------------------------------------------------------------------


def _grant_rows(grants: list[dict]) -> list[list[Any]]:
    ordered = sorted(grants, key=lambda g: (g["actor"], g["scope"]))
    return [[g["actor"], g["scope"], g["read"], g["write"]] for g in ordered]


GRANT_COLUMNS = ["actor", "scope", "read", "write"]


@cli.command()
@click.argument("actor")
@click.argument("scope")
@click.option("--read/--no-read", default=True, show_default=True, help="Read SCOPE and its descendants.")
@click.option("--write/--no-write", default=False, show_default=True, help="Write SCOPE and its descendants.")
@click.option("--by", default="admin", show_default=True, help="Who makes the change (logged).")
@common
def grant(actor: str, scope: str, read: bool, write: bool, by: str, data: str, as_json: bool) -> None:
    """Grant ACTOR read (and write) on SCOPE; --no-read without --write revokes. Shows ACTOR's grants."""
    GrantTable.make(actor, scope, read=read, write=write)
    check_identifier(by, "--by")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        g = rt.grant(actor, scope, read=read, write=write, by=by)
        mine = rt.grants(actor)
    if as_json:
        out.json({"grant": g, "revoked": not (read or write), "grants": mine})
        return
    out.line(Text(f"{'revoked' if not (read or write) else 'granted'}: {actor} on {g['scope']}", style="green"))
    out.table(GRANT_COLUMNS, _grant_rows(mine), title=f"grants of {actor}")


@cli.command()
@click.argument("actor", required=False)
@common
def grants(actor: str | None, data: str, as_json: bool) -> None:
    """List the grants (of ACTOR, or of everyone)."""
    if actor is not None:
        check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        gs = rt.grants(actor)
    if as_json:
        out.json({"grants": gs})
        return
    out.table(GRANT_COLUMNS, _grant_rows(gs), empty="no grants")


# --- audit ----------------------------------------------------------------------------------


@cli.group(cls=_Group)
def audit() -> None:
    """Inspect the ledger: verify the hash chain, replay a recall's evidence."""


@audit.command("verify")
@common
def audit_verify(data: str, as_json: bool) -> None:
    """Walk the ledger's hash chain and MACs, check its anchor and the tables that must agree with
    it (keys, idempotency, L2); prints ok or the first bad seq or table (exit code 1 when broken)."""
    out = Out(as_json)
    try:
        with open_runtime(data) as (rt, _mode):
            v = rt.audit.verify()
    except memactors.LedgerTampered:
        # The runtime refuses a ledger that fails its open checks: verify the file directly.
        from memactors.store.ledger import verify_folder

        v = verify_folder(_data_dir(data))
        if v.get("ok"):  # the chain itself is sound: the open check found the problem elsewhere (L2)
            v.update(ok=False, reason="the runtime refused to open this folder (L2 disagrees with the ledger)",
                     table="l2")
    if as_json:
        out.json(v)
    else:
        out.kv([("ok", Text("yes" if v.get("ok") else "NO", style="green" if v.get("ok") else "bold red")),
                ("events", v.get("events")), ("first bad seq", v.get("first_bad_seq")), ("table", v.get("table")),
                ("reason", v.get("reason"))])
    if not v.get("ok"):
        sys.exit(1)


@audit.command("recall")
@click.argument("recall_id")
@click.option("--actor", required=True, help="Who asks (read grants must cover the recall's scopes).")
@common
def audit_recall(recall_id: str, actor: str, data: str, as_json: bool) -> None:
    """Show the evidence logged for RECALL_ID (ids, scores, filters; never content or query text)."""
    check_identifier(recall_id, "recall_id")
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        ev = rt.audit.recall(recall_id, actor=actor)
    if as_json:
        out.json(ev)
        return
    _print_evidence(out, ev)


def _print_evidence(out: Out, ev: dict) -> None:
    out.kv([("recall id", ev.get("recall_id")), ("actor", ev.get("actor")), ("task id", ev.get("task_id")),
            ("purpose", ev.get("purpose")), ("allowed scopes", ev.get("allowed_scopes")),
            ("visible scopes", ev.get("visible_scopes")), ("query digest", _short(ev.get("query_digest"), 16) + "…"),
            ("filters", orjson.dumps(ev.get("filters")).decode()),
            ("removed", orjson.dumps(ev.get("removed")).decode())])
    out.table(["#", "memory id", "scope", "score"],
              [[i + 1, h["memory_id"], h["scope"], h["score"]] for i, h in enumerate(ev.get("hits") or [])],
              title="hits logged", empty="no hits")


# --- demo -----------------------------------------------------------------------------------


# The demo and the gate verbs live in their own modules; importing them registers them on ``cli``.
from memactors import cli_demo, cli_explain, cli_gate  # noqa: E402,F401


# --- bench ----------------------------------------------------------------------------------

from memactors.bench.grid import DEFAULT_GRID  # noqa: E402


@cli.group(cls=_Group)
def bench() -> None:
    """Benchmarks that load a labelled dataset into a fresh store of their own."""


@bench.command("thresholds")
@click.option("--dataset", required=True, type=click.Path(exists=True),
              help="A LoCoMo .json file, or a folder of them (one conversation each).")
@click.option("--grid", default=DEFAULT_GRID, show_default=True,
              help="name=values;...: values comma-separated, a:b:step an inclusive range, weights as 0.4/0.3/0.2/0.1.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Ray tasks scoring configurations at once.")
@click.option("--out", "out_dir", default="bench-out", show_default=True, metavar="OUT",
              help="Folder for report.json, report.md and pr_vs_threshold.png.")
@click.option("--max-questions", type=click.IntRange(1), help="Only the first N questions of each conversation.")
@click.option("--bootstrap", type=click.IntRange(0, 100_000), default=1000, show_default=True,
              help="Paired bootstrap resamples of the queries per configuration (0: none).")
@click.option("--embedder", default="hash-ngram-v1", show_default=True,
              help="Embedder of the store: hash-ngram-v1, or all-minilm-l6-v2 (the [minilm] extra).")
@click.option("--context", type=click.Choice(["none", "prev"]), default="none", show_default=True,
              help="prev: write each turn with its session's previous turn as retrieval context (indexed, not shown).")
@click.option("--beta", type=click.FloatRange(0, min_open=True), default=1.0, show_default=True,
              help="Recommend by F-beta: 1 is F1; 2 when a missed memory costs more than a stray one.")
@click.option("--fresh", is_flag=True, help="Delete DIR first (only if it looks like a memactors data folder).")
@click.option("--data", default=".memactors-bench", show_default=True, metavar="DIR",
              help="The benchmark's own store: must be new or empty (never your main data folder).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as one JSON object instead of tables.")
def bench_thresholds(dataset: str, grid: str, workers: int, out_dir: str, max_questions: int | None, bootstrap: int,
                     context: str, beta: float, embedder: str, fresh: bool, data: str, as_json: bool) -> None:
    """Retrieval thresholds: load DATASET into a fresh store through the gate, recall every question
    once, score every grid configuration on Ray tasks (recall@k, precision, F1, hit rate, FPR,
    governance counters) beside BM25, and recommend a threshold by cross-validation across
    conversations."""
    from memactors.bench import parse_grid, run_thresholds
    from memactors.bench.harness import NO_FLOOR
    from memactors.cli_demo import _fresh

    try:
        parse_grid(grid)
    except ValueError as exc:
        raise CliError(f"--grid: {exc}") from None
    if fresh:
        _fresh(data)
    path = _data_dir(data)
    if os.path.isdir(path) and os.listdir(path):
        raise CliError(f"{path} is not empty: the benchmark needs a fresh store (--fresh deletes it)")
    out = Out(as_json)
    cfg = {**NO_FLOOR, "embedder": {"name": embedder, "dim": 384}}  # no floor: the grid sets thresholds
    if embedder != "hash-ngram-v1":  # a model: load it once, in an embedding actor, not in every owner
        cfg["runtime"] = {**cfg.get("runtime", {}), "embed_workers": 1}
    rt = memactors.connect(path, address="local", config=cfg)
    try:
        rep = run_thresholds(rt, dataset, grid=grid, num_workers=workers, out_dir=out_dir, progress=not as_json,
                             max_questions=max_questions, n_boot=bootstrap, beta=beta,
                             context=None if context == "none" else context)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    finally:
        rt.close()
    if as_json:
        out.json(rep)
        return
    rec, g = rep["recommendation"], rep["gate"]
    rows = [[k, ", ".join(f"{a}={b}" for a, b in v["config"].items() if a != "top_k"),
             (v["cv"] or v["in_sample"])["f1"], (v["cv"] or v["in_sample"])["recall"],
             (v["cv_baseline"] or v["baseline_in_sample"])["f1"], rep["bm25"]["by_top_k"][k]["overall"]["recall"]]
            for k, v in rec["by_top_k"].items()]
    out.table(["top_k", f"recommended by {rec['objective']}", "CV F1", "CV recall", "F1, lowest threshold",
               "BM25 recall"], rows,
              title="per top_k (figures held out by conversation)")
    out.kv([("recommended", f"{rec['config']}"), ("why", rec["why"]),
            ("governance", rep["governance"]["max_over_grid"]),
            ("gate", f"{g['evidence_kept_out']} of {g['evidence_turns']} evidence turns kept out of L2 "
                     f"{g['kept_out_by_rule']}"),
            ("evidence", f"{rep['dataset']['evidence']['unparseable_count']} unparseable"),
            ("outputs", ", ".join(v for v in rep["outputs"].values())),
            ("seconds", rep["timings"]["total_s"])])


def main() -> None:
    cli(prog_name="memactors")


if __name__ == "__main__":
    main()
