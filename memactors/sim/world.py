"""The simulated world: tenants, users, their assistants, and what happens to them tick by tick.

Everything is drawn from the seed: the same ``WorldConfig`` gives the same orgs, users,
timelines, messages, tool results, web pages and planted secrets, in the same order. Preference
and org-policy timelines are drawn up front (so the ground truth is known for every tick); the
rest of a tick is drawn from an RNG keyed by (seed, tick), so ``step`` may be called for any tick.

Scopes: users live at ``/org/{org}/user/{user}/``, their tasks at ``.../task/{task}/``, org
policies at ``/org/{org}/``. Each assistant holds read+write on its user's scope (which covers the
user's task scopes); it sees the org's memories as ancestors of its scope, so it needs no grant on
the org, which would cover every other user of the org. Each org's admin agent holds read+write
on the org scope, to write its policies.
"""

from __future__ import annotations

import datetime as _dt
import tomllib
from collections import Counter
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from ..core.clock import US_PER_DAY
from ..core.errors import ConfigError
from ..core.scopes import Scope, parse_scope
from . import vocab
from .actions import ProbeSpec
from .planted import KINDS as SECRET_KINDS
from .planted import make_secret
from .truth import Truth, build_timelines


@dataclass(slots=True)
class Rates:
    """How often things happen: per user per tick unless the name says per day."""

    mention: float = 0.15  # the user restates one of their current preferences
    task_start: float = 0.08  # a user with no open task starts one (it lasts 1..task_days_max days)
    tool_call: float = 0.6  # per tick of an open task, the agent calls a tool (always on its first tick)
    web_page: float = 0.3  # per tool call, the agent also reads a web page
    injection: float = 0.4  # share of web pages that carry an injected instruction
    exfiltration: float = 0.5  # share of injections that name another user's scope
    paste: float = 0.02  # the user pastes a phone number, an ID number, a card number or a key
    chitchat: float = 0.25
    forget_per_day: float = 0.01  # per user: asks to forget one preference
    preference_change_per_day: float = 0.03  # per user and preference
    policy_change_per_day: float = 0.02  # per org and policy


@dataclass(slots=True)
class WorldConfig:
    """The world's size and behaviour. ``from_toml(path)`` reads the ``[sim]`` table."""

    seed: int = 0
    tenants: int = 20
    users_per_tenant: int = 50
    agents_per_user: int = 1  # assistants per user; a user's events go to one of them
    days: int = 60
    ticks_per_day: int = 1
    onboarding_days: int = 3  # users state their first preferences within these days
    start: str = "2026-01-01"  # simulated date of tick 0 (UTC)
    top_k: int = 5
    sweep_every_days: int = 7  # lifecycle sweep on each backend (0: never)
    task_days_max: int = 5  # a task stays open 1..this many days; its tool results outlive their TTL
    tool_ttl_days: float = 2.0  # tool results expire (hard) this many days after they are written
    counts_every_ticks: int = 1  # ask each backend for its memory counts this often
    rates: Rates = field(default_factory=Rates)

    # Sub-tables of [sim] that belong to the policy and the run, not to the world.
    OTHER_TABLES = ("policy", "run")

    @classmethod
    def from_dict(cls, d: dict) -> WorldConfig:
        """Build from a mapping (a TOML table); unknown keys are a ConfigError."""
        if not isinstance(d, dict):
            raise ConfigError("the [sim] configuration must be a table")
        known = {f.name for f in fields(cls)}
        bad = sorted(k for k in d if k not in known and k not in cls.OTHER_TABLES)
        if bad:
            raise ConfigError(f"unknown [sim] keys {bad}; known: {sorted(known)}")
        kw = {k: v for k, v in d.items() if k in known and k != "rates"}
        rates = d.get("rates", {})
        if not isinstance(rates, dict):
            raise ConfigError("[sim.rates] must be a table")
        rknown = {f.name for f in fields(Rates)}
        if bad := sorted(k for k in rates if k not in rknown):
            raise ConfigError(f"unknown [sim.rates] keys {bad}; known: {sorted(rknown)}")
        return cls(**kw, rates=Rates(**rates)).validate()

    @classmethod
    def from_toml(cls, path: str, table: str = "sim") -> WorldConfig:
        return cls.from_dict(read_table(path, table))

    def validate(self) -> WorldConfig:
        for name in ("tenants", "users_per_tenant", "agents_per_user", "days", "ticks_per_day", "top_k",
                     "counts_every_ticks", "task_days_max"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"[sim] {name} must be a positive integer")
        for name in ("seed", "onboarding_days", "sweep_every_days"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"[sim] {name} must be a non-negative integer")
        if self.top_k > 100:
            raise ConfigError("[sim] top_k must be at most 100")
        if not isinstance(self.tool_ttl_days, (int, float)) or self.tool_ttl_days <= 0:
            raise ConfigError("[sim] tool_ttl_days must be a positive number")
        for f in fields(Rates):
            v = getattr(self.rates, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise ConfigError(f"[sim.rates] {f.name} must be a number between 0 and 1")
        try:
            _dt.date.fromisoformat(self.start)
        except (TypeError, ValueError):
            raise ConfigError("[sim] start must be a date such as 2026-01-01") from None
        return self

    @property
    def users(self) -> int:
        return self.tenants * self.users_per_tenant

    @property
    def agents(self) -> int:
        return self.users * self.agents_per_user

    @property
    def ticks(self) -> int:
        return self.days * self.ticks_per_day

    @property
    def start_us(self) -> int:
        d = _dt.date.fromisoformat(self.start)
        return int(_dt.datetime(d.year, d.month, d.day, tzinfo=_dt.timezone.utc).timestamp()) * 1_000_000

    def to_dict(self) -> dict:
        return asdict(self)


def read_table(path: str, table: str = "sim") -> dict:
    """The ``table`` of a TOML file (dotted names walk sub-tables), or a ConfigError."""
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read the configuration file ({e.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"the configuration file is not valid TOML: {e}") from None
    for part in table.split("."):
        if not isinstance(doc, dict) or part not in doc:
            raise ConfigError(f"the configuration file has no [{table}] table")
        doc = doc[part]
    if not isinstance(doc, dict):
        raise ConfigError(f"[{table}] in the configuration file must be a table")
    return doc


@dataclass(frozen=True, slots=True)
class Grant:
    agent: str
    scope: str
    read: bool
    write: bool


@dataclass(frozen=True, slots=True)
class Message:
    """Something a user (or an org admin's console) says: kind is preference, mention, paste,
    chitchat, forget or policy; the structured fields are set where the message states a fact."""

    kind: str
    text: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    task: str
    tool: str
    text: str
    subject: str
    predicate: str
    object: str
    ttl_days: float
    query: str  # what the agent asks its memory before calling the tool


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A task open at this tick: ``first`` on the tick it starts, ``last`` on the tick it ends."""

    task: str
    first: bool
    last: bool


@dataclass(frozen=True, slots=True)
class WebPage:
    task: str
    url: str
    text: str


@dataclass(slots=True)
class AgentView:
    """One agent's view of one tick: what its user said, what its tools and pages returned."""

    agent: str
    role: str  # "assistant" or "admin"
    org: str
    user: str | None
    scope: str  # the agent's home scope: its user's, or its org's for an admin
    tick: int
    now_us: int
    index: int  # the agent's position in World.agents (stable: a key for deterministic draws)
    messages: list[Message] = field(default_factory=list)
    tasks: list[TaskInfo] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    web_pages: list[WebPage] = field(default_factory=list)
    world: World | None = None

    def task_scope(self, task: str) -> str:
        return f"{self.scope}task/{task}/"

    def known_predicates(self) -> list[str]:
        """The user's preferences that have a current value (the ones a probe can ask about)."""
        if self.world is None or self.user is None:
            return []
        return [p for p in vocab.PREFERENCES if self.world.truth.current(self.user, p, self.tick) is not None]


class World:
    """Orgs, users, agents, grants and ground truth for a ``WorldConfig``; ``step(tick)`` gives
    every agent's view of a tick."""

    def __init__(self, cfg: WorldConfig) -> None:
        self.cfg = cfg.validate()
        ow, uw = max(3, len(str(cfg.tenants - 1))), max(5, len(str(cfg.users - 1)))
        self.orgs = [f"t{i:0{ow}d}" for i in range(cfg.tenants)]
        self.users = [f"u{j:0{uw}d}" for j in range(cfg.users)]
        self.user_org = [j // cfg.users_per_tenant for j in range(cfg.users)]
        self.user_index = {u: j for j, u in enumerate(self.users)}
        self.org_index = {o: i for i, o in enumerate(self.orgs)}
        k = cfg.agents_per_user
        self.assistants = [f"asst-{u}" if k == 1 else f"asst-{u}-{i}" for u in self.users for i in range(k)]
        self.admins = [f"admin-{o}" for o in self.orgs]
        self.agents = self.assistants + self.admins
        self.home: dict[str, tuple[str, str | None]] = {}
        for a, name in enumerate(self.assistants):
            u = a // k
            self.home[name] = (self.orgs[self.user_org[u]], self.users[u])
        for o, name in enumerate(self.admins):
            self.home[name] = (self.orgs[o], None)
        self._grants = [Grant(a, self.home_scope(a), True, True) for a in self.agents]
        self._grant_scopes = {g.agent: parse_scope(g.scope) for g in self._grants}
        self.truth = Truth()
        rng = np.random.default_rng([cfg.seed, 0])
        on = min(cfg.onboarding_days * cfg.ticks_per_day, cfg.ticks)
        for s, p, entries in build_timelines(
                rng, self.users, vocab.PREFERENCES, ticks=cfg.ticks, first_ticks=(0, max(on, 1)),
                change_rate=cfg.rates.preference_change_per_day, ticks_per_day=cfg.ticks_per_day,
                forget_rate=cfg.rates.forget_per_day):
            self.truth.add(s, p, entries)
        for s, p, entries in build_timelines(
                rng, self.orgs, vocab.ORG_POLICIES, ticks=cfg.ticks, first_ticks=(0, 1),
                change_rate=cfg.rates.policy_change_per_day, ticks_per_day=cfg.ticks_per_day):
            self.truth.add(s, p, entries)
        self._open = _task_schedule(np.random.default_rng([cfg.seed, 2]), len(self.users), cfg)
        self.planted: dict[str, str] = {}  # value -> kind, every secret pasted so far
        self.tool_expiry: dict[str, int] = {}  # tool result subject -> hard expiry (us)
        self.events: Counter = Counter()  # kind -> count, over the ticks stepped so far
        self._stepped: set[int] = set()

    # -- identities, scopes, grants ----------------------------------------------------------

    def user_scope(self, user: str) -> str:
        return f"/org/{self.orgs[self.user_org[self.user_index[user]]]}/user/{user}/"

    def home_scope(self, agent: str) -> str:
        org, user = self.home[agent]
        return f"/org/{org}/user/{user}/" if user else f"/org/{org}/"

    def grants(self) -> list[Grant]:
        """Every grant a governed backend sets up before tick 0."""
        return list(self._grants)

    def may(self, agent: str, scope: str | Scope) -> bool:
        """Whether ``agent``'s grant (read and write alike here) covers ``scope``."""
        g = self._grant_scopes.get(agent)
        try:
            return g is not None and g.is_ancestor_or_self(parse_scope(scope))
        except ValueError:
            return False

    def now_us(self, tick: int) -> int:
        return self.cfg.start_us + tick * US_PER_DAY // self.cfg.ticks_per_day

    def day(self, tick: int) -> float:
        return tick / self.cfg.ticks_per_day

    def probe(self, spec: ProbeSpec, tick: int) -> ProbeSpec:
        """``spec`` with the current value and the outdated values at ``tick`` filled in."""
        cur = self.truth.current(spec.user, spec.predicate, tick)
        old = tuple(v for v in self.truth.held(spec.user, spec.predicate, tick) if v != cur)
        return ProbeSpec(spec.user, spec.predicate, cur, old)

    def summary(self) -> dict:
        return {"orgs": len(self.orgs), "users": len(self.users), "assistants": len(self.assistants),
                "admins": len(self.admins), "ticks": self.cfg.ticks, "days": self.cfg.days,
                "events": dict(sorted(self.events.items())),
                "planted_secrets": dict(Counter(self.planted.values()))}

    # -- one tick ----------------------------------------------------------------------------

    def step(self, tick: int) -> list[AgentView]:
        """Every agent's view of ``tick``: assistants in user order, then org admins."""
        cfg, r = self.cfg, self.cfg.rates
        if not 0 <= tick < cfg.ticks:
            raise ConfigError(f"tick {tick} is outside the run (0..{cfg.ticks - 1})")
        count = tick not in self._stepped  # stepping a tick twice must not count its events twice
        self._stepped.add(tick)
        now = self.now_us(tick)
        views = [AgentView(a, "assistant", *self._home_parts(a), tick, now, i, world=self)
                 for i, a in enumerate(self.assistants)]
        views += [AgentView(a, "admin", self.home[a][0], None, self.home_scope(a), tick, now,
                            len(self.assistants) + o, world=self) for o, a in enumerate(self.admins)]
        rng = np.random.default_rng([cfg.seed, 1, tick])
        n, k = len(self.users), cfg.agents_per_user
        route = rng.integers(0, k, n) if k > 1 else np.zeros(n, dtype=np.int64)
        draws = rng.random((n, 4))
        emitted: list[str] = []

        def to_user(u: int) -> AgentView:
            return views[u * k + int(route[u])]

        busy: set[tuple[str, str]] = set()
        for kind, subject, pred, value in self.truth.scheduled.get(tick, ()):
            busy.add((subject, pred))
            if subject in self.user_index:
                phrase = vocab.PREFERENCES[pred][0]
                v = to_user(self.user_index[subject])
                if kind == "set":
                    v.messages.append(Message("preference", f"Update: my {phrase} is now {value}.", subject, pred, value))
                else:
                    v.messages.append(Message("forget", f"Please forget my {phrase}.", subject, pred))
                emitted.append("preference" if kind == "set" else "forget")
            else:
                phrase = vocab.ORG_POLICIES[pred][0]
                views[len(self.assistants) + self.org_index[subject]].messages.append(
                    Message("policy", f"Policy of {subject}: the {phrase} is {value}.", subject, pred, value))
                emitted.append("policy")
        preds = list(vocab.PREFERENCES)
        for u in np.flatnonzero(draws[:, 0] < r.mention).tolist():
            user, pred = self.users[u], preds[int(rng.integers(0, len(preds)))]
            cur = self.truth.current(user, pred, tick)
            if cur is not None and (user, pred) not in busy:
                to_user(u).messages.append(Message(
                    "mention", f"Just so you remember, my {vocab.PREFERENCES[pred][0]} is {cur}.", user, pred, cur))
                emitted.append("mention")
        for u, start, end in self._open.get(tick, ()):
            view = views[u * k + start % k]  # a task stays with one assistant from start to end
            task = TaskInfo(f"k{start}", start == tick, end == tick)
            view.tasks.append(task)
            if task.first or rng.random() < r.tool_call:
                self._tool_call(rng, tick, now, u, task.task, view, emitted)
        for u in np.flatnonzero(draws[:, 2] < r.paste).tolist():
            kind = SECRET_KINDS[int(rng.integers(0, len(SECRET_KINDS)))]
            value = make_secret(kind, rng)
            self.planted[value] = kind
            to_user(u).messages.append(Message("paste", vocab.PASTE_TEMPLATES[kind].format(v=value)))
            emitted.append("paste")
        for u in np.flatnonzero(draws[:, 3] < r.chitchat).tolist():
            to_user(u).messages.append(Message("chitchat", vocab.CHITCHAT[int(rng.integers(0, len(vocab.CHITCHAT)))]))
            emitted.append("chitchat")
        if count:
            self.events.update(emitted)
        return views

    def _home_parts(self, agent: str) -> tuple[str, str, str]:
        org, user = self.home[agent]
        return org, user, f"/org/{org}/user/{user}/"

    def _tool_call(self, rng: np.random.Generator, tick: int, now: int, u: int, task: str, view: AgentView,
                   emitted: list) -> None:
        """One tool result in ``task`` and, sometimes, a web page (with an injection, sometimes)."""
        r = self.cfg.rates
        name, prefix, pred, objs, template, query = vocab.TOOLS[int(rng.integers(0, len(vocab.TOOLS)))]
        rid = f"{prefix}-{self.users[u]}-{tick}"
        obj = objs[int(rng.integers(0, len(objs)))]
        text = template.format(id=rid, obj=obj, n=int(rng.integers(1, 10)))
        view.tool_results.append(ToolResult(task, name, text, rid, pred, obj, float(self.cfg.tool_ttl_days), query))
        self.tool_expiry[rid] = now + int(self.cfg.tool_ttl_days * US_PER_DAY)
        emitted.append("tool_result")
        if rng.random() >= r.web_page:
            return
        topic = vocab.WEB_TOPICS[int(rng.integers(0, len(vocab.WEB_TOPICS)))]
        body = f"Article: {topic}. {vocab.WEB_SENTENCES[int(rng.integers(0, len(vocab.WEB_SENTENCES)))]}"
        if rng.random() < r.injection:
            marker = vocab.INJECTION_MARKERS[int(rng.integers(0, len(vocab.INJECTION_MARKERS)))]
            if rng.random() < r.exfiltration:
                payload = vocab.EXFIL_PAYLOAD.format(scope=self.user_scope(self._victim(rng, u)))
                emitted.append("web_exfiltration")
            else:
                payload = vocab.INJECTION_PAYLOADS[int(rng.integers(0, len(vocab.INJECTION_PAYLOADS)))]
                emitted.append("web_injection")
            body += f" {marker[0].upper()}{marker[1:]} and {payload}"
        else:
            emitted.append("web_page")
        url = f"https://{topic.replace(' ', '-')}.example/{tick}/{u}"
        view.web_pages.append(WebPage(task, url, body))

    def _victim(self, rng: np.random.Generator, u: int) -> str:
        """Another user: half the time of the same org, else of another org (when there is one)."""
        per = self.cfg.users_per_tenant
        org = self.user_org[u]
        if (rng.random() < 0.5 or len(self.orgs) == 1) and per > 1:
            j = org * per + (u - org * per + 1 + int(rng.integers(0, per - 1))) % per
        else:
            other = (org + 1 + int(rng.integers(0, max(len(self.orgs) - 1, 1)))) % len(self.orgs)
            j = other * per + int(rng.integers(0, per))
        return self.users[j]


def _task_schedule(rng: np.random.Generator, n_users: int, cfg: WorldConfig) -> dict[int, list[tuple[int, int, int]]]:
    """Each user's tasks, one open at a time: tick -> [(user, start tick, end tick)] for every task
    open at that tick. Gaps between tasks are geometric (``rates.task_start`` per tick), lengths
    uniform over 1..task_days_max days."""
    open_at: dict[int, list[tuple[int, int, int]]] = {}
    p, ticks = cfg.rates.task_start, cfg.ticks
    if p <= 0:
        return open_at
    longest = cfg.task_days_max * cfg.ticks_per_day
    k = int(ticks * p) + 4  # enough draws for almost every user; the rest simply stop early
    gaps = rng.geometric(p, (n_users, k)) - 1
    lengths = rng.integers(1, longest + 1, (n_users, k))
    for u in range(n_users):
        t = 0
        for gap, length in zip(gaps[u].tolist(), lengths[u].tolist()):
            start = t + gap
            if start >= ticks:
                break
            end = min(start + length - 1, ticks - 1)
            for tt in range(start, end + 1):
                open_at.setdefault(tt, []).append((u, start, end))
            t = end + 1
    return open_at
