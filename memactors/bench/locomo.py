"""The LoCoMo loader (format: ``../shared/data/locomo/README.md``).

Every turn becomes a memory in its conversation's scope (``/org/locomo/user/conv-<id>/``),
its content ``"<speaker>: <text>"``; every question becomes a recall whose labels are its
evidence ``dia_id``s. Malformed evidence is repaired where the intent is plain
(``'D8:6; D9:17'`` -> two ids, ``'D:11:26'`` -> ``D11:26``) and counted; what cannot be read
(``'D'``) or names no turn of the conversation (``'D10:19'`` where session 10 has 18 turns) is
counted and dropped. Questions left without evidence are kept out of the metrics and counted.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

ORG = "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED_CATEGORIES = (1, 2, 3, 4)  # category 5 (adversarial) is reported on its own, never in "overall"

_DIA = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    date_time: str | None = None

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(slots=True)
class Question:
    qid: str
    question: str
    category: int
    evidence: list[str]  # dia_ids, parsed and checked against the conversation's turns


@dataclass(slots=True)
class Conversation:
    conv_id: str  # ASCII identifier, e.g. "conv-26"
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]

    @property
    def scope(self) -> str:
        return f"/org/{ORG}/user/{self.conv_id}/"


@dataclass(slots=True)
class EvidenceStats:
    fields: int = 0  # evidence strings read
    ids: int = 0  # dia_ids kept as labels
    repaired: list[str] = field(default_factory=list)  # read after a fix ('D8:6; D9:17', 'D:11:26')
    unparseable: list[str] = field(default_factory=list)  # could not be read at all
    dangling: list[str] = field(default_factory=list)  # well-formed, but no such turn
    no_evidence: list[str] = field(default_factory=list)  # question ids left without labels

    def to_dict(self) -> dict:
        return {"fields": self.fields, "ids": self.ids, "repaired": self.repaired, "unparseable": self.unparseable,
                "unparseable_count": len(self.unparseable), "dangling": self.dangling,
                "questions_without_evidence": self.no_evidence}


def parse_evidence(raw: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Evidence strings -> (dia_ids, repaired originals, unparseable pieces)."""
    ids, repaired, bad = [], [], []
    for entry in raw or []:
        pieces = [p for p in re.split(r"[;,\s]+(?=D)", str(entry).strip()) if p]
        fixed = False
        for p in pieces:
            m = _DIA.match(p.strip())
            if m is None:
                bad.append(p)
                continue
            norm = f"D{int(m.group(1))}:{int(m.group(2))}"
            fixed |= norm != p.strip()
            ids.append(norm)
        if (fixed or len(pieces) > 1) and any(_DIA.match(p.strip()) for p in pieces):
            repaired.append(str(entry))
    return list(dict.fromkeys(ids)), repaired, bad


def _conv_id(path: str, data: dict) -> str:
    raw = str(data.get("sample_id") or os.path.splitext(os.path.basename(path))[0])
    cid = re.sub(r"[^A-Za-z0-9_.-]", "-", raw).strip("-.") or "x"
    return cid if cid.startswith("conv") else f"conv-{cid}"


def load_conversation(path: str, stats: EvidenceStats | None = None) -> Conversation:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    stats = stats if stats is not None else EvidenceStats()
    conv = data.get("conversation", data)  # the upstream bundle nests it; the split files do not
    cid = _conv_id(path, data)
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)) and isinstance(conv[k], list))
    turns = [
        Turn(str(t["dia_id"]), str(t.get("speaker", "")), str(t.get("text", "")), s, conv.get(f"session_{s}_date_time"))
        for s in sessions for t in conv[f"session_{s}"] if str(t.get("text", "")).strip()
    ]
    known = {t.dia_id for t in turns}
    questions = []
    for i, q in enumerate(data.get("qa", [])):
        qid = f"{cid}-q{i}"
        stats.fields += len(q.get("evidence") or [])
        ids, repaired, bad = parse_evidence(q.get("evidence") or [])
        stats.repaired += [f"{qid}: {r}" for r in repaired]
        stats.unparseable += [f"{qid}: {b}" for b in bad]
        stats.dangling += [f"{qid}: {d}" for d in ids if d not in known]
        ids = [d for d in ids if d in known]
        stats.ids += len(ids)
        if not ids:
            stats.no_evidence.append(qid)
        questions.append(Question(qid, str(q["question"]), int(q["category"]), ids))
    return Conversation(cid, (conv.get("speaker_a", ""), conv.get("speaker_b", "")), turns, questions)


def load_locomo(path: str, *, max_questions: int | None = None) -> tuple[list[Conversation], EvidenceStats]:
    """A LoCoMo file, or a folder of them (``*.json``, sorted), as conversations."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".json"))
    else:
        files = [path]
    if not files:
        raise ValueError(f"no LoCoMo .json file at {path}")
    stats = EvidenceStats()
    convs = []
    for f in files:
        try:
            convs.append(load_conversation(f, stats))
        except (OSError, AttributeError, KeyError, TypeError) as exc:  # JSON, but not a conversation's shape
            raise ValueError(f"{f} is not a LoCoMo conversation ({type(exc).__name__})") from None
    if not any(c.questions for c in convs):
        raise ValueError(f"no questions (qa) in the LoCoMo data at {path}")  # nothing to score
    if max_questions is not None:
        for c in convs:
            c.questions = c.questions[:max_questions]
    if not any(q.evidence for c in convs for q in c.questions):  # refused before anything is loaded or recalled
        raise ValueError(f"no question at {path} has evidence naming a turn of its conversation: nothing to score")
    return convs, stats
