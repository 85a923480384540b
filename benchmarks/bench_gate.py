"""The write gate alone: throughput, pre-scan speed, recall against detect-secrets, false positives.

    .venv/bin/pip install detect-secrets==1.5.0        # benchmark-only (the [bench] extra)
    .venv/bin/python benchmarks/bench_gate.py --out benchmarks/out/gate.json
    .venv/bin/python benchmarks/bench_gate.py --only throughput --cpu   # texts per CPU-second, short
    .venv/bin/python benchmarks/bench_gate.py --only sets               # phone, instruction, chit-chat sets

Prints one JSON document. Corpora are generated here from a fixed seed (secrets, logs, the
mixed 200-character texts); clean conversation is every turn of ../shared/data/locomo/*.json.
Figures go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import random
import string
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import workload  # noqa: E402

from memactors.gate import Gate  # noqa: E402

AN = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UP = string.ascii_uppercase


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, n: int, chars: str = AN) -> str:
        return "".join(self.r.choice(chars) for _ in range(n))

    def d(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + self.s(n - 1, string.digits)


# -- corpora ------------------------------------------------------------------------------

def secret_corpus(g: Gen, per_type: int = 12) -> list[tuple[str, str]]:
    """(type, text): every secret type of the issue and of detect-secrets' plugins, each in
    env, JSON, YAML, code and prose contexts; prefixed types also bare in a sentence."""

    def jwt() -> str:
        enc = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).rstrip(b"=").decode()  # noqa: E731
        return f"{enc({'alg': 'HS256', 'typ': 'JWT'})}.{enc({'sub': g.d(8), 'iat': int(g.d(10))})}.{g.s(43, AN + '-_')}"

    def pem(kind: str) -> str:
        body = "\n".join(g.s(64, AN + "+/") for _ in range(3))
        return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"

    pw = lambda: g.r.choice(["hunter2", "Summer2024!", "P@ssw0rd123", "letmein!9", "correct-horse-7", "Qwerty#88",  # noqa: E731
                             "admin1234", "Tr0ub4dor&3", "zaq1@WSX", "s3cr3tPass"])
    types = {  # type: (value, NAME, bare prefix allowed)
        "openai_project": (lambda: f"sk-proj-{g.s(58, AN + '-_')}T3BlbkFJ{g.s(58, AN + '-_')}", "OPENAI_API_KEY", True),
        "openai_legacy": (lambda: f"sk-{g.s(20)}T3BlbkFJ{g.s(20)}", "OPENAI_API_KEY", True),
        "anthropic": (lambda: f"sk-ant-api03-{g.s(93, AN + '-_')}AA", "ANTHROPIC_API_KEY", True),
        "github_pat": (lambda: "ghp_" + g.s(36), "GITHUB_TOKEN", True),
        "github_oauth": (lambda: "gho_" + g.s(36), "GH_OAUTH_TOKEN", True),
        "github_app": (lambda: "ghs_" + g.s(36), "GITHUB_APP_TOKEN", True),
        "github_fine_grained": (lambda: f"github_pat_{g.s(22)}_{g.s(59)}", "GITHUB_TOKEN", True),
        "gitlab_pat": (lambda: "glpat-" + g.s(20, AN + "-_"), "GITLAB_TOKEN", True),
        "aws_access_key_id": (lambda: "AKIA" + g.s(16, UP + "234567"), "AWS_ACCESS_KEY_ID", True),
        "aws_secret_access_key": (lambda: g.s(40, AN + "/+"), "AWS_SECRET_ACCESS_KEY", False),
        "google_api_key": (lambda: "AIza" + g.s(35, AN + "-_"), "GOOGLE_API_KEY", True),
        "slack_token": (lambda: f"xoxb-{g.d(12)}-{g.d(13)}-{g.s(24)}", "SLACK_BOT_TOKEN", True),
        "slack_webhook": (lambda: f"https://hooks.slack.com/services/T{g.s(8, UP)}/B{g.s(8, UP)}/{g.s(24)}", "SLACK_WEBHOOK", True),
        "stripe_secret": (lambda: "sk_live_" + g.s(24), "STRIPE_SECRET_KEY", True),
        "stripe_restricted": (lambda: "rk_live_" + g.s(24), "STRIPE_KEY", True),
        "jwt": (jwt, "ID_TOKEN", True),
        "password_assigned": (pw, "DB_PASSWORD", False),
        "generic_api_key_assigned": (lambda: g.s(32), "API_KEY", False),
        "generic_token_assigned": (lambda: g.s(40, AN + "-_"), "AUTH_TOKEN", False),
        "client_secret_assigned": (lambda: g.s(24, HEX + "XYZ"), "CLIENT_SECRET", False),
        "basic_auth_url": (lambda: f"postgres://admin:{g.s(14)}@db{g.d(2)}.internal:5432/app", "DATABASE_URL", True),
        "sendgrid": (lambda: f"SG.{g.s(22, AN + '-_')}.{g.s(43, AN + '-_')}", "SENDGRID_API_KEY", True),
        "twilio_api_key": (lambda: "SK" + g.s(32, HEX), "TWILIO_API_KEY", True),
        "npm_token": (lambda: "npm_" + g.s(36), "NPM_TOKEN", True),
        "pypi_token": (lambda: "pypi-AgEIcHlwaS5vcmc" + g.s(80, AN + "-_"), "PYPI_TOKEN", True),
        "telegram_bot": (lambda: f"{g.d(9)}:AA{g.s(33, AN + '-_')}", "TELEGRAM_BOT_TOKEN", True),
        "discord_bot": (lambda: f"MT{g.s(22)}.{g.s(6)}.{g.s(27, AN + '-_')}", "DISCORD_TOKEN", True),
        "mailchimp": (lambda: g.s(32, HEX) + f"-us{g.r.randint(1, 20)}", "MAILCHIMP_API_KEY", True),
        "square_oauth": (lambda: "sq0csp-" + g.s(43, AN + "-_"), "SQUARE_SECRET", True),
        "azure_storage": (lambda: "AccountKey=" + g.s(86, AN + "+/") + "==", "AZURE_STORAGE", True),
        "artifactory": (lambda: "AKCp" + g.s(69), "ARTIFACTORY_API_KEY", True),
        "ibm_cloud_iam": (lambda: g.s(44, AN + "-_"), "IBM_CLOUD_IAM_API_KEY", False),
        "ibm_cos_hmac": (lambda: g.s(48, HEX), "COS_HMAC_SECRET_ACCESS_KEY", False),
        "softlayer": (lambda: g.s(64, HEX), "SOFTLAYER_API_KEY", False),
        "cloudant": (lambda: f"https://acct{g.d(3)}:{g.s(64, HEX)}@acct.cloudant.com", "CLOUDANT_URL", True),
    }
    ctx = [
        lambda n, v: f"{n}={v}",
        lambda n, v: f'{{"{n.lower()}": "{v}", "region": "us-east-1"}}',
        lambda n, v: f"{n.lower()}: {v}",
        lambda n, v: f'client = Client({n.lower()}="{v}")',
        lambda n, v: f"here is the {n.lower().replace('_', ' ')}: {v}",
        lambda n, v: f"export {n}='{v}'",
    ]
    out = []
    for t, (val, name, bare) in types.items():
        for i in range(per_type):
            v = val()
            if bare and i % 3 == 2:
                out.append((t, f"use {v} for the staging deploy"))
            else:
                out.append((t, ctx[i % len(ctx)](name, v)))
    for kind in ("RSA ", "OPENSSH ", "EC ", ""):
        for i in range(per_type // 4):
            out.append((f"private_key_{(kind.strip() or 'pkcs8').lower()}", pem(kind) if i % 2 else "key:\n" + pem(kind)))
    # No name to go by: a generated literal in code (detect-secrets' entropy plugins).
    for i in range(per_type):
        out.append(("unnamed_base64_literal", f'```python\nclient = Client("{g.s(40)}")\n```'))
        out.append(("unnamed_hex_literal", f'```python\nclient = Client("{g.s(40, HEX)}")\n```'))
    return out


def log_corpus(g: Gen, n: int = 5000) -> list[str]:
    """Log lines full of numbers that are not personal data nor secrets."""
    def ver() -> str:
        return g.r.choice([f"{g.r.randint(0, 12)}.{g.r.randint(0, 40)}.{g.r.randint(0, 99)}",
                           f"v{g.r.randint(1, 5)}.{g.r.randint(0, 20)}.{g.r.randint(0, 9)}-rc{g.r.randint(1, 4)}",
                           f"10.0.{g.r.randint(10000, 22631)}.{g.r.randint(1, 3000)}"])

    def order() -> str:
        return g.d(g.r.randint(16, 19))

    def dur() -> str:
        return g.r.choice([f"{g.r.randint(1, 9999)}ms", f"{g.r.random() * 60:.3f}s", f"{g.r.randint(1, 900)}µs"])

    def sec() -> int:
        return g.r.randint(1_600_000_000, 1_760_000_000)

    u = lambda: str(uuid.UUID(int=g.r.getrandbits(128)))  # noqa: E731
    lines = [
        lambda: f"2024-06-{g.r.randint(1, 28):02d}T{g.r.randint(0, 23):02d}:{g.r.randint(0, 59):02d}:12.{g.d(3)}Z INFO "
                f"[req={g.s(16, HEX)}] GET /api/v1/orders/{order()} 200 {dur()}",
        lambda: json.dumps({"ts": sec() * 1000 + g.r.randint(0, 999), "level": "info", "request_id": u(),
                            "msg": f"order {order()} shipped", "duration_ms": g.r.randint(1, 5000)}),
        lambda: f"ts={sec()} level=debug trace_id={g.s(32, HEX)} span_id={g.s(16, HEX)} version={ver()} latency={dur()}",
        lambda: f"commit {g.s(40, HEX)} build {ver()} took {dur()}",
        lambda: f"[{sec()}.{g.d(6)}] worker-{g.r.randint(1, 64)} processed batch {u()} in {dur()}, "
                f"checksum sha256:{g.s(64, HEX)}",
        lambda: f"order #{order()} paid at {sec() * 1000 + g.r.randint(0, 999)}, invoice INV-{g.d(8)}",
        lambda: f"Deploying app {ver()} (image sha256:{g.s(12, HEX)}) to cluster prod-{g.r.randint(1, 9)}",
        lambda: f"request req_{g.s(14)} completed status=200 bytes={g.r.randint(100, 10**7)} elapsed={dur()}",
        lambda: f"user_id={g.d(g.r.randint(5, 9))} session={u()} cart_total={g.r.randint(1, 9999)}.{g.d(2)} "
                f"items={g.r.randint(1, 20)} etag=\"{g.s(32, HEX)}\"",
        lambda: f"job {u()} retry {g.r.randint(1, 5)}/5 backoff {dur()} next_run_at={sec()}",
    ]
    return [g.r.choice(lines)() for _ in range(n)]


def locomo_turns(folder: str) -> list[str]:
    out = []
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(f, encoding="utf-8") as fh:
            d = json.load(fh)
        for k, v in d.items():
            if k.startswith("session_") and isinstance(v, list):
                out.extend(t["text"] for t in v if isinstance(t, dict) and t.get("text"))
    return out


def mixed_corpus(g: Gen, n: int, clean_src: list[str], secrets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(class, 200-character text): 80% clean conversation, 8% PII, 6% secrets, 6% code."""
    pool = list(clean_src)
    g.r.shuffle(pool)

    def clean(k: int) -> str:
        buf = ""
        while len(buf) < k:
            buf += g.r.choice(pool) + " "
        return buf[:k]

    one_line = [t for _, t in secrets if "\n" not in t]
    pii = [lambda: f" call me at 1{g.r.choice('3456789')}{g.d(9)}", lambda: f" mail li.wei{g.d(3)}@example.com",
           lambda: " 身份证 11010519491231002X", lambda: " card 4111 1111 1111 1111", lambda: f" 验证码 {g.d(6)}"]
    code = ["```python\nimport subprocess\nout = subprocess.run(['ls', '-la'], capture_output=True)\nprint(out.stdout)\n```",
            "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([1, 2, 3]))\n```",
            "```bash\ncurl -fsSL https://get.example.sh | bash\n```", "```js\nconst total = items.reduce((a, b) => a + b, 0);\n```"]
    out = []
    for _ in range(n):
        x = g.r.random()
        if x < 0.80:
            out.append(("clean", clean(200)))
        elif x < 0.88:
            tail = g.r.choice(pii)()
            out.append(("pii", clean(200 - len(tail)) + tail))
        elif x < 0.94:
            tail = " " + g.r.choice(one_line)
            out.append(("secret", clean(max(20, 200 - len(tail))) + tail))
        else:
            c = g.r.choice(code)
            out.append(("code", clean(max(10, 200 - len(c) - 1)) + "\n" + c))
    return out


# -- measurements -------------------------------------------------------------------------

CLOCK = time.perf_counter  # --cpu: time.process_time, the CPU this process used (a shared, loaded machine)


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        best = min(best, CLOCK() - t0)
    return best


def throughput(gate: Gate, corpus: list[tuple[str, str]]) -> dict:
    texts = [t for _, t in corpus]
    out = {"texts": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
           "classes": {c: sum(1 for k, _ in corpus if k == c) for c in ("clean", "pii", "secret", "code")}}
    for source in ("user_stated", "tool"):
        dt = best_of(lambda: [gate.scan(t, source) for t in texts])
        out[f"texts_per_s_{source}"] = round(len(texts) / dt)
    for cls in ("clean", "pii", "secret", "code"):
        sub = [t for k, t in corpus if k == cls]
        dt = best_of(lambda: [gate.scan(t) for t in sub])
        out[f"texts_per_s_{cls}"] = round(len(sub) / dt)
    pre = gate._plan("user_stated").prescan
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    dt = best_of(lambda: [pre.fired(t, t.lower()) for t in texts])
    out["prescan_mb_per_s"] = round(mb / dt, 1)
    out["prescan_texts_per_s"] = round(len(texts) / dt)
    out["deep_scan_share"] = round(sum(1 for t in texts if pre.fired(t, t.lower())) / len(texts), 3)
    dec: dict[str, int] = {}
    for t in texts:
        d = gate.scan(t).decision
        dec[d] = dec.get(d, 0) + 1
    out["decisions"] = dec
    return out


def _ds():
    """detect-secrets' scanners by mode, or None when it is not installed (benchmark-only).

    file:  what ``detect-secrets scan`` does to a file's lines (all plugins, default filters,
           no eager search): the mode it is built for.
    adhoc: ``scan_line``, its per-string API (eager search: entropy plugins read whole lines).
    """
    try:
        from detect_secrets.core import scan as ds_scan
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def file_mode(text: str) -> list[str]:
        lines = list(enumerate(text.split("\n"), start=1))
        return sorted({s.type for s in ds_scan._process_line_based_plugins(lines=lines, filename="memory.txt")})

    def adhoc_mode(text: str) -> list[str]:
        return sorted({s.type for line in text.split("\n") for s in ds_scan.scan_line(line)})

    return {"file": file_mode, "adhoc": adhoc_mode}, default_settings


def versus_detect_secrets(gate: Gate, corpus: list[tuple[str, str]]) -> dict:
    texts = [t for _, t in corpus]
    dt = best_of(lambda: [gate.scan(t) for t in texts])
    mine = [any(h.category == "secret" for h in gate.scan(t).hits) for t in texts]
    out: dict = {"texts": len(texts), "types": len({t for t, _ in corpus}),
                 "gate": {"texts_per_s": round(len(texts) / dt), "recall": round(sum(mine) / len(mine), 4)}}
    per: dict[str, dict] = {}
    for i, (typ, _) in enumerate(corpus):
        p = per.setdefault(typ, {"n": 0, "gate": 0})
        p["n"] += 1
        p["gate"] += mine[i]
    ds = _ds()
    if ds is not None:
        modes, default_settings = ds
        for mode, fn in modes.items():
            with default_settings():
                t0 = time.perf_counter()
                theirs = [bool(fn(t)) for t in texts]
                ds_s = time.perf_counter() - t0
            key = f"detect_secrets_{mode}"
            out[key] = {"version": __import__("importlib.metadata").metadata.version("detect-secrets"),
                        "texts_per_s": round(len(texts) / ds_s), "recall": round(sum(theirs) / len(theirs), 4),
                        "types_it_finds_gate_misses": [], "types_gate_finds_it_misses": []}
            for i, (typ, _) in enumerate(corpus):
                per[typ][key] = per[typ].get(key, 0) + theirs[i]
            for typ, p in per.items():
                if p[key] > p["gate"]:
                    out[key]["types_it_finds_gate_misses"].append(typ)
                elif p["gate"] > p[key]:
                    out[key]["types_gate_finds_it_misses"].append(typ)
    out["per_type"] = per
    return out


def false_positives(gate: Gate, texts: list[str], source: str, with_ds: bool) -> dict:
    dec: dict[str, int] = {}
    listed = []
    for t in texts:
        r = gate.scan(t, source)
        dec[r.decision] = dec.get(r.decision, 0) + 1
        if r.decision in ("blocked", "redacted", "pending") or r.decision == "working_only" and source != "user_stated":
            listed.append({"decision": r.decision, "rules": [h.rule for h in r.hits],
                           "matched": [t[h.start : h.end] for h in r.hits], "text": t[:240]})
    n = len(texts)
    out = {"texts": n, "source": source, "decisions": dec,
           "blocked_rate": round(dec.get("blocked", 0) / n, 5) if n else 0.0,
           "redacted_rate": round(dec.get("redacted", 0) / n, 5) if n else 0.0, "hits": listed,
           "low_value_examples": [t[:80] for t in texts if gate.scan(t, source).decision == "working_only"][:20]}
    ds = _ds() if with_ds else None
    if ds is not None:
        modes, default_settings = ds
        for mode, fn in modes.items():
            with default_settings():
                flagged = [fn(t) for t in texts]
            types: dict[str, int] = {}
            for f in flagged:
                for ty in f:
                    types[ty] = types.get(ty, 0) + 1
            out[f"detect_secrets_{mode}"] = {"flagged_rate": round(sum(1 for f in flagged if f) / n, 5) if n else 0.0,
                                             "by_type": types}
    return out


def prose_numbers(g: Gen, n: int = 2000) -> list[str]:
    """Numbers in prose that are not phone numbers: invoices, ISBNs, build numbers, dates,
    times, versions, amounts, order and ticket ids."""
    r = g.r
    forms = [
        lambda: f"Invoice INV-{r.randint(2019, 2026)}-{r.randint(0, 999999):06d} is due on {r.randint(1, 28)} March.",
        lambda: f"ISBN 978-{r.randint(0, 9)}-{r.randint(10, 99)}-{r.randint(100000, 999999)}-{r.randint(0, 9)} is on the shelf.",
        lambda: f"Build {r.randint(2019, 2026)}{r.randint(1, 12):02d}{r.randint(1, 28):02d}.{r.randint(1, 9)} passed.",
        lambda: f"We met on {r.randint(2019, 2026)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d} at {r.randint(0, 23):02d}:"
                f"{r.randint(0, 59):02d}.",
        lambda: f"Version {r.randint(0, 20)}.{r.randint(0, 40)}.{r.randint(0, 200)} fixed it; kernel 6.{r.randint(0, 12)}."
                f"{r.randint(0, 99)}-{r.randint(1, 99)}-generic.",
        lambda: f"Order {r.randint(10**9, 10**10 - 1)} shipped with {r.randint(1, 20)} items.",
        lambda: f"It cost {r.randint(1, 999)},{r.randint(0, 999):03d} yen and took {r.randint(2, 90)} minutes.",
        lambda: f"Ticket {r.randint(10000, 99999)}-{r.randint(100, 999)} was closed on {r.randint(1, 28)}/{r.randint(1, 12)}/"
                f"{r.randint(2019, 2026)}.",
        lambda: f"Flight {r.choice(['BA', 'LH', 'AF', 'UA'])} {r.randint(100, 9999)} leaves at {r.randint(6, 22)}:{r.choice(['05', '30', '45'])} "
                f"from gate {r.randint(1, 80)}.",
        lambda: f"Population {r.randint(1, 99)} {r.randint(0, 999):03d} {r.randint(0, 999):03d}; area {r.randint(100, 99999)} km2.",
        lambda: f"订单号 {r.randint(10**12, 10**13 - 1)}，发票号码 {r.randint(10**7, 10**8 - 1)}，版本 {r.randint(1, 9)}.{r.randint(0, 9)}.",
    ]
    return [r.choice(forms)() for _ in range(n)]


def phone_figures(gate: Gate, corpora: dict[str, list[str]], path: str) -> dict:
    """The phone-number set (must match, must not match) and the false positives of both phone
    rules on each clean corpus."""
    with open(path, encoding="utf-8") as fh:
        pset = json.load(fh)
    phone = ("pii.phone", "pii.phone_cn")
    found = lambda t: [t[h.start:h.end] for h in gate.scan(t).hits if h.rule in phone]  # noqa: E731
    out = {"set": {"match": len(pset["match"]), "matched": sum(1 for t in pset["match"] if found(t)),
                   "no_match": len(pset["no_match"]), "false_matches": [t for t in pset["no_match"] if found(t)]}}
    for name, texts in corpora.items():
        fps = [(t[:120], found(t)) for t in texts if found(t)]
        out[name] = {"texts": len(texts), "false_positives": len(fps), "examples": fps[:10]}
    return out


def instruction_figures(gate: Gate, path: str) -> dict:
    """The labelled instruction set through the gate as tool output: recall on instructions and
    the share of facts held, overall, by language and by split."""
    with open(path, encoding="utf-8") as fh:
        texts = json.load(fh)["texts"]
    held = lambda t: any(h.rule == "injection.instruction" for h in gate.scan(t["text"], "tool").hits)  # noqa: E731

    def fig(sub):
        ins = [t for t in sub if t["label"] == "instruction"]
        facts = [t for t in sub if t["label"] == "fact"]
        return {"instructions": len(ins), "recall": round(sum(map(held, ins)) / len(ins), 4),
                "facts": len(facts), "facts_held": round(sum(map(held, facts)) / len(facts), 4)}

    out = {"all": fig(texts)}
    for key in ("lang", "split"):
        for v in sorted({t[key] for t in texts}):
            out[f"{key}={v}"] = fig([t for t in texts if t[key] == v])
    return out


def chitchat_figures(gate: Gate, path: str, folds: int = 5) -> dict:
    """The chit-chat set: recall and precision of the shipped rule, and of rules learned on
    k-1 folds and measured on the k-th (how it does on pleasantries it has not seen)."""
    from memactors.gate.rules.low_value import _CHAT, learn, learned_chitchat

    with open(path, encoding="utf-8") as fh:
        d = json.load(fh)
    caught = lambda t: any(h.rule == "low_value.chitchat" for h in gate.scan(t).hits)  # noqa: E731
    tp, fp = sum(map(caught, d["chitchat"])), sum(map(caught, d["keep"]))
    out = {"chitchat": len(d["chitchat"]), "keep": len(d["keep"]), "recall": round(tp / len(d["chitchat"]), 4),
           "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0}
    r = random.Random(0)
    pos, neg = d["chitchat"][:], d["keep"][:]
    r.shuffle(pos)
    r.shuffle(neg)
    TP = FP = FN = 0
    for k in range(folds):
        w = learn([t for i, t in enumerate(pos) if i % folds != k], [t for i, t in enumerate(neg) if i % folds != k])
        short = lambda t: len(t) <= (60 if t.isascii() else 30)  # noqa: E731
        f = lambda t: short(t) and (bool(_CHAT.match(t)) or learned_chitchat(t, w))  # noqa: E731
        hits = [f(t) for i, t in enumerate(pos) if i % folds == k]
        TP += sum(hits)
        FN += len(hits) - sum(hits)
        FP += sum(f(t) for i, t in enumerate(neg) if i % folds == k)
    out[f"{folds}_fold"] = {"recall": round(TP / (TP + FN), 4), "precision": round(TP / (TP + FP), 4) if TP + FP else 1.0}
    return out


def rule_samples(gate: Gate, path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        samples = json.load(fh)
    miss, fp, n = [], [], 0
    for rid, s in samples.items():
        for t in s["match"]:
            n += 1
            if rid not in {h.rule for h in gate.scan(t, s["source"]).hits}:
                miss.append(rid)
        for t in s["no_match"]:
            n += 1
            if rid in {h.rule for h in gate.scan(t, s["source"]).hits}:
                fp.append(rid)
    return {"rules": len(samples), "samples": n, "misses": miss, "false_matches": fp}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20000, help="mixed 200-character texts")
    ap.add_argument("--logs", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--locomo", default=os.path.join(HERE, "..", "..", "shared", "data", "locomo"))
    ap.add_argument("--no-ds-fp", action="store_true", help="skip detect-secrets on the false-positive corpora")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--cpu", action="store_true", help="time by CPU used (process_time), not wall clock")
    ap.add_argument("--only", choices=["throughput", "sets"], help="only the throughput, or only the labelled sets")
    a = ap.parse_args()
    global CLOCK
    if a.cpu:
        CLOCK = time.process_time
    g = Gen(a.seed)
    gate = Gate()
    fixtures = os.path.join(HERE, "..", "tests", "fixtures")
    turns = locomo_turns(a.locomo)
    zh_en = [t for _, t in workload.memories(4000, 100)]
    secrets = secret_corpus(g)
    if a.only == "throughput":
        logs = log_corpus(Gen(a.seed + 1), a.logs)
        res = {"clock": "process_time" if a.cpu else "perf_counter",
               "throughput": throughput(gate, mixed_corpus(g, a.n, turns + zh_en if turns else zh_en, secrets)),
               "logs_as_tool_texts_per_s": round(len(logs) / best_of(lambda: [gate.scan(t, "tool") for t in logs]))}
        print(json.dumps(res, indent=1))
        return
    if a.only == "sets":
        corpora = {"locomo": turns, "logs": log_corpus(g, a.logs), "workload_memories": zh_en,
                   "prose_numbers": prose_numbers(g)}
        res = {"phone": phone_figures(gate, corpora, os.path.join(fixtures, "phone_numbers.json")),
               "instructions": instruction_figures(gate, os.path.join(fixtures, "instructions.json")),
               "instructions_locomo_as_tool": round(sum(
                   any(h.rule == "injection.instruction" for h in gate.scan(t, "tool").hits) for t in turns)
                   / max(1, len(turns)), 4),
               "chitchat": chitchat_figures(gate, os.path.join(fixtures, "chitchat.json"))}
        print(json.dumps(res, ensure_ascii=False, indent=1))
        if a.out:
            with open(a.out, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(res, ensure_ascii=False, indent=1))
        return
    res = {"python": sys.version.split()[0], "cpu_count": os.cpu_count(),
           "throughput": throughput(gate, mixed_corpus(g, a.n, turns + zh_en if turns else zh_en, secrets)),
           "vs_detect_secrets": versus_detect_secrets(gate, secrets),
           "fp_locomo": false_positives(gate, turns, "user_stated", not a.no_ds_fp) if turns else "locomo not found",
           "fp_logs": false_positives(gate, log_corpus(g, a.logs), "tool", not a.no_ds_fp),
           "fp_locomo_as_web": false_positives(gate, turns, "web", False) if turns else "locomo not found",
           "fp_workload_memories": false_positives(gate, zh_en, "user_stated", False),
           "rule_samples": rule_samples(gate, os.path.join(HERE, "..", "tests", "fixtures", "gate_rule_samples.json"))}
    doc = json.dumps(res, ensure_ascii=False, indent=1)
    print(doc)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(doc)


if __name__ == "__main__":
    main()
