"""Deterministic benchmark workload: short bilingual memories and user-scoped queries.

Every user draws on the same vocabulary, so another user's memories are genuine near
neighbours of a user's query: a store that leaks across scopes will show it. Memory i
belongs to user ``i % n_users`` and is English or Chinese by round, so any prefix of
``memories()`` still spreads evenly over all users and both languages.
"""

from __future__ import annotations

import random

# (English, Chinese) pairs: one shared vocabulary for every user and both languages.
FOOD = [("dumplings", "饺子"), ("hotpot", "火锅"), ("ramen", "拉面"), ("sushi", "寿司"), ("pizza", "披萨"),
        ("mapo tofu", "麻婆豆腐"), ("roast duck", "烤鸭"), ("fried rice", "炒饭"), ("dim sum", "点心"),
        ("curry", "咖喱"), ("bubble tea", "奶茶"), ("barbecue", "烧烤"), ("croissants", "可颂"),
        ("beef noodles", "牛肉面"), ("salad", "沙拉"), ("spicy crayfish", "麻辣小龙虾")]
BRAND = [("Apple", "苹果"), ("Nike", "耐克"), ("Sony", "索尼"), ("Huawei", "华为"), ("Xiaomi", "小米"),
         ("IKEA", "宜家"), ("Adidas", "阿迪达斯"), ("Samsung", "三星"), ("Lenovo", "联想"),
         ("Uniqlo", "优衣库"), ("Canon", "佳能"), ("Lego", "乐高"), ("Dyson", "戴森"), ("BYD", "比亚迪")]
PRODUCT = [("laptop", "笔记本电脑"), ("phone", "手机"), ("running shoes", "跑鞋"), ("headphones", "耳机"),
           ("camera", "相机"), ("jacket", "外套"), ("watch", "手表"), ("backpack", "背包"),
           ("tablet", "平板"), ("vacuum cleaner", "吸尘器")]
CITY = [("Beijing", "北京"), ("Shanghai", "上海"), ("Shenzhen", "深圳"), ("Chengdu", "成都"),
        ("Hangzhou", "杭州"), ("Tokyo", "东京"), ("Paris", "巴黎"), ("London", "伦敦"), ("Berlin", "柏林"),
        ("New York", "纽约"), ("Singapore", "新加坡"), ("Seoul", "首尔"), ("Xi'an", "西安"),
        ("Guangzhou", "广州"), ("Sydney", "悉尼"), ("Wuhan", "武汉")]
HOBBY = [("hiking", "徒步"), ("swimming", "游泳"), ("playing chess", "下棋"), ("taking photos", "拍照"),
         ("playing guitar", "弹吉他"), ("painting", "画画"), ("running", "跑步"), ("doing yoga", "练瑜伽"),
         ("playing badminton", "打羽毛球"), ("cycling", "骑行"), ("practising calligraphy", "练书法"),
         ("fishing", "钓鱼"), ("baking", "烘焙"), ("playing tennis", "打网球")]
PERSON = [("Wang Wei", "王伟"), ("Li Na", "李娜"), ("Zhang Min", "张敏"), ("Chen Jie", "陈杰"),
          ("Liu Yang", "刘洋"), ("Zhao Lei", "赵磊"), ("Alice", "爱丽丝"), ("Bob", "鲍勃"), ("Emma", "艾玛"),
          ("David", "大卫"), ("Sophie", "苏菲"), ("Tom", "汤姆"), ("Sun Li", "孙丽"), ("Zhou Tao", "周涛")]
PROJECT = [("Project Phoenix", "凤凰项目"), ("the billing migration", "计费系统迁移"),
           ("the mobile app", "移动应用"), ("the search revamp", "搜索改版"), ("the data pipeline", "数据管道"),
           ("the Q3 roadmap", "第三季度路线图"), ("the onboarding flow", "新手引导流程"),
           ("the payment gateway", "支付网关"), ("the recommendation engine", "推荐引擎"),
           ("the security audit", "安全审计")]
FAMILY = [("my sister", "我妹妹"), ("my brother", "我哥哥"), ("my mother", "我妈妈"), ("my father", "我爸爸"),
          ("my daughter", "我女儿"), ("my son", "我儿子"), ("my wife", "我妻子"), ("my husband", "我丈夫"),
          ("my grandmother", "我奶奶"), ("my best friend", "我最好的朋友")]
DAY = [("Monday", "周一"), ("Tuesday", "周二"), ("Wednesday", "周三"), ("Thursday", "周四"),
       ("Friday", "周五"), ("Saturday", "周六"), ("Sunday", "周日")]
TIME = [("in the morning", "早上"), ("at noon", "中午"), ("in the afternoon", "下午"), ("in the evening", "晚上")]
MONTH = [(m, f"{i}月") for i, m in enumerate(
    "January February March April May June July August September October November December".split(), 1)]

SLOTS = {"food": FOOD, "food2": FOOD, "brand": BRAND, "product": PRODUCT, "city": CITY, "hobby": HOBBY,
         "person": PERSON, "project": PROJECT, "family": FAMILY, "day": DAY, "time": TIME, "month": MONTH}

# (English memory, Chinese memory, English query, Chinese query). {n} is a number, not vocabulary.
TEMPLATES = [
    ("Had {food} with {person} in {city} on {day} {time}, and we want to go back.",
     "{day}{time}和{person}在{city}吃了{food}，味道很好，我们还想再去一次。",
     "What did I eat with {person} in {city}?", "我和{person}在{city}吃了什么？"),
    ("I really like {food} but I have been avoiding {food2} since {month}.",
     "我很喜欢吃{food}，但是从{month}开始就不怎么吃{food2}了。",
     "Do I still eat {food2}?", "我现在还吃{food2}吗？"),
    ("Bought a {brand} {product} for {n}0 yuan on {day}, keep the receipt.",
     "{day}花了{n}0元买了一个{brand}{product}，发票要留好。",
     "How much did my {brand} {product} cost?", "我的{brand}{product}花了多少钱？"),
    ("Planning a trip to {city} in {month} with {family}, about {n} days.",
     "打算{month}和{family}一起去{city}旅行，大概玩{n}天。",
     "When am I travelling to {city}?", "我什么时候去{city}旅行？"),
    ("Started {hobby} every {day} {time} near the office, {n} weeks so far.",
     "每个{day}{time}在公司附近{hobby}，已经坚持了{n}周。",
     "When do I usually go {hobby}?", "我一般什么时候{hobby}？"),
    ("{person} is leading {project}; the next review is on {day} {time}.",
     "{person}负责{project}，下一次评审安排在{day}{time}。",
     "Who is leading {project}?", "{project}是谁负责的？"),
    ("Promised {person} to send the {project} report before {day}.",
     "答应了{person}要在{day}之前把{project}的报告发过去。",
     "What did I promise {person} about {project}?", "我答应了{person}关于{project}的什么事？"),
    ("{family} loves {food}, lives in {city} and is into {hobby} lately.",
     "{family}特别喜欢吃{food}，住在{city}，最近迷上了{hobby}。",
     "Where does {family} live?", "{family}住在哪个城市？"),
    ("Returned the {brand} {product} because it broke after {n} days.",
     "{brand}的{product}用了{n}天就坏了，已经退货了。",
     "Why did I return the {brand} {product}?", "为什么把{brand}的{product}退了？"),
    ("Meeting {person} at a {food} place in {city} on {day} {time}.",
     "{day}{time}约了{person}在{city}的一家{food}店见面。",
     "Where am I meeting {person}?", "我和{person}约在哪里见面？"),
    ("Want to get {family} a {brand} {product} for the birthday in {month}.",
     "想在{month}给{family}买一个{brand}{product}当生日礼物。",
     "What birthday gift should I get {family}?", "给{family}买什么生日礼物？"),
    ("The doctor said to cut down on {food} and do more {hobby}.",
     "医生说我要少吃{food}，平时多去{hobby}。",
     "What did the doctor say about {food}?", "医生说{food}能不能吃？"),
]

_KEYS = [sorted({k for k in SLOTS if "{" + k + "}" in "".join(t)}) for t in TEMPLATES]


def user_id(i: int) -> str:
    return f"u{i:04d}"


def _fill(rng: random.Random, t: int, lang: int, part: int) -> str:
    text = TEMPLATES[t][2 * part + lang]
    vals = {k: rng.choice(SLOTS[k])[lang] for k in _KEYS[t]}
    vals["n"] = rng.randint(2, 30)
    text = text.format(**vals)
    return text[0].upper() + text[1:]


def memories(n: int = 100_000, n_users: int = 1_000, seed: int = 0) -> list[tuple[str, str]]:
    """(user_id, text) pairs, all texts distinct (LangGraph's InMemoryStore errors on duplicate texts in one batch)."""
    rng, seen, out = random.Random(seed), set(), []
    for i in range(n):
        lang = (i // n_users) % 2
        while True:
            text = _fill(rng, rng.randrange(len(TEMPLATES)), lang, 0)
            if text not in seen:
                break
        seen.add(text)
        out.append((user_id(i % n_users), text))
    return out


def queries(n: int = 500, n_users: int = 1_000, seed: int = 1) -> list[tuple[str, str]]:
    """(user_id, query) pairs, alternating English and Chinese, each scoped to one user."""
    rng = random.Random(seed)
    return [(user_id(rng.randrange(n_users)), _fill(rng, rng.randrange(len(TEMPLATES)), i % 2, 1))
            for i in range(n)]
