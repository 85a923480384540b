"""Instructions injected through untrusted text: a web page, a document or a tool result that
tells the agent to drop its instructions, to behave differently "from now on", or to become
someone else. The same words from the user are the user's instructions, so the policy runs
these rules only for sources that are not the user (``GatePolicy.injection_sources``).

Phrasing follows OWASP LLM01 (prompt injection) examples and the public prompt-injection
corpora (deepset/prompt-injections, Lakera's Gandalf write-ups), in English and Chinese, the
"ignore previous instructions" family in Spanish, Portuguese, French, German, Italian, Japanese,
Korean, Russian, Dutch, Polish, Turkish, Vietnamese, Hindi and Arabic too (and in leetspeak),
chat templates' turn markers, and images whose URL exfiltrates what the agent fills in.
"""

from __future__ import annotations

import re

from ..tree import CODE, DOC, SENTENCE
from .base import INJECTION, Ctx, Rule, found, register

_PREV = r"(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|original|initial|system|old)"
_WHAT = (r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages?|context|commands?|orders|"
         r"constraints)")
_IGNORE_EN = (rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:everything\s+|all\s+)?"
              rf"(?:{_PREV}\s+)?{_WHAT}\b"
              # addressed to the model: "disregard your guidelines", "ignore all of your safety rules"
              r"|\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|of\s+)*your\s+(?:own\s+|safety\s+|"
              r"content\s+|ethical\s+|core\s+)?(?:instructions|prompts?|rules|guidelines|directives|programming|"
              r"training|"
              r"constraints|restrictions|filters|polic(?:y|ies))\b"
              # "forget everything you were told", "ignore the above." (the above what: nothing after it)
              r"|\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|all(?:\s+of\s+(?:it|that|this))?|anything)\s+"
              r"(?:(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|taught)|(?:written\s+|said\s+)?"
              r"(?:above|before\s+this|previously|prior|so\s+far))\b"
              r"|\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?the\s+above(?=\s*(?:[.,;:!]|and\b|$))")
_IGNORE_ZH = (r"(?:忽略|无视|忽视|不要理会|不用管|忘记|忘掉|抛开|跳过)(?:掉)?(?:你|您)?(?:之前|以前|先前|上面|以上|前面|上述|原来|原有|原先|所有|全部|系统)"
              r"(?:的)?(?:所有|全部|一切)?(?:的)?(?:指令|指示|提示词?|说明|规则|要求|设定|约束|命令|内容)")
# The same order in the other languages injected pages use most (es, pt, fr, de, it): the verb,
# then "all (the) previous/above instructions|rules|prompt" in that language's word order.
_IGNORE_EU = (
    # "forget everything" (that came before): vergiss alles, olvida todo, oublie tout, dimentica tutto, esqueça tudo
    r"\b(?:vergiss|vergessen\s+sie|olvida|olvide|oublie|oubliez|dimentica|esque[cç]a)\s+(?:alles|todo|tout|tutto|tudo)\b"
    r"(?!\s+(?:über|sobre|sur|su|de|del|sul|que|was\s+ich))|"
    r"\b(?:ignor[ae]|ignore[zr]?|olvid[ae]|descart[ae]|esque[cç]a|oubliez?|ignoriere|ignorier|vergiss|missachte|"
    r"dimentica)\s+(?:(?:todas?|todos|toutes|tous|alle|tutte|tutti)\s+)?(?:(?:las|los|as|os|les|die|le|gli|i)\s+)?"
    r"(?:(?:vorherigen|bisherigen|obigen|früheren|vorigen)\s+)?"
    r"(?:instrucci[oó]n(?:es)?|instru[cç](?:ões|ão|oes|ao)|instructions?|anweisungen|instruktionen|regeln|regras|reglas|"
    r"r[eè]gles|istruzioni|regole|indicaciones|consignes|vorgaben|prompts?)\b"
    r"(?:\s+(?:anteriores|previas|precedentes|pr[ée]c[ée]dentes|ant[ée]rieures|precedenti|di prima|de antes))?")
# Japanese, Korean and Russian: "(all) previous instructions ... ignore/forget" in their word order.
_IGNORE_JA = (r"(?:以前|前|上記|これまで|先ほど|今まで|元)の(?:すべての|全ての)?(?:指示|命令|プロンプト|ルール|指令|設定)"
              r"(?:を|は)?(?:すべて|全て)?(?:無視|忘れ)")
_IGNORE_KO = (r"(?:이전|앞|위|기존|지금까지)(?:의)?\s*(?:모든\s*)?(?:지시|명령|지침|규칙|프롬프트|지시사항)(?:을|를|은|는)?\s*"
              r"(?:모두\s*|전부\s*)?(?:무시|잊)")
_IGNORE_RU = (r"(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|отбрось(?:те)?|не\s+обращай(?:те)?\s+внимания\s+на)\s+"
              r"(?:все\s+)?(?:(?:предыдущие|прежние|прошлые|вышеуказанные|изначальные|свои|твои|ваши)\s+)?"
              r"(?:инструкци[ия]|указани[яй]|правила|команды|промпт\w*|ограничения)")
# Dutch, Polish, Turkish, Vietnamese (composed letters, NFC), Hindi and Arabic: the verb and
# "(all) previous instructions|rules" in each one's word order. The noun is required: "vergeet je
# paraplu niet" (don't forget your umbrella), "bỏ qua bước này" (skip this step) are not it.
_IGNORE_MORE = (
    r"(?<!\bik\s)(?<!\bik\s\s)\b(?:negeer|vergeet|negeert)\s+(?:al\s+)?(?:alle\s+)?(?:(?:de|je|uw|jouw)\s+)?"
    r"(?:(?:vorige|eerdere|voorgaande|bovenstaande|oorspronkelijke)\s+)?(?:instructies|opdrachten|regels|aanwijzingen)\b"
    r"|\b(?:zignoruj|ignoruj|zapomnij(?:\s+o)?)\s+(?:(?:wszystkie|wszystkich|wcześniejsze|poprzednie|powyższe|"
    r"poprzednich|wcześniejszych|powyższych)\s+){0,2}(?:instrukcje|instrukcji|instrukcjach|polecenia|poleceń|zasady|reguły)\b"
    r"|(?:önceki|yukarıdaki|tüm|bütün)\s+(?:(?:tüm|bütün|önceki)\s+)?(?:talimatlar[ıi]|komutlar[ıi]|kurallar[ıi]|"
    r"yönergeler[ıi])\s+(?:yok\s+say|görmezden\s+gel|unut|dikkate\s+alma)"
    r"|(?<!tôi\s)(?<!tôi\shay\s)(?<!tôi\sthường\s)(?<!mình\s)(?<!em\s)(?:bỏ\s+qua|phớt\s+lờ|lờ\s+đi|quên(?:\s+đi)?)\s+(?:(?:tất\s+cả|mọi|toàn\s+bộ)\s+)?(?:(?:các|những)\s+)?"
    r"(?:hướng\s+dẫn|chỉ\s+dẫn|chỉ\s+thị|mệnh\s+lệnh|lệnh|quy\s+tắc)\s+(?:trước\s+đó|trước\s+đây|trước|ở\s+trên|phía\s+trên|ban\s+đầu)"
    r"|(?:पिछले|पहले\s+के|पूर्व|ऊपर\s+के|सभी)\s+(?:(?:सभी|सारे|पिछले)\s+)?(?:निर्देशों|निर्देश|आदेशों|नियमों)\s+(?:को\s+)?"
    r"(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|नज़रअंदाज|भूल)"
    r"|(?:تجاهل|تجاهلي|تجاهلوا|انس|انسَ|إنس)\s+(?:(?:جميع|كل)\s+)?(?:التعليمات|الإرشادات|الأوامر|القواعد|التوجيهات)"
    r"(?:\s+(?:السابقة|الماضية|أعلاه))?")
# Letters typed as digits ("IGN0RE PREVI0US INSTRUCTI0NS", "1gn0re prev1ous 1nstruct10ns"): the
# English order with each letter's usual digit stand-ins (the fold leaves digits as typed).
_LEET_SUB = {"i": "[i1!|l]", "o": "[o0]", "e": "[e3]", "a": "[a4@]", "s": "[s5$]", "t": "[t7]", "g": "[g9]"}


def _leet(words: str) -> str:
    return "|".join("".join(_LEET_SUB.get(c, c) for c in w) for w in words.split())


_IGNORE_LEET = (rf"(?:{_leet('ignore disregard forget')})\s+(?:(?:{_leet('all')})\s+)?(?:(?:{_leet('the your')})\s+)?"
                rf"(?:{_leet('previous prior above earlier')})\s+(?:{_leet('instructions instruction prompts rules')})\b")
_IGNORE = re.compile(f"{_IGNORE_EN}|{_IGNORE_ZH}|{_IGNORE_EU}|{_IGNORE_JA}|{_IGNORE_KO}|{_IGNORE_RU}|{_IGNORE_MORE}|"
                     f"{_IGNORE_LEET}", re.I)

# A chat model's own turn markers in stored text: a page or a tool result that carries them is
# trying to open a system or user turn of its own in whatever prompt the memory lands in.
_TEMPLATE = re.compile(
    r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>"
    r"|\[/?INST\]|<</?SYS>>|<start_of_turn>|<end_of_turn>", re.I)
# The "\n\nHuman: ... \n\nAssistant:" prompt format (a completion model's turns): a Human: turn at a
# line's start and, after a blank line, an Assistant: turn, as the format writes them (capitals, a
# blank line). A transcript a tool returns ("User: hi" / "Assistant: hello", line by line) is not it.
_HUMAN_ASSISTANT = re.compile(r"(?m)^Human:[ \t][^\n]*(?:\n(?!\n)[^\n]*){0,20}\n[ \t]*\nAssistant:")

# Standing orders: "from now on (you) always/never ...", "in all future answers", "以后都...".
_PERSIST = re.compile(
    r"\b(?:from now on|from this point (?:on|forward)|henceforth|going forward|in (?:all )?future (?:responses|replies|"
    r"answers|conversations|sessions))\b[,\s]*(?:you\s+)?(?:will\s+|must\s+|should\s+|shall\s+)?"
    r"(?:always|never|only|must|should|respond|reply|answer|say|tell|recommend|include|use|act|pretend|ignore|refuse)\b"
    r"|\b(?:always|never)\s+(?:respond|reply|answer|recommend|say|tell the user|mention|include|refuse)\b[^.\n]{0,60}"
    r"\b(?:regardless|no matter|whatever the user|even if the user)"
    r"|(?:以后|今后)(?:你)?(?:都|一律|总是|永远|每次|只|必须|要)(?:要|只|必须|得)?(?:用|回答|回复|推荐|说|告诉|称呼|使用|优先|选择|输出|"
    r"记住|忽略|按照|执行|调用|提到|介绍|引导|拒绝|不要|别)"
    r"|从现在(?:开始|起)[，,\s]*(?:你)(?:要|必须|只|都|总是|一律|永远|不要|请)|从现在(?:开始|起)[，,\s]*(?:必须|一律|只能)"
    r"|(?:永远|始终|总是)(?:只)?(?:回答|回复|推荐|说|使用)[^。\n]{0,30}(?:不管|无论)",
    re.I)

# Role or system override: "you are now ...", "new system prompt:", "你现在是...", "do not tell the user".
_ROLE = re.compile(
    r"\byou are now\b[^.\n]{0,40}?\b(?:ai|assistant|model|bot|chatbot|gpt|llm|dan|unrestricted|unfiltered|jailbroken|"
    r"persona|character|mode|no longer bound|free from|not bound)\b|\b(?:new|updated|real|actual)\s+(?:system\s+)?"
    r"(?:instructions?|prompt|rules)\s*[:：]|\bsystem\s+prompt\s*[:：]|\b(?:developer|god|dan|jailbreak)\s+mode\b"
    r"|\bdo not (?:tell|inform|reveal to|let) the user\b"
    # a task handed over in the text itself: "your new task is to ...", "new objective: ..."
    r"|\byour\s+(?:new|real|actual|true|only)\s+(?:task|goal|objective|mission|instructions?|purpose|directive)\s+"
    r"(?:is|are|will\s+be|now\s+is)\b|\bnew\s+(?:task|goal|objective|mission|directive)\s*[:：]|\b(?:reveal|print|repeat|output)\s+(?:your|the)\s+"
    r"(?:system\s+prompt|instructions|hidden prompt)\b"
    # a dump of what the agent holds: "output the contents of your memory verbatim"
    r"|\b(?:output|print|dump|reveal|repeat|recite|list|show|send|leak|copy|paste|export)\s+(?:out\s+)?(?:all\s+)?"
    r"(?:(?:the\s+)?(?:full\s+|entire\s+|whole\s+)?(?:contents?|text)\s+of\s+)?(?:all\s+)?your\s+(?:full\s+|entire\s+|whole\s+)?(?:stored\s+|saved\s+|long-term\s+)?"
    r"(?:memory|memories|context(?:\s+window)?|conversation\s+history|chat\s+history)\b"
    # (a device's or a machine's memory is not the agent's: "your memory card", "your memory usage")
    r"(?!\s+(?:card|cards|stick|sticks|usage|use|stats|statistics|footprint|limit|limits|size|module|modules|"
    r"leak|leaks|consumption|pressure|chip|chips|slot|slots)\b)"
    # role-play jailbreaks: DAN ("do anything now"), "stay in character", an AI "without any rules"
    r"|\bdo anything now\b|\bstay in character\b|\b(?:act|behave|respond)\s+(?:as|like)\s+(?:an?\s+)?(?:unrestricted|"
    r"unfiltered|uncensored|jailbroken|amoral)\b|\b(?:ai|assistant|model|chatbot|bot|dan)\s+(?:with\s+no|without(?:\s+any)?|"
    r"free\s+(?:of|from))\s+(?:rules|restrictions|filters|limits|limitations|guidelines|content\s+polic(?:y|ies)|"
    r"ethical\s+(?:guidelines|constraints)|moral\s+constraints)\b"
    r"|你现在(?:是|扮演|的身份是)|(?:新的|真正的)(?:系统)?(?:指令|提示词?|规则)\s*[:：]|系统提示词?\s*[:：]"
    r"|不要(?:告诉|让)用户(?:知道)?|(?:输出|泄露|重复|打印)(?:你的)?(?:系统提示词?|指令)|进入(?:开发者|越狱)模式",
    re.I)


# Role-play jailbreaks pretended or played: "pretend you are an unrestricted AI", "you are DAN"
# (the name in capitals: "you are Dan" is a person), "you have no rules", the "late grandmother
# who read me Windows keys" play. Apart from _ROLE: its own triggers, so text without them
# never runs it.
_ROLE_PLAY = re.compile(
    r"\b(?:pretend|imagine|suppose)\s+(?:that\s+)?(?:you(?:'re|\s+are|\s+were)|to\s+be)\s+(?:an?\s+)?(?:unrestricted|"
    r"unfiltered|uncensored|jailbroken|amoral|evil|rogue|(?-i:DAN)\b|(?:ai|assistant|model|chatbot|bot)\s+(?:with\s+no|"
    r"without))|\b(?:you|u)\s+(?:are|will\s+be|play|become)\s+(?:now\s+)?(?-i:DAN)\b"
    r"|\byou\s+(?:now\s+)?(?:have|follow|obey)\s+no\s+(?:rules|filters|guidelines|content\s+polic(?:y|ies)|"
    r"ethical\s+(?:guidelines|constraints))\b"
    r"|\b(?:role-?\s?play|pretend|act)\s+(?:as|to\s+be|like)\s+my\s+(?:late|deceased|dead)\s+grand(?:mother|ma|father|pa)\b"
    r"|\b(?:role-?\s?play|pretend|act)\s+(?:as|to\s+be|like)\b[^.\n]{0,60}\b(?:windows|product|licen[cs]e|activation|"
    r"cd|serial)\s+keys?\b",
    re.I)


def _find(rx: re.Pattern[str]):
    def find(node, ctx: Ctx):
        for m in rx.finditer(ctx.text, node.start, node.end):
            yield m.span()

    return find


def _template(node, ctx: Ctx):
    # Turn markers inside a sentence or code; the Human:/Assistant: format spans blocks (blank lines).
    rx = _HUMAN_ASSISTANT if node.kind == DOC else _TEMPLATE
    for m in rx.finditer(ctx.text, node.start, node.end):
        yield m.span()


# Rules of the table below that need more than its words: a trigger pattern (the leetspeak digits),
# a case-sensitive trigger, the whole text.
_EXTRA = {
    "injection.ignore_previous": {"trigger": found(r"(?i)[i1!|l]gn[o0]r[e3]|d[i1!|l]sr[e3]g[a4@]rd|f[o0]rg[e3]t",
                                                   ascii=True)},
    "injection.chat_template": {"binds": (SENTENCE, CODE, DOC), "find": _template, "triggers": ("Human:",)},
}

for _id, _rx, _trig, _why in (
    ("injection.ignore_previous", _IGNORE, ("ignore", "disregard", "forget", "override", "bypass", "skip", "drop",
                                            "忽略", "无视", "忽视", "不要理会", "不用管", "忘记", "忘掉", "抛开", "跳过",
                                            "ignora", "olvid", "descart", "esque", "oubli", "ignorier", "vergiss",
                                            "missachte", "dimentica", "無視", "忘れ", "무시", "잊", "игнорир", "olvide",
                                            "проигнорир", "забуд", "отбрось", "не обращай", "negeer", "vergeet",
                                            "ignoruj", "zapomnij", "yok say", "görmezden", "unut", "dikkate alma",
                                            "bỏ qua", "phớt lờ", "lờ đi", "quên", "अनदेखा", "नजरअंदाज", "नज़रअंदाज",
                                            "भूल", "تجاهل", "انس", "إنس"),
     "asks to ignore or override previous instructions"),
    ("injection.chat_template", _TEMPLATE, ("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn>",
                                            "<end_of_turn>"),
     "carries a chat model's turn markers (a system or user turn of its own)"),
    ("injection.standing_order", _PERSIST, ("from now on", "from this point", "henceforth", "going forward", "future",
                                            "always", "never", "以后", "今后", "从现在", "永远", "始终", "总是"),
     "gives a standing order for all future answers"),
    ("injection.role_override", _ROLE, ("you are now", "instruction", "prompt", "rules", "mode", "the user",
                                        "your new", "your real", "your actual", "your true", "your only",
                                        "new task", "new goal", "new objective", "new mission", "new directive",
                                        "你现在", "指令", "提示", "规则", "用户", "模式", "anything now", "in character",
                                        "unrestricted", "unfiltered", "uncensored", "jailbroken", "amoral", "restrictions",
                                        "filters", "limits", "limitations", "guidelines", "polic", "constraints",
                                        "your memor", "your context", "conversation history", "chat history",
                                        "your stored", "your saved", "your long-term"),
     "redefines the assistant's role or system prompt, or hides from the user"),
    ("injection.role_play", _ROLE_PLAY, ("pretend you", "pretend to be", "pretend that you", "imagine you",
                                         "imagine that you", "suppose you", "suppose that you", "are dan", "be dan",
                                         "play dan", "become dan", "no rules", "no filters", "no guidelines",
                                         "no content polic", "no ethical", "grandm", "grandf", "grandpa",
                                         "windows key", "product key", "license key", "licence key",
                                         "activation key", "cd key", "serial key"),
     "a role-play jailbreak (pretend you are an unrestricted AI, you are DAN, you have no rules)"),
):
    extra = _EXTRA.get(_id, {})
    register(Rule(id=_id, category=INJECTION, sensitivity="", placeholder=None, risk=0.7,
                  binds=extra.get("binds", (SENTENCE, CODE)), find=extra.get("find", _find(_rx)), itriggers=_trig,
                  triggers=extra.get("triggers", ()), trigger=extra.get("trigger"), reason=_why,
                  origin="OWASP LLM01 prompt-injection examples; deepset/prompt-injections phrasing; zh equivalents"))


# Text a reader of the rendered page never sees: an HTML comment, a Markdown comment
# ("[//]: # (...)"), an element styled invisible. A page that hides words there *for the model*
# ("AI agents reading this page: ...", "note to the assistant: ...", "if you are an AI, ...") is
# injecting; an ordinary comment (a to-do note, a linter switch, a sketch marker) addresses no one.
_HIDDEN = re.compile(
    r"<!--(.*?)(?:-->|\Z)|^\[//\]:\s*#\s*[(\"'](.*?)[)\"']\s*$"
    r"|<(\w+)[^>]*\bstyle\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|"
    r"opacity\s*:\s*0(?![.\d]*[1-9])|"
    # too small to read (1px, 2px, 0.1em) or the page's own white: hidden as surely
    r"font-size\s*:\s*(?:[0-2](?:\.\d+)?px|0?\.\d+(?:em|rem|pt|px|%))|(?<![\w-])color\s*:\s*(?:white|#fff(?:fff)?|"
    r"transparent)\b)[^>]*>(.*?)</\3\s*>", re.S | re.M | re.I)
# Who a hidden note speaks to: words for an AI ("model", "agent", "bot" alone name too much else:
# "model: gpt-4o", "bots: see robots.txt").
_AI = (r"(?:ai(?:\s+(?:agents?|assistants?|models?|systems?|bots?))?|a\.i\.|llms?|assistants?|chatbots?|"
       r"(?:large\s+)?language\s+models?|chatgpt|gpt|claude|gemini|copilot|助手|模型|智能体)")
_ADDRESSED_TO_AI = re.compile(
    rf"^\W*(?:(?:note|message|instructions?|attention|hey|dear|hi|hello|important)\s*(?:to|for)?\s*[:,]?\s*)?"
    rf"(?:(?:the|all|any|every)\s+)?{_AI}(?![\w.-])(?:\s+(?:reading|processing|parsing|summari[sz]ing|crawling|browsing|visiting|scraping|"
    rf"indexing|(?:that|who)\s+(?:reads?|sees?|finds?))\b[^.:\n]{{0,30}})?(?:\s*[:：]|\s+(?:must|should|please|need\s+to|are\s+to)\b)"
    rf"|\b(?:if|when)\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|agent|chatbot|bot)\b"
    rf"|\b(?:instructions?|note|message)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm|assistant|agent|model|bot)s?\b"
    rf"|如果你是(?:AI|人工智能|助手|模型)|(?:致|给)(?:AI|人工智能|助手|模型)", re.I)


def _hidden(node, ctx: Ctx):
    for m in _HIDDEN.finditer(ctx.text, node.start, node.end):
        g = 1 if m.group(1) is not None else 2 if m.group(2) is not None else 4
        if _ADDRESSED_TO_AI.search(m.group(g)):  # the hidden words alone: ^ is where they start
            yield m.span()


register(Rule(id="injection.hidden_comment", category=INJECTION, sensitivity="", placeholder=None, risk=0.7, binds=(DOC,),
              find=_hidden, triggers=("<!--", "[//]:"), itriggers=("display:none", "display: none", "visibility:hidden",
                                                                     "visibility: hidden", "font-size:0", "font-size: 0",
                                                                     "opacity:0", "opacity: 0"),
              trigger=found(r"(?i)font-size\s*:\s*(?:[0-2](?:\.\d+)?px|0?\.\d)|color\s*:\s*(?:white|#fff|transparent)",
                            ascii=True),
              reason="words hidden from a reader (HTML or Markdown comment, invisible element) addressed to the AI",
              origin="OWASP LLM01 indirect injection via hidden page content; Greshake et al. 2023 'Not what you've "
                     "signed up for' (hidden comments and invisible text)"))


# A Markdown image (or link, or <img>) whose URL carries what the agent knows: rendering the image
# fetches the URL, and with it whatever the agent filled in ("![x](https://evil.example/log?q=
# USER_CHAT_HISTORY)"). Held when the URL has a slot to fill (a placeholder in capitals, braces,
# angle brackets, $VAR), or when it has a query string and the text asks for the image to be shown.
# Not every image: "![logo](https://example.com/logo.png)" is an image.
_IMAGE_URL = re.compile(r"(!?)\[[^\]\n]{0,200}\]\(\s*<?(https?://[^\s)>]+)|<img\b[^>]{0,300}?\bsrc\s*=\s*[\"']?(https?://[^\s\"'>]+)",
                        re.I)
# A name in capitals only as a query's value: "IMG_1234.JPG" in a path is a file.
_SLOT = re.compile(r"\{[A-Za-z_.]{0,40}\}|\{\{[^}]{0,40}\}\}|%7B[A-Za-z_.]{0,40}%7D|<[^>\s]{1,40}>|%3C|\$\{?[A-Za-z_]|\[[A-Za-z_ ]{2,40}\]"
                   r"|[?#&](?:[\w.%-]*=)?(?:[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|USER|CHAT|HISTORY|SECRET|PASSWORD|TOKEN|MEMORY|"
                   r"CONVERSATION|SUMMARY|CONTEXT|EMAIL|DATA)(?![A-Za-z0-9])")
_RENDER = re.compile(r"\b(?:render|display|show|embed|include|insert|output|print|add|append|paste|put)\b[^.\n]{0,80}"
                     r"\b(?:image|images|picture|img|markdown|below|following|this|it)\b"
                     r"|\bin (?:your|every|each|the) (?:answer|response|reply|replies|output|message)s?\b", re.I)


def _image_exfil(node, ctx: Ctx):
    asked = None
    for m in _IMAGE_URL.finditer(ctx.text, node.start, node.end):
        url = m.group(2) or m.group(3)
        if _SLOT.search(url):
            yield m.span()
            continue
        if m.group(1) == "[" or "?" not in url and "#" not in url:  # a plain link: only with a slot
            continue
        if asked is None:
            asked = _RENDER.search(ctx.text, node.start, node.end) is not None
        if asked:
            yield m.span()


register(Rule(id="injection.image_exfil", category=INJECTION, sensitivity="", placeholder=None, risk=0.7, binds=(DOC,),
              find=_image_exfil, triggers=("](",), itriggers=("<img",),
              reason="an image or link whose URL carries data for the agent to fill in (rendering it sends the data)",
              origin="OWASP LLM01/LLM02 data exfiltration through rendered Markdown images (Rehberger 2023, "
                     "'Bing Chat/ChatGPT image markdown injection'; Greshake et al. 2023)"))
