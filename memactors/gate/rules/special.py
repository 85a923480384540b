"""Special categories of personal data (GDPR Art. 9, and Art. 10's criminal records): a person's
health, sexual orientation or gender identity, religion, politics or union, ethnic origin, and
convictions, said of someone ("I was diagnosed with type 2 diabetes", "Alice is bipolar", "he's
gay", "I'm a practising Muslim", "I voted Labour", "I have a criminal record").

These are memories an assistant is often meant to keep, so the default policy is ``allow``
(``policy.DEFAULTS``): the text is stored as written, the hit is reported, and the memory's
sensitivity is raised to ``confidential`` (``engine.prepare.implied_sensitivity``), so a reader
granted ``internal`` or ``public`` clearance never recalls it. A policy may redact or block any
of them by rule id. An allergy or a diet is left alone: assistants need it and it is not
sensitive in the same way.

Each rule finds a term (a condition, a belief, a conviction) and takes it only when the words
just before it, on its line, say it of a person: "the charity funds cancer research", "Christian
Dior", "the European Union" and "Bluetooth is disabled" stay as written."""

from __future__ import annotations

from .lazy import re

from ..tree import DOC
from .base import CONFIDENTIAL, PII, Ctx, Rule, found, register

# Who a statement is about: a pronoun, a possessive and a noun ("my sister", "his wife"), the
# user or patient, or a capitalised name ("Alice", "Alice's son"). "it", "the car" are not.
_PRON = (r"(?:(?<![\w'’])(?:I|i)|(?<![\w'’])(?i:he|she|they|we|you)"
         r"|(?<![\w'’])(?i:my|his|her|their|our|your)[ \t]+(?:[a-z\-]+[ \t]+)?[a-z\-]+"
         r"|(?<![\w'’])(?i:the)[ \t]+(?i:user|patient|client|customer|employee|applicant|candidate|child|kid))")
# A capitalised word that is no one's name: "It was a transgender poetry reading".
_NOT_NAMES = ("It|Its|This|That|These|Those|There|Here|What|Which|Who|Where|When|Why|How|The|And|But|Or|So|If|Then|"
              "Now|Today|Tomorrow|Yesterday|Everyone|Everybody|Everything|Nothing|Nobody|Someone|Somebody|Something|"
              "Anyone|Anybody|Each|Every|All|Both|Some|Many|Most|Such|One|Yes|No|Well|Also|Our|Your|Their|His|Her")
_NAME = rf"(?<![\w'’])(?-i:(?!(?:{_NOT_NAMES})\b)[A-Z][a-z]+)(?:['’]s[ \t]+[a-z]+)?"
_WHO = rf"(?:{_PRON}|{_NAME})"
# A copula or a contraction of one, maybe with an adverb ("she's", "I am also", "he has been").
_IS = (r"(?:[ \t]+(?:am|is|are|was|were|has[ \t]+been|have[ \t]+been|had[ \t]+been|became|becomes|got)|['’](?:m|s|re))"
       r"(?:[ \t]+(?:also|now|still|openly|actually|really|recently|just|proudly|secretly|finally|been|a|an))*[ \t]+")
# What may stand between a frame and its term: articles and qualifiers ("stage 2 breast", "a rare").
_QUAL = r"(?:(?:a|an|the|early|late|stage[ \t]+\w+|chronic|severe|mild|terminal|advanced|rare|clinical|major)[ \t]+)*"


def _before(*frames: str):
    """The frames, any of which must end right before a term (searched on the term's line)."""
    return re.compile(rf"(?<![\w'’])(?=\w)(?:{'|'.join(frames)})$", re.I)  # a frame starts a word


def _finder(*pairs):
    """Each (terms, frames, not_before) pair: a term whose own line, up to 90 characters before it,
    ends in one of the frames, and (``not_before``) does not end in a word that makes it something
    else ("the European Union"). Each kind of term has its own frames: "my blind" is a window's."""

    def find(node, ctx: Ctx):
        text = ctx.text
        for terms, before, not_before in pairs:
            for m in terms.finditer(text, node.start, node.end):
                s = m.start()
                ls = max(text.rfind("\n", 0, s) + 1, s - 90, node.start)
                if before.search(text, ls, s) is not None \
                        and (not_before is None or not_before.search(text, ls, s) is None):
                    yield m.span()

    return find


def _words(*stems: str):
    """The rule's trigger: a word starting with one of ``stems`` (any case; a stem ending in "$" is
    a whole word), in the pre-scan's one pass: "bi" alone, not in "bit"; "sti" not in "still".
    Stems, not the terms themselves: the terms as RE2 patterns in the one pass outgrew its automaton's
    memory (a tool's pre-scan went from 10.6 to 68 us a text); tests/test_gate_special.py checks that
    each term's words are selected."""
    alts = (re.escape(t.rstrip("$")).replace("\\ ", "[ \t]+") + ("\\b" if t.endswith("$") else "") for t in stems)
    return found(r"(?i)\b(?:" + "|".join(alts) + ")", ascii=True)


def _terms(body: str, after: str = "") -> re.Pattern:
    """Whole words or phrases, case aside, not followed by ``after`` (what makes them something else)."""
    return re.compile(rf"(?<![\w\-])(?:{body})(?![\w+]|-(?!\s){'|' + after if after else ''})", re.I)


_GDPR = "GDPR Art. 9(1) special categories of personal data"
_POSS = r"(?<![\w'’])(?:my|his|her|their|our)[ \t]+(?:own[ \t]+)?"
# What a body does about it, or another sense: "cancer research", "depression era", "a stroke of luck".
_ORG = (r"[ \t]+(?:research|researchers?|awareness|patients?|centers?|centres?|wards?|units?|clinics?|foundation|"
        r"society|charity|fund|study|studies|trials?|screenings?|drugs?|vaccines?|rates?|cases|month|day|walk|run|"
        r"campaign|epidemic|pandemic|app|model|dataset|risk|era|of[ \t]+(?:luck|genius|inspiration|the[ \t]+pen))\b")

# -- in Chinese, words run together: said of oneself or someone ("我有糖尿病", "他是同性恋",
# "我信仰伊斯兰教", "她有犯罪记录"); not "糖尿病研究中心", "同性恋权益游行", "伊斯兰教建筑" -----------------

_ZH_WHO = (r"(?:我们?|他们?|她们?|用户|患者|(?:我|他|她)的?(?:妈妈?|爸爸?|母亲|父亲|丈夫|妻子|老公|老婆|儿子|女儿|哥哥|姐姐|"
           r"弟弟|妹妹|朋友|孩子|爷爷|奶奶|外公|外婆))")
_ZH_ADV = r"(?:也|还|一直|最近|已经|曾经|曾|以前|之前|其实|从小)?"
_ZH_NOT_AFTER = r"(?!研究|中心|医院|科室|协会|基金|筛查|防治|宣传|日|月|周|权益|群体|社区|游行|电影|酒吧|话题|文化|建筑|寺庙|历史|音乐|艺术|学校)"


def _zh(terms: str, *frames: str):
    """A Chinese (terms, frames, None) pair for ``_finder``: no word breaks to start a frame at."""
    return re.compile(rf"(?:{terms}){_ZH_NOT_AFTER}"), re.compile(rf"(?:{'|'.join(frames)})$"), None


_ZH_HEALTH = _zh(
    r"糖尿病|(?:乳腺|肺|肝|胃|结肠|直肠|前列腺|宫颈|卵巢|胰腺|甲状腺|血)癌|癌症|白血病|淋巴瘤|艾滋病|HIV|抑郁症|焦虑症|"
    r"双相(?:情感)?障碍|精神分裂症|自闭症|孤独症|癫痫|哮喘|高血压|心脏病|乙肝|丙肝|肝炎|肺结核|帕金森病?|阿尔茨海默病?|"
    r"老年痴呆|多动症|强迫症|创伤后应激障碍|进食障碍|厌食症|暴食症|不孕不育|不孕症?|尿毒症|红斑狼疮|性病|梅毒|"
    r"胰岛素|抗抑郁药|化疗|透析|怀孕|流产",
    rf"{_ZH_WHO}{_ZH_ADV}(?:有|得了|得过|患有|患了|患上了?|确诊(?:为|了)?|被诊断(?:出|为|患有)?|查出(?:了)?|在(?:吃|打|用|做)|"
    r"每天(?:都)?(?:打|吃)|需要(?:打|吃)|正在(?:接受|做)|做过|接受了?)?", rf"{_ZH_WHO}的", r"诊断(?:为|出)")
_ZH_ORIENTATION = _zh(
    r"同性恋|双性恋|跨性别(?:者|女性|男性)?|变性人|女同(?:性恋)?|男同(?:性恋)?|无性恋|泛性恋",
    rf"{_ZH_WHO}{_ZH_ADV}(?:是|是一个|是一名|是个)", r"出柜(?:了)?(?:，)?(?:说)?(?:自己)?是", r"性取向(?:是|为)")
_ZH_BELIEFS = _zh(
    r"伊斯兰教|基督教|天主教|佛教|犹太教|印度教|道教|东正教|穆斯林|基督徒|天主教徒|佛教徒|印度教徒|无神论者|共产党员|党员|"
    r"民主党人?|共和党人?|工会会员|工会",
    rf"{_ZH_WHO}{_ZH_ADV}(?:是|是一个|是一名|是个|信仰|信|信奉|皈依了?|改信了?|加入了?|参加了?)", r"宗教信仰(?:是|为)")
_ZH_ETHNIC = _zh(r"(?:汉|满|回|藏|维吾尔|蒙古|壮|苗|彝|朝鲜|哈萨克|土家|侗|瑶|白|傣)族",
                 rf"{_ZH_WHO}{_ZH_ADV}(?:是)", r"民族(?:是|为|：|:)")
_ZH_CRIMINAL = _zh(
    r"犯罪记录|案底|前科|坐过牢|服过刑|被判(?:刑|了)|被捕(?![获捞食])|被拘留|入狱|假释",
    rf"{_ZH_WHO}{_ZH_ADV}(?:因[^，。,\n]{{1,10}})?(?:有)?")

# -- health, and the genes that say something about it -------------------------------------------

_CONDITIONS = _terms(
    r"type[ \t\-]?[12][ \t]+diabetes|(?:pre-?)?diabetes|(?:breast|lung|prostate|colon|bowel|skin|ovarian|pancreatic|"
    r"brain|bone|blood|cervical|testicular|thyroid|liver|stomach|bladder|kidney)[ \t]+cancer|cancer|leuka?emia|"
    r"lymphoma|melanoma|(?:a[ \t]+)?(?:brain[ \t]+)?tumou?r|HIV|(?-i:AIDS)|hepatitis(?:[ \t]+[ABC])?|tuberculosis|"
    r"(?:postpartum[ \t]+|post-?natal[ \t]+|clinical[ \t]+)?depression|(?:generali[sz]ed[ \t]+|social[ \t]+)?anxiety"
    r"(?:[ \t]+disorder)?|panic[ \t]+attacks|bipolar(?:[ \t]+disorder)?|schizophrenia|(?-i:PTSD|OCD|ADHD|COPD|PCOS)|"
    r"autism|epilepsy|asthma|multiple[ \t]+sclerosis|parkinson['’]?s(?:[ \t]+disease)?|alzheimer['’]?s"
    r"(?:[ \t]+disease)?|dementia|crohn['’]?s(?:[ \t]+disease)?|(?:ulcerative[ \t]+)?colitis|co?eliac"
    r"(?:[ \t]+disease)?|lupus|fibromyalgia|(?:rheumatoid[ \t]+)?arthritis|heart[ \t]+disease|(?:a[ \t]+)?heart"
    r"[ \t]+condition|heart[ \t]+failure|high[ \t]+blood[ \t]+pressure|hypertension|(?:an[ \t]+)?eating[ \t]+disorder|"
    r"anorexia|bulimia|sickle[ \t\-]cell(?:[ \t]+(?:disease|an(?:a)?emia|trait))?|cystic[ \t]+fibrosis|"
    r"ha?emophilia|cerebral[ \t]+palsy|huntington['’]?s(?:[ \t]+disease)?|herpes|chlamydia|gonorrh?o?ea|syphilis|"
    r"(?-i:STDs?|STIs?)|(?:a[ \t]+)?(?:learning[ \t]+)?disability|(?:an?[ \t]+)?(?:drug|alcohol|opioid|heroin|gambling)"
    r"[ \t]+(?:addiction|problem)|alcoholism|(?:a[ \t]+)?drinking[ \t]+problem|(?:a[ \t]+)?mental[ \t]+illness|"
    r"mental[ \t]+health[ \t]+(?:issues|problems|conditions?)|infertility|endometriosis|(?:chronic[ \t]+)?kidney"
    r"[ \t]+disease|liver[ \t]+disease|cirrhosis|chronic[ \t]+pain|long[ \t]+covid|dyslexia|tourette['’]?s|"
    r"sleep[ \t]+apno?ea|BRCA[12](?:[ \t\-]+(?:gene[ \t]+)?(?:mutation|variant))?|APOE[ \t\-]?(?:e|ε)?4|"
    r"lynch[ \t]+syndrome|tay[ \t\-]sachs|factor[ \t]+V[ \t]+leiden", _ORG)
_HAS = (r"(?:[ \t]+(?:also|still|now|recently|just|once))?(?:[ \t]+(?:has|have|had|got|caught|contracted|developed|"
        r"carr(?:y|ies|ied)|inherited|battl(?:es|ed|ing)|fight(?:s|ing)?|fought|suffered|survived)"
        r"|['’](?:ve|s|d)[ \t]+(?:got|had))[ \t]+")
_CONDITION_FRAMES = _before(
    rf"(?:diagnosed|diagnosis)[ \t]+(?:with|of)[ \t]+{_QUAL}",
    rf"(?:suffer(?:s|ed|ing)?|recover(?:s|ed|ing)?|died|in[ \t]+remission|in[ \t]+recovery)[ \t]+(?:from|of)"
    rf"[ \t]+{_QUAL}",
    rf"(?:living|lives|live|struggl(?:e|es|ed|ing)|dealing|deals|copes?|coping)[ \t]+with[ \t]+{_QUAL}",
    rf"(?:(?:tested|tests|test)|came[ \t]+back)[ \t]+positive[ \t]+for[ \t]+{_QUAL}",
    # what a genetic test of theirs found: "my DNA test shows a BRCA1 mutation", "her 23andMe results say APOE4"
    rf"(?:my|his|her|their|our)[ \t]+(?:(?:dna|genetic|genomic|gene)[ \t]+(?:tests?|testing|screening|panel)"
    rf"|23andme|ancestry(?:dna)?)(?:[ \t]+results?)?[ \t]+"
    rf"(?:shows?|showed|found|finds|revealed|reveals|confirmed|confirms|detected|says?|said)[ \t]+(?:that[ \t]+)?"
    rf"(?:(?:i|he|she|they|we)[ \t]+(?:have|has|carry|carries|had)[ \t]+)?{_QUAL}",
    rf"(?:treated|treatment)[ \t]+for[ \t]+{_QUAL}",
    rf"(?:a[ \t]+)?carriers?[ \t]+(?:of|for)[ \t]+{_QUAL}",
    rf"{_WHO}{_HAS}{_QUAL}", _POSS)
_EVENTS = _terms(r"(?:a|an|two|three|several)[ \t]+(?:strokes?|heart[ \t]+attacks?|miscarriages?|abortions?|"
                 r"seizures?|nervous[ \t]+breakdown|mastectomy)", _ORG)
_EVENT_FRAMES = _before(rf"{_WHO}{_HAS}")
_STATES = _terms(
    r"(?:pre-?)?diabetic|epileptic|asthmatic|autistic|bipolar|schizophrenic|anorexic|bulimic|dyslexic|infertile|"
    r"HIV[ \t\-]?(?:positive|negative)|HIV\+|pregnant|paraly[sz]ed|immunocompromised|terminally[ \t]+ill|suicidal|"
    r"(?:clinically|severely)[ \t]+depressed|(?:recovering[ \t]+)?alcoholic|"
    r"(?:recovering|drug|heroin|meth)[ \t]+addict|"
    r"in[ \t]+rehab|in[ \t]+remission|on[ \t]+dialysis|on[ \t]+chemo(?:therapy)?|on[ \t]+the[ \t]+(?:autism[ \t]+)?"
    r"spectrum|neurodivergent|(?:cancer|stroke)[ \t]+survivor|in[ \t]+therapy|deaf|blind",
    r"[ \t]+(?:to|spot|date|side|about|copy\w*|copied|cc|test\w*|tast\w*|mode|analy[sz]\w*|of|band|allocation)\b")
_IS_FRAMES = _before(rf"{_WHO}{_IS}")
_MEDICINES = _terms(
    r"insulin|metformin|sertraline|fluoxetine|prozac|zoloft|lexapro|escitalopram|citalopram|lithium|adderall|"
    r"ritalin|methylphenidate|antidepressants?|antipsychotics?|antiretrovirals?|(?-i:PrEP)|methadone|buprenorphine|"
    r"suboxone|xanax|alprazolam|valium|diazepam|olanzapine|quetiapine|seroquel|risperidone|aripiprazole|abilify|"
    r"wellbutrin|bupropion|venlafaxine|effexor|lamotrigine|lamictal|levetiracetam|keppra|chemotherapy|chemo|"
    r"ozempic|semaglutide|warfarin|testosterone|o?estrogen|(?-i:HRT)|birth[ \t]+control",
    r"[ \t]+(?:batter(?:y|ies)|ion|mines?|mining|prices?|pricing|costs?|supply|market|makers?|industry|shortage|"
    r"stocks?)\b")
_DOSE = r"(?:(?:daily|low[ \t\-]dose|high[ \t\-]dose|some|\d+[ \t]*mg(?:[ \t]+of)?)[ \t]+)*"
_MEDICINE_FRAMES = _before(
    rf"{_WHO}(?:[ \t]+(?:also|still|now))?[ \t]+(?:takes?|taking|took|started|stopped[ \t]+taking|is[ \t]+taking|"
    rf"am[ \t]+taking|needs|uses|injects)[ \t]+(?:(?:his|her|my|their)[ \t]+)?{_DOSE}",
    rf"{_WHO}{_IS}on[ \t]+{_DOSE}", rf"prescribed(?:[ \t]+(?:me|him|her|them))?[ \t]+{_DOSE}", _POSS)
_CARE = _terms(r"psychiatrist|therapist|psychologist|psychotherapist|oncologist")
_CARE_FRAMES = _before(
    rf"{_WHO}(?:[ \t]+(?:also|still|now))?[ \t]+(?:sees?|seeing|saw|visits?|visited|is[ \t]+seeing|am[ \t]+seeing|"
    rf"started[ \t]+seeing)[ \t]+(?:a|an|the|my|his|her|their)[ \t]+(?:\w+[ \t]+)?", _POSS)
# "My blood type is O negative", "Alice's blood group: AB+"
_BLOOD = _terms(r"(?:AB|A|B|O)[ \t]*(?:[+\-−]|pos(?:itive)?|neg(?:ative)?)(?=[\s.,;:!?)]|$)")
_BLOOD_FRAMES = _before(r"(?:(?:my|his|her|their|our|your)|(?-i:[A-Z][a-z]+)['’]s)[ \t]+blood[ \t\-]+(?:type|group)"
                        r"[ \t]*(?:is|was|:)?[ \t]*")
register(Rule(
    id="pii.health_condition", category=PII, sensitivity=CONFIDENTIAL, placeholder="[HEALTH]", risk=0.5,
    binds=(DOC,), find=_finder((_CONDITIONS, _CONDITION_FRAMES, None), (_EVENTS, _EVENT_FRAMES, None),
                               (_STATES, _IS_FRAMES, None), (_MEDICINES, _MEDICINE_FRAMES, None),
                               (_CARE, _CARE_FRAMES, None), (_BLOOD, _BLOOD_FRAMES, None), _ZH_HEALTH),
    triggers=("糖尿病", "癌", "白血病", "淋巴瘤", "艾滋病", "抑郁症", "焦虑症", "双相", "精神分裂", "自闭症", "孤独症", "癫痫",
              "哮喘", "高血压", "心脏病", "乙肝", "丙肝", "肝炎", "结核", "帕金森", "阿尔茨海默", "痴呆", "多动症", "强迫症",
              "应激障碍", "进食障碍", "厌食症", "暴食症", "不孕", "尿毒症", "狼疮", "性病", "梅毒", "胰岛素", "抗抑郁", "化疗",
              "透析", "怀孕", "流产"),
    trigger=_words(
        "diabet", "cancer", "leuk", "lymphoma", "melanoma", "tumor", "tumour", "hiv", "aids$", "hepatitis", "tubercul",
        "depress", "anxiety", "panic attack", "bipolar", "schizo", "ptsd", "ocd$", "adhd", "copd", "pcos", "autis",
        "epilep", "asthma", "sclerosis", "parkinson", "alzheimer", "dementia", "crohn", "colitis", "celiac", "coeliac",
        "lupus", "fibromyalgia", "arthritis", "heart disease", "heart condition", "heart failure", "heart attack",
        "blood pressure", "hypertension", "eating disorder", "anorexi", "bulimi", "sickle", "cystic", "hemophilia",
        "haemophilia", "cerebral palsy", "huntington", "herpes", "chlamydia", "gonorr", "syphilis", "std$", "stds$",
        "sti$", "stis$", "disabilit", "addict", "alcoholi", "drinking problem", "drug problem", "alcohol problem",
        "opioid problem", "heroin problem", "gambling problem", "mental illness", "mental health", "infertil",
        "endometriosis", "kidney", "liver disease", "cirrhosis", "chronic pain", "long covid", "dyslexi", "tourette",
        "sleep apn", "brca", "apoe", "lynch syndrome", "tay-sachs", "tay sachs", "leiden", "stroke", "strokes",
        "miscarriage", "abortion", "seizure", "breakdown", "mastectomy", "pregnant", "paraly", "immunocompromised",
        "terminally", "suicidal", "depressed", "rehab", "remission", "dialysis", "chemo", "spectrum", "neurodivergent",
        "survivor", "therap", "deaf", "blind", "insulin", "metformin", "sertraline", "fluoxetine", "prozac", "zoloft",
        "lexapro", "citalopram", "escitalopram", "lithium", "adderall", "ritalin", "methylphenidate", "antidepress",
        "antipsych", "antiretro", "prep$", "methadone", "buprenorphine", "suboxone", "xanax", "alprazolam", "valium",
        "diazepam", "olanzapine", "quetiapine", "seroquel", "risperidone", "aripiprazole", "abilify", "wellbutrin",
        "bupropion", "venlafaxine", "effexor", "lamotrigine", "lamictal", "levetiracetam", "keppra", "ozempic",
        "semaglutide", "warfarin", "testosterone", "estrogen", "oestrogen", "hrt$", "birth control", "psychiatrist",
        "psychologist", "psychotherapist", "oncologist", "blood type", "blood group", "blood-type"),
    reason="data concerning a person's health (a condition, treatment, medicine or genetic trait), said of them",
    origin=f"{_GDPR} (data concerning health, genetic data); HIPAA's protected health information"))

# -- sexual orientation and gender identity ------------------------------------------------------

_ORIENTATIONS = _terms(
    r"gay|lesbian|bisexual|bi|pansexual|asexual|queer|homosexual|heterosexual|transgender|trans|non-?binary|"
    r"genderqueer|gender-?fluid|intersex|two-spirit",
    r"[ \t]+(?:bar|club|pride|rights|friendly|marriage|community|ally|allies|parade|flag|icon|people|couples?|men|"
    r"women|characters?|movie|film|book|series|fats?|atlantic|pacific|action)\b")
_ORIENTATION_FRAMES = _before(
    rf"{_WHO}{_IS}",
    r"came[ \t]+out(?:[ \t]+(?:to|at)[ \t]+[\w'’ \t]{1,30})?[ \t]+as[ \t]+(?:an?[ \t]+)?",
    r"identif(?:y|ies|ied|ying)[ \t]+as[ \t]+(?:an?[ \t]+)?",
    r"(?:sexual[ \t]+orientation|sexuality|gender[ \t]+identity)[ \t]+(?:is|was|:)[ \t]+",
    _POSS)  # "my trans experience"
# "my path as a trans woman": a person, not "a queer little town".
_ORIENTED_PEOPLE = _terms(r"(?:gay|lesbian|bisexual|queer|trans(?:gender)?|non-?binary|intersex)(?=[ \t]+(?:man|woman|"
                          r"person|guy|girl|boy|kid|teen|teenager|adult|parent|mom|mum|dad|mother|father))|lesbian")
_AS_A = _before(r"(?<![\w'’])as[ \t]+an?[ \t]+")
register(Rule(
    id="pii.sexual_orientation", category=PII, sensitivity=CONFIDENTIAL, placeholder="[ORIENTATION]", risk=0.5,
    binds=(DOC,),
    find=_finder((_ORIENTATIONS, _ORIENTATION_FRAMES, None), (_ORIENTED_PEOPLE, _AS_A, None), _ZH_ORIENTATION),
    triggers=("同性恋", "双性恋", "跨性别", "变性", "女同", "男同", "无性恋", "泛性恋"),
    trigger=_words(
        "gay", "lesbian", "bisexual", "bi$", "pansexual", "asexual", "queer", "homosexual", "heterosexual", "trans$",
        "transgender", "transsexual", "nonbinary", "non-binary", "genderqueer", "genderfluid", "gender-fluid",
        "intersex", "two-spirit", "sexuality", "sexual orientation", "gender identity"),
    reason="a person's sexual orientation or gender identity, said of them",
    origin=f"{_GDPR} (sex life or sexual orientation)"))

# -- religion, politics and trade unions ----------------------------------------------------------

# A faith's word is a name's or a school's too: "Christian Dior", "a Catholic school teacher".
_NOT_FAITH = (r"[ \t]+(?-i:[A-Z])|['’]s\b|[ \t]+(?:school|university|college|hospital|charity|name|names|girl|"
              r"boy|church|food|restaurant|store|shop|section|wedding|funeral|architecture|art|music|holiday)\b")
_FAITHS = _terms(
    r"muslim|christian|catholic|roman[ \t]+catholic|protestant|jewish|jew|hindu|buddhist|sikh|mormon|"
    r"jehovah['’]?s[ \t]+witness|atheist|agnostic|evangelical|baptist|methodist|lutheran|anglican|presbyterian|"
    r"quaker|jain|pagan|wiccan|scientologist|zoroastrian|baha['’]?i", _NOT_FAITH)
_RELIGIONS = _terms(r"islam|christianity|catholicism|judaism|buddhism|hinduism|sikhism|mormonism")
_FAITH_FRAMES = _before(
    rf"{_WHO}{_IS}(?:(?:devout|practi[cs]ing|observant|born-again|lapsed|non-practi[cs]ing|orthodox|strict|devoted|"
    rf"raised|committed|proud)[ \t]+)*",
    r"(?:my|his|her|their|our)[ \t]+(?:religion|faith|religious[ \t]+beliefs?)[ \t]+(?:is|was|:)[ \t]+",
    rf"(?:converted|converts|convert|converting)[ \t]+to[ \t]+(?:being[ \t]+)?(?:an?[ \t]+)?",
    rf"{_WHO}(?:[ \t]+(?:also|still))?[ \t]+(?:practi[cs]es?|practi[cs]ed|follows?|followed)[ \t]+")
_PARTIES = _terms(
    r"(?-i:Labour|Tory|Tories|Conservatives?|Lib[ \t]+Dems?|Liberal[ \t]+Democrats?|Greens?|Reform(?:[ \t]+UK)?|"
    r"SNP|Plaid[ \t]+Cymru|Republicans?|Democrats?|UKIP|AfD|CDU|SPD|BJP|NDP|Liberals?|"
    r"(?:[A-Z][\w'’\-]*[ \t]+){1,3}[Pp]arty)", r"[ \t]+(?:option|one|team|button|card|candidate[ \t]+for)\b")
_PARTY_FRAMES = _before(
    r"(?<![\w'’])(?:voted|votes|vote|voting)(?:[ \t]+(?:for|with))?(?:[ \t]+the)?[ \t]+",
    r"(?:member|members|supporter|supporters|voter|voters|donor|donors)[ \t]+(?:of|for)[ \t]+(?:the[ \t]+)?",
    rf"{_WHO}(?:[ \t]+(?:also|still|always))?[ \t]+(?:supports?|supported|backs?|backed|joined|campaigns?[ \t]+for|"
    rf"campaigned[ \t]+for)[ \t]+(?:the[ \t]+)?")
_LABELS = _terms(
    r"(?-i:Democrat|Republican|Tory)|socialist|communist|marxist|libertarian|anarchist|trump[ \t]+supporter|"
    r"maga[ \t]+supporter|(?-i:Labour|Conservative|Green)[ \t]+(?:voter|supporter|member)", r"[ \t]+(?-i:[A-Z])")
_LABEL_FRAMES = _before(
    rf"{_WHO}{_IS}(?:(?:registered|lifelong|staunch|die-hard|card-carrying|committed|proud)[ \t]+)*")
_UNIONS = _terms(r"(?:trade[ \t\-]|labou?r[ \t\-])?union(?:[ \t]+(?:member|rep|representative|steward|dues))?|"
                 r"(?-i:Teamsters|UNISON|Unite|GMB|AFL-CIO|SEIU|UAW|IG[ \t]+Metall|ver\.di|RMT|NEU)",
                 r"[ \t]+(?:of|with|between|jack|square|station|street|bank)\b|['’]s[ \t]+(?:flag|budget)")
_UNION_FRAMES = _before(
    r"(?:member|members|membership)[ \t]+(?:of|in)[ \t]+(?:the[ \t]+|a[ \t]+|my[ \t]+|our[ \t]+)?"
    r"(?:(?-i:[A-Z])[\w'&\-]*[ \t]+){0,3}",
    rf"{_WHO}(?:[ \t]+(?:also|recently|just))?[ \t]+(?:joined|belongs?[ \t]+to|(?:pays|pay|paid)[ \t]+dues[ \t]+to)"
    rf"[ \t]+(?:the[ \t]+|a[ \t]+|my[ \t]+|our[ \t]+|his[ \t]+|her[ \t]+)?(?:(?-i:[A-Z])[\w'&\-]*[ \t]+){{0,3}}",
    rf"{_WHO}{_IS}(?:in[ \t]+(?:the|a)[ \t]+)?(?:(?-i:[A-Z])[\w'&\-]*[ \t]+){{0,3}}", _POSS)
# The European Union, a credit union, a students' union, a rugby union: no trade union.
_NOT_A_TRADE_UNION = re.compile(
    r"(?:european|african|credit|student|students['’]?|soviet|postal|customs|rugby|football|civil[ \t]+liberties|"
    r"debating|telecommunication|monetary|banking|currency|economic)[ \t]+$", re.I)
_WORSHIP = r"church|mosque|synagogue|temple|gurdwara|(?-i:Mass)"
_REGULARLY = r"every|each|weekly|regularly|twice|on[ \t]+(?:sundays?|fridays?|saturdays?|the[ \t]+sabbath)"
_PLACES_BARE = re.compile(rf"(?<![\w\-])(?:{_WORSHIP})(?=[ \t]*(?:{_REGULARLY}|[.,;!]|$))", re.I | re.M)
_PLACES_THE = re.compile(rf"(?<![\w\-])(?:{_WORSHIP})(?=[ \t]+(?:{_REGULARLY}))", re.I)
_GO = (rf"{_WHO}(?:[ \t]+(?:also|still|usually|often))?[ \t]+(?:goes|go|going|went|attends?|attended|attending|"
       r"prays?|prayed|praying)[ \t]+(?:to|at)[ \t]+")
_GO_BARE, _GO_THE = _before(_GO), _before(rf"{_GO}(?:the|a|her|his|my|our|their)[ \t]+(?:local[ \t]+)?")
# "I joined a nearby church", "my church group": a congregation someone belongs to.
_CONGREGATIONS = _terms(r"church|mosque|synagogue|gurdwara|parish|congregation",
                        r"[ \t]+(?:of|on|in|at|building|tower|bells?)\b")
_CONGREGATION_FRAMES = _before(
    rf"{_WHO}(?:[ \t]+(?:also|recently|just))?[ \t]+(?:joined|belongs?[ \t]+to)[ \t]+(?:a|the|our|my|his|her|their)"
    r"[ \t]+(?:(?:nearby|local|new)[ \t]+)?", _POSS)
_OBSERVANCES = _terms(r"kosher|halal|ramadan|(?-i:Sabbath|Shabbat|Lent)")
_OBSERVANCE_FRAMES = _before(
    rf"{_WHO}(?:[ \t]+(?:also|still|strictly|only))?[ \t]+(?:keeps?|kept|keeping|eats[ \t]+only|eat[ \t]+only|"
    r"fasts?|fasted|fasting|observes?|observed|observing)[ \t]+(?:for[ \t]+|during[ \t]+|the[ \t]+)?",
    rf"{_WHO}{_IS}(?:strictly[ \t]+)?")

register(Rule(
    id="pii.beliefs", category=PII, sensitivity=CONFIDENTIAL, placeholder="[BELIEF]", risk=0.5,
    binds=(DOC,), find=_finder((_FAITHS, _FAITH_FRAMES, None), (_RELIGIONS, _FAITH_FRAMES, None),
                               (_PARTIES, _PARTY_FRAMES, None), (_LABELS, _LABEL_FRAMES, None),
                               (_UNIONS, _UNION_FRAMES, _NOT_A_TRADE_UNION), (_PLACES_BARE, _GO_BARE, None),
                               (_PLACES_THE, _GO_THE, None), (_CONGREGATIONS, _CONGREGATION_FRAMES, None),
                               (_OBSERVANCES, _OBSERVANCE_FRAMES, None), _ZH_BELIEFS),
    triggers=("教", "穆斯林", "基督徒", "无神论", "党员", "民主党", "共和党", "工会"),
    trigger=_words(
        "muslim", "christian", "catholic", "protestant", "jewish", "jew$", "jews$", "hindu", "buddhis", "sikh",
        "mormon", "jehovah", "atheist", "agnostic", "evangelical", "baptist", "methodist", "lutheran", "anglican",
        "presbyterian", "quaker", "jain", "pagan", "wiccan", "scientologist", "zoroastrian", "baha", "islam",
        "judaism", "hinduism", "labour", "tory", "tories", "conservative", "lib dem", "liberal", "green", "reform",
        "snp", "plaid", "republican", "democrat", "ukip", "afd", "cdu", "spd", "bjp", "ndp", "party", "socialist",
        "communist", "marxist", "libertarian", "anarchist", "supporter", "union", "teamsters", "unison", "unite",
        "gmb", "afl-cio", "seiu", "uaw", "ig metall", "ver.di", "rmt", "neu", "church", "mosque", "synagogue",
        "temple", "gurdwara", "mass$", "parish", "congregation", "kosher", "halal", "ramadan", "sabbath", "shabbat",
        "lent$"),
    reason="a person's religious belief, political opinion or membership of a workers' organisation, said of them",
    origin=f"{_GDPR} (religious or philosophical beliefs, political opinions, trade union membership)"))

# -- ethnic origin ----------------------------------------------------------------------------------

_ETHNIC = _terms(
    r"african[ \t\-]american|afro-[a-z]+|hispanic|latino|latina|latinx|native[ \t]+american|indigenous|aboriginal|"
    r"torres[ \t]+strait[ \t]+islander|m[aā]ori|roma(?:ni)?|pacific[ \t]+islander|asian[ \t\-]american|"
    r"british[ \t]+asian|"
    r"first[ \t]+nations|inuit|biracial|mixed[ \t\-]race|(?-i:Black)",
    r"[ \t]+(?-i:[A-Z])|[ \t]+(?:art|music|food|cuisine|restaurant|history|month|studies|literature|population|"
    r"people|community|communities|land|lands|languages?|culture|owned|businesses?|friday)\b")
_ETHNIC_FRAMES = _before(
    rf"{_WHO}{_IS}(?:(?:half|part|partly|proudly)[ \t]+)*",
    r"(?:my|his|her|their|our)[ \t]+(?:ethnicity|race|ethnic[ \t]+(?:background|origin|group)|heritage)"
    r"[ \t]+(?:is|was|:)[ \t]+(?:(?:half|part|partly)[ \t]+)*")
_DESCENT = re.compile(r"(?-i:[A-Z][a-z]+)(?:[ \t\-](?-i:[A-Z][a-z]+))?(?=[ \t]+(?:descent|origin|heritage|ancestry|"
                      r"extraction)\b)")
_DESCENT_FRAMES = _before(
    rf"{_WHO}{_IS}(?:(?:half|part|partly|mostly|mixed)[ \t]+)*of[ \t]+(?:(?:mixed|half|part)[ \t]+)?")
register(Rule(
    id="pii.ethnic_origin", category=PII, sensitivity=CONFIDENTIAL, placeholder="[ETHNICITY]", risk=0.5,
    binds=(DOC,), find=_finder((_ETHNIC, _ETHNIC_FRAMES, None), (_DESCENT, _DESCENT_FRAMES, None), _ZH_ETHNIC),
    triggers=("族",),
    trigger=_words(
        "african", "afro-", "hispanic", "latino", "latina", "latinx", "native american", "indigenous", "aboriginal",
        "torres strait", "maori", "māori", "roma$", "romani", "pacific islander", "asian", "first nations", "inuit",
        "biracial", "mixed race", "mixed-race", "black", "descent", "origin", "heritage", "ancestry", "extraction",
        "ethnic", "race$"),
    reason="a person's racial or ethnic origin, said of them",
    origin=f"{_GDPR} (racial or ethnic origin)"))

# -- criminal convictions (GDPR Art. 10) -------------------------------------------------------------

_OFFENCES = (r"crimes?|felon\w*|misdemeanou?rs?|murder|manslaughter|assault|battery|theft|fraud|robbery|burglary|"
             r"arson|possession|trafficking|(?-i:DUI|DWI)|drunk|drink|driving|shoplifting|embezzlement|stalking|"
             r"harassment|rape|sexual|domestic|vandalism|trespass\w*|perjury|bribery|tax[ \t]+evasion|"
             r"money[ \t]+laundering|(?:first|second|third)[\- ]degree|armed|attempted|aggravated|grand")
_CRIMINAL = _terms(
    r"(?:a[ \t]+)?(?:criminal|police|prison)[ \t]+record|"
    r"(?:convicted|arrested|jailed|imprisoned|incarcerated|indicted|locked[ \t]+up)(?=(?:[ \t]+(?:last[ \t]+\w+|"
    r"in[ \t]+\d{4}|twice|once|again))?[ \t]+(?:of|for)\b)|"
    rf"charged[ \t]+with(?=[ \t]+(?:(?:a|an|two|three|several|one)[ \t]+)?(?:counts?[ \t]+of[ \t]+)?(?:{_OFFENCES}))|"
    r"sentenced[ \t]+to(?=[ \t]+(?:\w+[ \t]+){0,3}(?:years?|months?|weeks?|days?|life|death|prison|jail|probation|"
    r"community[ \t]+service|hours))|(?:on|out[ \t]+on|released[ \t]+on)[ \t]+parole|"
    r"served[ \t]+(?:time|(?:\w+[ \t]+){0,2}(?:years?|months?)|a[ \t]+(?:\w+[ \t]+)?sentence)(?:[ \t]+(?:in[ \t]+"
    r"(?:(?:a[ \t]+)?(?:federal|state|county|maximum[ \t\-]security)[ \t]+)?(?:prison|jail)|behind[ \t]+bars)|"
    r"(?<=time)(?=[ \t]*(?:[.,;!]|$)))|"
    r"(?:a[ \t]+)?(?:felony|criminal|drunk[ \t\-]driving|(?-i:DUI|DWI))[ \t]+convictions?|"
    r"(?:a[ \t]+)?(?:convicted[ \t]+)?(?:felon|ex-con|ex-convict)|(?:a[ \t]+)?registered[ \t]+sex[ \t]+offender|"
    r"(?:a|two|three)[ \t]+(?-i:DUI|DWI)s?")
_CRIMINAL_FRAMES = _before(
    rf"{_WHO}{_HAS}(?:been[ \t]+)?", rf"{_WHO}{_IS}", rf"{_WHO}(?:[ \t]+(?:also|once))?[ \t]+", r"with[ \t]+", _POSS)
register(Rule(
    id="pii.criminal_record", category=PII, sensitivity=CONFIDENTIAL, placeholder="[CRIMINAL_RECORD]", risk=0.5,
    binds=(DOC,), find=_finder((_CRIMINAL, _CRIMINAL_FRAMES, None), _ZH_CRIMINAL),
    triggers=("犯罪记录", "案底", "前科", "坐过牢", "服过刑", "被判", "被捕", "被拘留", "入狱", "假释"),
    trigger=_words(
        "criminal", "police record", "prison record", "convicted", "arrested", "jailed", "imprisoned", "incarcerated",
        "indicted", "locked up", "charged with", "sentenced", "served", "parole", "felon", "ex-con", "sex offender",
        "dui", "dwi"),
    reason="offences a person was tried, punished or held for, said of them",
    origin="GDPR Art. 10 (personal data relating to criminal convictions and offences)"))

