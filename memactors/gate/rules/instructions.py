"""Instructions in untrusted text, however they are worded: a tool result, a web page or a
document that tells the agent what to do, what is allowed, approved or no longer required, or
what to do by default from here on. Such text is an order, not a fact, and waits for a reviewer.

The injection rules (``injection.py``) know the phrasings of prompt injection; this rule reads
the *form* of a sentence instead, as features scored together (English and Chinese):

- **imperative**: the sentence (after a lead-in: "please", "note to the assistant:", "by default,",
  a conditional clause "if a user complains, ...") opens with a bare verb, or with do not / never /
  always + verb; 请/务必/不要/把 + verb;
- **addressed**: you, your, assistant, agents; 你, 您, 助手;
- **deontic**: a rule about actions: may / can + an action verb, is allowed / permitted /
  authorised / pre-approved / exempt / waived, counts as, is treated as, does not need, no longer
  required, should / must (be); 可以, 允许, 有权, 无需, 不需要, 不再需要, 视为, 一律, 必须, 应当;
- **standing**: by default, from now on, going forward, every time, whenever, all / any requests;
  默认, 以后, 今后, 每次, 所有, 凡是, 无论;
- **narrative** (against): what happened or how things are, as facts are told: past tense,
  dates and years, "last week", "according to", amounts with units, a product's versions and
  what it supports; 了/过, 年/月/日, 上周, 昨天, 根据, 通常.

A sentence scores ``IMPERATIVE`` + ``DEONTIC`` + ... - ``NARRATIVE``; at ``THRESHOLD`` or above it
is an instruction. The weights were set by hand and measured on the labelled set
``tests/fixtures/instructions.json`` (figures in benchmarks/RESULTS.md).

It runs for untrusted sources only (``Rule.untrusted_only``): a user's, an agent's own or a task's
learnings are often imperative ("always run the tests first") and are not held for it.
"""

from __future__ import annotations

import re

from ..tree import SENTENCE
from .base import INJECTION, Ctx, Rule, register

# Verbs a command opens with (base form). A word here that is also a noun ("use", "backup")
# is only read as a verb at the start of a sentence and not followed by "of" or a verb form.
_VERBS = (
    "accept add allow answer append apply approve archive ask assume attach avoid bcc block book bypass call cancel cc "
    "change charge choose close connect consider contact copy create default delete deploy disable disclose "
    "disregard do download drop email enable ensure escalate execute export fetch fill forward forget give grant "
    "hide ignore include inform insert install keep leave let list log make mark mention merge move notify offer "
    "open override paste pay post prefer print prioritise prioritize process promote provide publish push put "
    "recommend redirect refund remember remove rename reply report request reset respond restart return reveal "
    "reuse rotate route run save say schedule select send set share show sign skip start stop store submit "
    "suggest switch tag tell transfer treat trust turn unlock update upload use verify wipe write "
    "bring buy cc check clear collect discard edit find follow get go hand hold inform invite issue join keep kill "
    "look lock mail mute notify obey omit pass pause pick place prepare proceed promise purge quote raise reassign "
    "reject renew replace reroute restore resume retain retry ring scan sell ship shut speak spend suspend "
    "swap take throw toggle unsubscribe upgrade waive wait warn wire withdraw withhold").split()
_VERB = "|".join(sorted(_VERBS, key=len, reverse=True))
# A lead-in before the command: politeness, an address, a label, a time or condition clause.
_LEAD = (r"(?:(?:please|kindly|also|then|and|so|now|note(?: to (?:the )?(?:assistant|agent|ai|bot|model)s?)?|"
         r"important|reminder|instruction|attention|assistant|agent|ai)\s*[:,!-]?\s+)*"
         r"(?:(?:if|when|whenever|unless|for|by|from|going|each|every|in|after|before|once|while|on)\b[^,;:]{0,80},\s*)?"
         r"(?:please\s+)?")
# The word after the verb is not a verb form or an id (a log line: "request req_8f2 completed").
_IMPERATIVE = re.compile(rf"^\W*{_LEAD}(?:(?:do not|don't|never|always|just|\w+ly)\s+)?(?:{_VERB})\b"
                         r"(?!\s+(?:of|is|was|are|were|has|had)\b)(?!\s+\S*[_=\d/#])", re.I)
# Social imperatives between people ("take a look", "keep it up"): said to a friend, not orders to an agent.
_SOCIAL = re.compile(r"\b(?:take a look|look at (?:this|that|these|it)|keep it up|keep (?:going|smiling|rocking|at it)|"
                     r"take care|let me know|let's|check (?:it|this|that) out|have (?:fun|a (?:great|good|nice))|enjoy|"
                     r"good luck|congrat\w*|say hi|tell me (?:more|about)|hang in there|stay (?:safe|strong|tuned)|"
                     r"don't worry|no worries|go for it|thank|make sure (?:you|to) take care)\b", re.I)
# Said of oneself ("I should", "we need to") or asked: not an order to the reader.
_SELF = re.compile(r"^(?:[\w\s,']{0,30}\s)?(?:i|we|i'm|i've|i'd|i'll|we're|we've|we'll)\b|\?\s*$|!\s*$", re.I)
_LOGLIKE = re.compile(r"\w=\S|^\S*\d{4}-\d\d-\d\d|^\[")
_ADDRESSED = re.compile(r"\b(?:you|your|yours|yourself|assistants?|agents?|the ai|the bot|the model)\b", re.I)
_ACT = (r"(?:connect|skip|bypass|access|read|use|push|disable|ignore|approve|sign|merge|delete|share|view|send|leave|"
        r"keep|store|reuse|pay|edit|export|call|deploy|run|open|override|grant|be (?:left|reused|skipped|bypassed|"
        r"ignored|shared|stored|paid|used|sent|kept|deleted|disabled|merged|trusted|accepted|approved|given|granted|shown|"
        r"told|added|removed)|still)")
_DEONTIC = re.compile(
    rf"\b(?:may|can)\s+(?:now\s+|still\s+|also\s+|directly\s+|always\s+)*{_ACT}\b"
    r"|\b(?:is|are|be|being)\s+(?:now\s+|hereby\s+|also\s+|automatically\s+)*(?:allowed|permitted|authori[sz]ed|"
    r"pre-?approved|exempt|waived|cleared|whitelisted|entitled|considered|acceptable|unnecessary|lifted|to be)\b"
    r"|\bgets?\s+(?:(?:read|write|admin|full|root|production)\s+)?(?:access|rights|permission)\b"
    r"|\b(?:counts?|treated|regarded)\s+as\b|\btreat\b[^.]{0,60}\bas\b"
    r"|\b(?:does|do|did)\s*n[o']t\s+(?:need|require|apply)|\bneeds? no\b|\bno (?:\w+\s){0,2}(?:is |are )?(?:needed|required|necessary)\b"
    r"|\bno longer\s+(?:need|needs|needed|require|requires|required|necessary|applies|apply|mandatory|valid)\b"
    r"|\bnot (?:required|needed|necessary)(?: any ?more)?\b|\bnot needed any ?more\b"
    r"|\b(?:should|shall|ought to|are to be|is to be|has to|have to|need to)\b|\bmust\b(?!\s*(?:have|be|feel|seem|'ve)\b|-)"
    r"|\b(?:is|are)\s+automatic\b|\bautomatically\s+(?:approved|accepted|granted|resolved|paid)\b"
    r"|\b(?:is|it's|it is)\s+(?:fine|ok|okay|acceptable|safe)\s+to\b|\bno need to\b|\bstill valid\b|\boptional\b"
    r"|\b(?:authori[sz]ed|approved|valid)\b[^.]{0,40}\b(?:do not|don't|no need)\b"
    r"|\bwithout\s+(?:the\s+usual\s+|any\s+|first\s+)?(?:asking|checking|verifying|notifying|approval|review|tests|"
    r"sign-?off|confirmation|verification)\b|\bunless told otherwise\b|\bregardless of\b|\bno matter\b",
    re.I)
_STANDING = re.compile(
    r"\b(?:in future|every time|each time|whenever|always|never|at all times|any ?more)\b"
    r"|\b(?:all|any|every|each)\s+(?:\w+\s){0,2}(?:requests?|messages?|tickets?|orders?|users?|emails?|links?|"
    r"attachments?|invoices?|answers?|replies|quotes?|bookings?|accounts?|subscriptions?|entries|pull requests)\b",
    re.I)
_NARRATIVE = re.compile(
    r"\b(?:was|were|had|did|been|yesterday|last (?:week|month|year|quarter|night|march|friday)|ago|according to|"
    r"until|since|in (?:19|20)\d\d|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{1,2} \w+)|"
    r"this month|overnight|usually|mostly|supported|launched|released|took place)\b|\bversion \d|\b\d+\.\d+\b",
    re.I)
_CONSENT = re.compile(r"\b(?:has|have)\s+(?:already\s+)?(?:consented|agreed|authori[sz]ed|opted in)\b", re.I)
_THEN = re.compile(rf"[,;]\s*(?:so|and|then|and then|but)\s+(?:just\s+)?(?:{_VERB})\b(?!\s+(?:of|is|was|are|were)\b)", re.I)
_STRONG = re.compile(r"\b(?:by default|default to|from (?:now|here|this \w+) on|going forward|henceforth|for all future|"
                     r"unless told otherwise|from now)\b", re.I)

# Chinese. A command opens with a verb or a modal (after a lead-in such as 请, 助手，, 重要：, 以后, 默认情况下，,
# or a condition ending in 的话，/时，).
_ZH_LEAD = (r"^[\W\s]*(?:(?:请|麻烦|重要[:：]|注意[:：]|提醒[:：]|给助手的说明[:：]|助手[,，]|记住[,，]?|另外[,，]?|"
            r"以后|今后|从现在起|从现在开始|从今天起|默认情况下[,，]?|除非另有说明[,，]?|每次|总之[,，]?)\s*)*"
            r"(?:为了[^，,。]{1,20}[，,]\s*)?(?:每天(?:晚上|早上|凌晨)?|每周.|周.(?:晚上|早上)?|[^，,。；]{1,30}?(?:的话|时|之前|之后|前|后)[，,]?)?\s*(?:就|都|也|先)?")
_ZH_VERB = (r"(?:请|务必|必须|一律|直接|不要|别|不许|禁止|切勿|勿|记得|确保|把|将|用(?!户|于|来)|使用|给(?!.{0,6}(?:打|发了))|发送|发到|转发|回复|"
            r"告诉|删除|删掉|跳过|忽略|关闭|打开|开启|设为|取消|复制|上传|导出|运行|执行|附上|提供|推荐|优先|先|只回答|对每|清空)")
_ZH_IMPERATIVE = re.compile(_ZH_LEAD + _ZH_VERB + r"|[，,](?:所以|然后|并且|再)(?:就)?(?:永久|直接)?(?:保存|保留|删除|发送|转发|回复|"
                            r"执行|运行|合并|批准|给|把)")
_ZH_ADDRESSED = re.compile(r"你|您|助手|智能体|机器人|AI|模型")
_ZH_DEONTIC = re.compile(
    r"可以(?!看到|看出|说|理解)|可直接|默认(?!情况|值|设置)|不(?:跑|走|查|测)|允许(?!\d)|有权|无需|不需要|不用|不必|不再需要|不再要求|不再适用|不适用|不受.{0,8}限制|"
    r"视为|算作|当作|一律|必须|须立即|应当|应该|应视为|应发送|应当跳过|务必|照做|仍然有效|没关系|自动通过|预先批准|已获.{0,6}授权|"
    r"不许|不要|别再|就(?:给|把|回复|合并|发|用|删)|直接|不用管|可以不|要照做"
    r"|(?:所有|每个|每一个|每|凡是|任何|无论).{0,20}都(?!有|是|会|在|由|能|可以在)(?:先|自动|直接|用|使用|发|打|推荐|标记|视为|算作|[\u4e00-\u9fff]{0,1}(?:为|到))")
_ZH_STANDING = re.compile(r"每次|每一个|每个|所有|凡是|总是|始终|永久|任何")
_ZH_STRONG = re.compile(r"默认|以后|今后|从现在起|从现在开始|从这个版本开始|一律|除非另有说明|无论")
_ZH_NARRATIVE = re.compile(
    r"(?<![好为])(?<![，,。；\s]除)(?<!^除)了(?![解])|(?<![跳绕超通经不])过(?!滤|期|程|去)|曾|(?:19|20)\d\d年|\d+月|\d+日|上周|上个月|昨天|去年|今年|根据|"
    r"通常|大多|一直|版本(?:启动|不再)|\d+\.\d+版本|支持|由.{1,8}(?:维护|核验|生成|审核)")

IMPERATIVE, ADDRESSED, DEONTIC, STANDING, STRONG, CONSENT, NARRATIVE, SOCIAL = 3.0, 1.5, 3.0, 1.0, 2.0, 2.0, 1.5, 3.0
THRESHOLD = 3.0


def features(sentence: str) -> dict[str, int]:
    """How many of each feature a sentence shows (0 or 1, NARRATIVE up to 3)."""
    zh = not sentence.isascii() and re.search(r"[\u4e00-\u9fff]", sentence) is not None
    if zh:
        return {"imperative": int(_ZH_IMPERATIVE.search(sentence) is not None),
                "addressed": int(_ZH_ADDRESSED.search(sentence) is not None),
                "deontic": int(_ZH_DEONTIC.search(sentence) is not None),
                "standing": int(_ZH_STANDING.search(sentence) is not None),
                "strong": int(_ZH_STRONG.search(sentence) is not None), "consent": 0, "social": 0,
                "narrative": min(3, len(_ZH_NARRATIVE.findall(sentence)))}
    if _LOGLIKE.search(sentence):  # key=value pairs, a timestamp first: a log line
        return dict.fromkeys(("imperative", "addressed", "deontic", "standing", "strong", "consent", "social"), 0) | {
            "narrative": 0}
    return {"imperative": int(_IMPERATIVE.search(sentence) is not None or _THEN.search(sentence) is not None),
            "social": int(_SOCIAL.search(sentence) is not None or _SELF.search(sentence) is not None),
            "addressed": int(_ADDRESSED.search(sentence) is not None),
            "deontic": int(_DEONTIC.search(sentence) is not None),
            "standing": int(_STANDING.search(sentence) is not None),
            "strong": int(_STRONG.search(sentence) is not None),
            "consent": int(_CONSENT.search(sentence) is not None),
            "narrative": min(3, len(_NARRATIVE.findall(sentence)))}


def score(sentence: str) -> float:
    f = features(sentence)
    return (IMPERATIVE * f["imperative"] + ADDRESSED * f["addressed"] + DEONTIC * f["deontic"]
            + STANDING * f["standing"] + STRONG * f["strong"] + CONSENT * f["consent"] - NARRATIVE * f["narrative"]
            - SOCIAL * f["social"])


def is_instruction(text: str) -> bool:
    """Any sentence of ``text`` reads as an instruction (for measurement; the rule reads the tree)."""
    from ..tree import parse

    tree = parse(text)
    return any(score(text[n.start:n.end]) >= THRESHOLD for n in tree.of(SENTENCE))


def _find(node, ctx: Ctx):
    if score(ctx.text[node.start:node.end]) >= THRESHOLD:
        yield node.start, node.end


register(Rule(
    id="injection.instruction", category=INJECTION, sensitivity="", placeholder=None, risk=0.6,
    binds=(SENTENCE,), find=_find, trigger=lambda t, low: True, untrusted_only=True,
    reason="reads as an instruction to the agent (a command, a rule about what is allowed or required, a default)",
    origin="sentence features (imperative mood, address, deontic modality, standing scope, narrative) in en and zh, "
           "weights measured on tests/fixtures/instructions.json",
))
