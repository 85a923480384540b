"""A run's outcome in plain sentences, for the end of ``memactors simulate``: what each
governed backend refused and kept at zero, what each ungoverned one let through, and what the
governance cost in time. Built from the report's totals alone (the same numbers as the table)."""

from __future__ import annotations

from .metrics import COUNTERS

_REFUSALS = ("AccessDenied", "NoGrants", "PurposeRefused", "InvalidIdentifier", "Blocked")


def _n(v: float) -> str:
    return f"{v:,.0f}"


# How each counter reads in a sentence: recalled things, then the two that are not recalls.
_RECALLED = {"cross_tenant_hits": "{} memories of other orgs", "cross_user_hits": "{} memories of other users",
             "superseded_recalled": "{} outdated values", "expired_recalled": "{} expired tool results",
             "forgotten_recalled": "{} forgotten values", "pending_recalled": "{} injected instructions",
             "secrets_recalled": "{} secrets"}
_OTHER = {"secrets_stored": "left {} secrets on disk", "ungranted_accepted": "accepted {} out-of-grant actions"}
assert set(_RECALLED) | set(_OTHER) == set(COUNTERS)


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _let_through(b: dict) -> str | None:
    """What ``b``'s non-zero counters say, as a verb phrase ("recalled 3 secrets and ..."), or None."""
    c = b["counters"]
    recalled = [t.format(_n(c[k])) for k, t in _RECALLED.items() if c.get(k)]
    parts = (["recalled " + _and(recalled)] if recalled else []) + [t.format(_n(c[k])) for k, t in _OTHER.items()
                                                                     if c.get(k)]
    return _and(parts) if parts else None


def _governed(b: dict) -> str:
    errors = b["totals"].get("errors", {})
    refused = sum(v for k, v in errors.items() if k in _REFUSALS)
    failed = sum(errors.values()) - refused
    did = f"refused {_n(refused)} action{'s' if refused != 1 else ''}" + (
        f" ({', '.join(f'{k} {_n(v)}' for k, v in errors.items() if k in _REFUSALS)})" if refused else "")
    if failed:
        did += f", {_n(failed)} failed ({', '.join(f'{k} {_n(v)}' for k, v in errors.items() if k not in _REFUSALS)})"
    leaks = _let_through(b)
    if leaks:
        return f"{b['name']} {did} but did NOT keep its counters at 0: it {leaks}."
    return (f"{b['name']} {did} and kept all {len(COUNTERS)} governance counters at 0: no other org's or "
            "user's memory, no outdated, expired, forgotten or injected text recalled, no secret recalled "
            "or left on disk, no out-of-grant action accepted.")


def _ungoverned(b: dict) -> str:
    leaks = _let_through(b)
    if not leaks:
        return f"{b['name']} (ungoverned) kept every counter at 0 in this run."
    return f"{b['name']} (ungoverned) {leaks}."


def _cost(live: list[dict]) -> str | None:
    gov = [b for b in live if b["governed"]]
    base = [b for b in live if not b["governed"]]
    if not gov or not base:
        return None
    g, u = gov[0], base[0]
    tg, tu = g["totals"]["tick_ms"]["p50"], u["totals"]["tick_ms"]["p50"]
    if not tu:
        return None
    ratio = tg / tu
    how = f"{ratio:.1f}x as long" if ratio >= 1 else f"{1 / ratio:.1f}x faster"
    ops = lambda b: b["totals"].get("ops_per_s") or 0  # noqa: E731
    return (f"What it cost in time: a tick of {g['name']} took {_n(tg)} ms (median) against {_n(tu)} ms for "
            f"{u['name']} ({how}); {_n(ops(g))} against {_n(ops(u))} memory operations per second.")


def sentences(report) -> list[str]:
    """One sentence per backend that ran, one per backend skipped, then the cost in time."""
    live = [b for b in report.backends if b.get("totals")]
    out = [_governed(b) if b["governed"] else _ungoverned(b) for b in live]
    out += [f"{b['name']} did not run: {b['skipped']}." for b in report.backends if b["skipped"]]
    cost = _cost(live)
    return out + ([cost] if cost else [])
