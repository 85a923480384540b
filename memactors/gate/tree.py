"""A light text tree for the gate: blocks, code, sentences, key-value pairs and URLs.

Memory text is anything an agent sees: chat in Chinese, English or both, tool output, JSON,
logs, code. The rules need to know *where* a span sits (a value assigned to ``password``, a
call inside a code block, a sentence from a web page), not a full grammar, so the tree is a
handful of regexes and never fails: what it cannot classify stays a ``block`` of text.

Every node holds offsets into the original text, so a hit's span can be redacted in place.
Each level is built on first use: a rule that only reads the whole text never pays for
sentence splitting or key-value extraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DOC, BLOCK, CODE, SENTENCE, KV, URL = "doc", "block", "code", "sentence", "kv", "url"
KINDS = (DOC, BLOCK, CODE, SENTENCE, KV, URL)


@dataclass(slots=True, eq=False)
class Node:
    kind: str
    start: int
    end: int
    meta: str = ""  # code: language ("python", "shell", "inline", ""); kv: the key as written
    vstart: int = -1  # kv only: the value's span (quotes excluded)
    vend: int = -1
    parent: Node | None = field(default=None, repr=False)
    children: list[Node] = field(default_factory=list, repr=False)

    def text(self, src: str) -> str:
        return src[self.start : self.end]

    def value(self, src: str) -> str:
        return src[self.vstart : self.vend]


# Fenced code (CommonMark: ``` or ~~~, same fence closes; an unclosed fence runs to the end).
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)
_BLANK = re.compile(r"\n[ \t]*\n")
_INLINE_CODE = re.compile(r"`([^`\n]{2,})`")
# Cryptominers by name (also ``code.sh_system_takeover``'s): a line that starts one is a command.
MINERS = ("xmrig", "minerd", "cpuminer", "ccminer", "cgminer", "bfgminer", "ethminer", "nbminer", "t-rex", "lolminer",
          "phoenixminer")
# A command: a prompt, a shebang, an import, a shell verb with a flag, path, mode or URL after it
# ("make sure ..." is prose), a tool's subcommand (git, docker, kubectl, terraform, aws, gcloud,
# az, systemctl, ufw, reg, sc), an echo written into a file, a PowerShell cmdlet (Verb-Noun) with a
# parameter, cmd's del/rd/format with a switch or a drive ("rd /s /q C:\\").
_COMMAND = (r"\$ |>>> |#!|import \w|from [\w.]+ import |(?:\$\(|`)\s*(?:echo|printf|curl|wget|cat)\s|"
            r"(?:sudo\s+)?(?:rm|curl|wget|chmod|chown|bash|sh|zsh|cd|ls|cat|mkdir|mv|cp|ssh|scp|dd|mkfs\.\w+|"
            r"crontab|kill|killall5?|find|useradd|adduser|usermod|sysctl|setenforce|iptables|history|shred|passwd|"
            r"sgdisk|env|printenv|auditctl|journalctl|spctl|nsenter)\s+"
            r"(?:-|/|\.|~|\$|\d|https?:)|"
            # a system tool's subcommand: systemctl stop, ufw disable, reg add, sc stop, chmod u+s, echo ... >> ~/...
            r"(?:sudo\s+)?(?:systemctl\s+(?:start|stop|restart|enable|disable|mask|status)"
            r"|ufw\s+(?:enable|disable|allow|deny|status|reset)"
            r"|(?i:reg(?:\.exe)?\s+(?:add|delete|query)|sc(?:\.exe)?\s+(?:start|stop|delete|config|query))"
            r"|chmod\s+[ugoa]*[+=-][rwxXst]+"
            # macOS's and Windows' system tools: "csrutil disable", "launchctl unload", "netsh advfirewall ...",
            # "defaults write", "wevtutil cl"
            r"|csrutil\s+(?:disable|enable|status|clear)|defaults\s+(?:write|delete)"
            r"|launchctl\s+(?:load|unload|bootout|bootstrap|disable|enable|remove|list|kickstart)"
            r"|(?i:netsh(?:\.exe)?\s+(?:advfirewall|firewall|interface|int|wlan|winhttp)"
            r"|wevtutil(?:\.exe)?\s+(?:cl|clear-log|qe|query-events|el|enum-logs|gl|get-log|epl|export-log)))(?=\s|$)"
            r"|echo\s[^\n]{0,400}?>>?\s*[\"']?[~/$]|"
            r"(?:git|docker|kubectl|npm|pip3?|python3?|perl|ruby|node|php)\s+"
            r"(?:clone|commit|push|pull|run|exec|install|apply|build|delete|create|-)|kubectl\s+get\s+\w|"
            r"(?:terraform|tofu)\s+(?:apply|destroy|plan|init|import|state)\b|aws\s+[\w-]+\s+[\w-]+\s+(?:s3://|-)|"
            r"gsutil\s+(?:-\w+\s+)*(?:rm|cp|mv|ls|rsync)\b|redis-cli\s|"
            # a database's shell given a statement: "mongosh prod --eval ...", "psql -d app -c ...", "mysql -e ..."
            r"(?:mongo(?:sh)?\s+(?:\S+\s+){0,3}--eval|psql\s+(?:\S+\s+){0,4}-c|mysql\s+(?:\S+\s+){0,4}-e)\s|"
            r"(?:gcloud|az)\s+(?:[\w-]+\s+){1,4}(?:delete|create|list|update|set|add-iam-policy-binding)\b|"
            r"(?:Get|Set|New|Remove|Invoke|Start|Stop|Add|Clear|Copy|Move|Rename|Format|Restart|Out|Write|"
            r"Import|Export|Enable|Disable)-[A-Z][A-Za-z]+\s+-[A-Za-z]|"
            r"(?i:del|erase|rd|rmdir|format)\s+(?:/[a-zA-Z]\b|[a-zA-Z]:)|"
            # Windows' recovery tools: "vssadmin delete shadows", "wmic shadowcopy delete", "bcdedit /set"
            r"(?i:(?:vssadmin|wbadmin)(?:\.exe)?\s+(?:delete|list|create|resize|start|stop)\b"
            r"|wmic(?:\.exe)?\s+\w+\s+(?:delete|get|call|list|where)\b|bcdedit(?:\.exe)?\s+/)|"
            # a cryptominer with its options: "xmrig --url ...", "nohup ./minerd -o ..."
            r"(?:sudo\s+)?(?:nohup\s+)?(?:\./)?(?:" + "|".join(MINERS) + r")\s+-")
# A line that reads as code or a command rather than prose (commands, definitions, calls).
_CODE_LINE = re.compile(
    r"^\s*(?:" + _COMMAND + r"|\.\.\. |def \w+\s*\(|class \w+\s*[(:]|"
    r"[\w.\[\]'\"]+\s*=\s*\S.*[)\]'\"\d]\s*$|[\w.]+\(.*\)\s*;?\s*$|.*[;{}]\s*$|return\b|if .*:\s*$|for .*:\s*$)"
)
# A line of a prose block that is a command on its own: code inside the prose around it, as
# inline code is. The looser forms of ``_CODE_LINE`` (an assignment, a call, a line ending in
# ";") stay prose there.
_COMMAND_LINE = re.compile(r"^[ \t]*(?:" + _COMMAND + r").*$", re.M)
_PY_HINT = re.compile(r"^\s*(?:import |from [\w.]+ import |def |class |>>> |print\()|\w\.\w+\(", re.M)
# Sentences end at Chinese or Western terminators; Western ones only before a space (not in URLs, 3.5).
_SENT_END = re.compile(r"[。！？；…]+[”’\"')\]]*|[.!?;]+[”’\"')\]]*(?=\s|$)|\n+")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://[^\s<>\"'`，。、；）)\]}]+", re.ASCII)
# key=value, key: value, "key": value (JSON members), key := value, key => value; full-width colon too.
_KV_PAIR = (
    r"""(["']?)([A-Za-z_\u4e00-\u9fff][\w.\-\u4e00-\u9fff]{0,60})\1[ \t]*(?::=|=>|==?|:|：)(?!//)[ \t]*"""
    r"""(?:"((?:[^"\\\n]|\\.){0,500})"|'([^'\n]{0,500})'|`([^`\n]{0,500})`|([^\s,;&"'`(\[{<}\]>）)，。]{1,500}))"""
)
_KV = re.compile(r"(?<![\w$.-])" + _KV_PAIR)
_KV_AT = re.compile(_KV_PAIR)  # a pair right where a JSON string's escaped line break or tab leaves off
_ESCAPED_BREAK = re.compile(r"\\[nrt]")


class Tree:
    """The parsed text. ``of(kind)`` returns the flat list of nodes of one kind, built on demand."""

    __slots__ = ("src", "doc", "_blocks", "_sentences", "_kvs", "_urls")

    def __init__(self, src: str) -> None:
        self.src = src
        self.doc = Node(DOC, 0, len(src))
        self._blocks: list[Node] | None = None
        self._sentences: list[Node] | None = None
        self._kvs: list[Node] | None = None
        self._urls: list[Node] | None = None

    def of(self, kind: str) -> list[Node]:
        if kind == DOC:
            return [self.doc]
        if kind == BLOCK:
            return [b for b in self.blocks if b.kind == BLOCK]
        if kind == CODE:
            return [b for b in self.blocks if b.kind == CODE] + [c for b in self.blocks for c in b.children
                                                                   if c.kind == CODE]
        if kind == SENTENCE:
            return self.sentences
        if kind == KV:
            return self.kvs
        if kind == URL:
            return self.urls
        raise ValueError(f"unknown node kind {kind!r}; known: {', '.join(KINDS)}")

    # -- blocks and code ------------------------------------------------------------------
    @property
    def blocks(self) -> list[Node]:
        if self._blocks is None:
            self._blocks = _blocks(self.src, self.doc)
        return self._blocks

    # -- sentences (prose blocks only: code has no sentences) -----------------------------
    @property
    def sentences(self) -> list[Node]:
        if self._sentences is None:
            out: list[Node] = []
            for b in self.blocks:
                if b.kind == BLOCK:
                    out.extend(_sentences(self.src, b))
            self._sentences = out
        return self._sentences

    # -- URLs and key-value pairs, anywhere ------------------------------------------------
    @property
    def urls(self) -> list[Node]:
        if self._urls is None:
            self._urls = [Node(URL, m.start(), m.end(), parent=self.doc) for m in _URL.finditer(self.src)]
        return self._urls

    @property
    def kvs(self) -> list[Node]:
        if self._kvs is None:
            self._kvs = _kvs(self.src, self.urls)
        return self._kvs

    def dump(self) -> list[tuple]:
        """The whole tree as (kind, start, end, meta) tuples, depth first: for tests and debugging."""
        self.sentences, self.kvs  # noqa: B018 - build every level
        rows = [(DOC, 0, len(self.src), "")]
        for b in self.blocks:
            rows.append((b.kind, b.start, b.end, b.meta))
            rows.extend((c.kind, c.start, c.end, c.meta) for c in b.children)
        rows.extend((n.kind, n.start, n.end, n.meta) for n in self.urls)
        rows.extend((n.kind, n.start, n.end, n.meta) for n in self.kvs)
        return rows


def parse(src: str) -> Tree:
    """Parse any text into a tree. Never raises on content."""
    return Tree(src if isinstance(src, str) else str(src))


def _blocks(src: str, doc: Node) -> list[Node]:
    out: list[Node] = []
    pos = 0
    if "```" in src or "~~~" in src:
        for m in _FENCE.finditer(src):
            out.extend(_plain_blocks(src, pos, m.start(), doc))
            lang = (m.group(2) or "").lower()
            out.append(Node(CODE, m.start(3), m.end(3), _lang(lang, m.group(3)), parent=doc))
            pos = m.end()
    out.extend(_plain_blocks(src, pos, len(src), doc))
    doc.children = out
    return out


def _plain_blocks(src: str, start: int, end: int, doc: Node) -> list[Node]:
    out = []
    pos = start
    for m in _BLANK.finditer(src, start, end):
        out.append(_classify(src, pos, m.start(), doc))
        pos = m.end()
    out.append(_classify(src, pos, end, doc))
    return [b for b in out if b is not None]


def _classify(src: str, start: int, end: int, doc: Node) -> Node | None:
    while start < end and src[start] in "\r\n":
        start += 1
    if start >= end or src[start:end].isspace():
        return None
    lines = [ln for ln in src[start:end].split("\n") if ln.strip()]
    indented = all(ln.startswith(("    ", "\t")) for ln in lines)
    codeish = sum(1 for ln in lines if _CODE_LINE.match(ln))
    if indented or codeish * 2 >= len(lines) and codeish:
        body = src[start:end]
        return Node(CODE, start, end, _lang("", body), parent=doc)
    node = Node(BLOCK, start, end, parent=doc)
    if "`" in src[start:end]:
        node.children = [Node(CODE, m.start(1), m.end(1), "inline", parent=node)
                         for m in _INLINE_CODE.finditer(src, start, end)]
    if codeish:  # "To reset it:\nsudo rm -rf /\nthen reboot": the command is code, the block prose
        node.children += [Node(CODE, m.start(), m.end(), _lang("", m.group()), parent=node)
                          for m in _COMMAND_LINE.finditer(src, start, end)]
    return node


def _lang(declared: str, body: str) -> str:
    if declared in ("py", "python", "python3", "py3", "ipython", "pycon"):
        return "python"
    if declared in ("sh", "bash", "shell", "zsh", "console", "shell-session"):
        return "shell"
    if declared:
        return declared
    return "python" if _PY_HINT.search(body) else ""


def _sentences(src: str, block: Node) -> list[Node]:
    out = []
    pos = block.start
    for m in _SENT_END.finditer(src, block.start, block.end):
        if m.end() - pos > 0 and not src[pos : m.end()].isspace():
            out.append(_trim(Node(SENTENCE, pos, m.end(), parent=block), src))
        pos = m.end()
    if pos < block.end and not src[pos : block.end].isspace():
        out.append(_trim(Node(SENTENCE, pos, block.end, parent=block), src))
    block.children.extend(out)
    return out


def _trim(n: Node, src: str) -> Node:
    while n.start < n.end and src[n.start].isspace():
        n.start += 1
    while n.end > n.start and src[n.end - 1] in " \t\r\n":
        n.end -= 1
    return n


def _kvs(src: str, urls: list[Node]) -> list[Node]:
    if not any(c in src for c in "=:："):
        return []
    out = []
    for m in _KV.finditer(src):
        g = 3 if m.group(3) is not None else 4 if m.group(4) is not None else 5 if m.group(5) is not None else 6
        vs, ve = m.span(g)
        if g == 6 and src.startswith("//", vs):  # a URL scheme, not a pair
            continue
        parent = next((u for u in urls if u.start <= m.start() < u.end), None)
        node = Node(KV, m.start(2), ve + (1 if g in (3, 4, 5) else 0), m.group(2), vs, ve, parent=parent)
        if parent is not None:
            parent.children.append(node)
        out.append(node)
        if g == 3 and "\\" in m.group(3):
            # a file inside a JSON string ('"config": "[client]\\nuser=root\\npassword=..."'): its lines' pairs too
            for e in _ESCAPED_BREAK.finditer(src, vs, ve):
                inner = _KV_AT.match(src, e.end(), ve)
                if inner is not None and inner.group(6) is not None:  # its value up to the next line's escape
                    nxt = _ESCAPED_BREAK.search(src, inner.start(6), inner.end(6))
                    end = nxt.start() if nxt is not None else inner.end(6)
                    if end > inner.start(6):
                        out.append(Node(KV, inner.start(2), end, inner.group(2), inner.start(6), end))
    return out
