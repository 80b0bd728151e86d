"""Pattern recognizers: small classes with one job each (Presidio style).

Each recognizer has ``name``, ``labels`` and ``analyze(text, ctx) -> list[Span]``;
:func:`default_pattern_recognizers` returns one instance of each, for the cascade.

Scores say how sure a recognizer is (the cascade resolves overlaps by score, then length):
identifiers with a checksum or a keyword in context score >= 0.95, a shape alone 0.75-0.85.

The recognizers are written for tutoring chat, where most digits are maths: a phone needs
either a phone-only shape (``+country``, ``(area)``, ``555-123-4567``, an extension) or a
phone word nearby ("call me", "my cell", "Fax:"), and shapes that maths produces — decimals,
ranges, dates, times, money, counting sequences, lists — are rejected.
Span boundaries follow the usual annotation convention: the value only, no label words
("Phone:"), no trailing punctuation, a URL with its trailing slash.
"""

from __future__ import annotations

import re

from ..values import luhn_ok
from .base import Span, TurnContext, count_digits, has_digit

# --------------------------------------------------------------------------- helpers

_DIGIT_WORDS = {
    "zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip


def _before(text: str, start: int, width: int = 48) -> str:
    return text[max(0, start - width) : start].casefold()


def _after(text: str, end: int, width: int = 16) -> str:
    return text[end : end + width].casefold()


def iban_ok(code: str) -> bool:
    """ISO 13616 mod-97 check of an IBAN (spaces ignored, any case)."""
    s = code.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", s):
        return False
    rearranged = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _tld():
    from ..offline import offline_tldextract

    return offline_tldextract()


def _split_host(host: str) -> tuple[str, str, str]:
    """(subdomain, registered domain, public suffix), lower-cased; '' suffix if not a public one."""
    r = _tld()(host)
    suffix = r.suffix.lower()
    reg = f"{r.domain}.{r.suffix}".lower() if r.domain and r.suffix else ""
    return r.subdomain.lower(), reg, suffix


# --------------------------------------------------------------------------- EMAIL

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+'-]{0,63}[A-Za-z0-9_%+-])?"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b"
)


class EmailRecognizer:
    """Plain e-mail addresses; the domain must end in a public suffix."""

    name = "email"
    labels = ("EMAIL",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if "@" not in text:
            return []
        out = []
        for m in _EMAIL.finditer(text):
            domain = m.group().rsplit("@", 1)[1]
            if _split_host(domain)[2]:
                out.append(Span(m.start(), m.end(), "EMAIL", self.name, 1.0))
        return out


# "maria dot lopez at gmail dot com", "maria(at)gmail.com", "maria [at] school [dot] org"
_AT = r"(?:\s*[\[\(\{<]\s*at\s*[\]\)\}>]\s*|\s+at\s+|\s+@\s+|\s*@\s*)"
_DOT = r"(?:\s*[\[\(\{<]\s*dot\s*[\]\)\}>]\s*|\s+dot\s+|\.)"
_LOCAL_SEP = r"(?:\s*[\[\(\{<]\s*dot\s*[\]\)\}>]\s*|\s+dot\s+|\s+underscore\s+|\s+dash\s+|[._-])"
_OBF_EMAIL = re.compile(
    rf"(?<![\w.@-])(?P<local>[A-Za-z0-9][A-Za-z0-9+]*(?:{_LOCAL_SEP}[A-Za-z0-9+]+)*)"
    rf"(?P<at>{_AT})"
    rf"(?P<domain>[A-Za-z0-9][A-Za-z0-9-]*(?:{_DOT}[A-Za-z0-9][A-Za-z0-9-]*)*{_DOT}[A-Za-z]{{2,12}})\b",
    re.IGNORECASE,
)
# Letters typed one by one: "m a r i a @ g m a i l . c o m"
_SPACED_EMAIL = re.compile(r"(?<!\S)(?:[A-Za-z0-9._-] ){2,}@(?: [A-Za-z0-9._-]){3,}(?!\S)")
_MAIL_PROVIDERS = frozenset(
    "gmail googlemail yahoo ymail hotmail outlook live msn icloud me mac aol protonmail proton gmx "
    "yandex mail zoho qq 163 126 comcast verizon att sbcglobal btinternet orange web wanadoo".split()
)
_NOT_LOCAL = frozenset(
    "i me you he she it we they us him her them this that there here who what which is are was were be been am "
    "look looking looked stare staring point pointing aim aimed arrive arrived meet meeting met stay stayed "
    "live lives living work works working study studying good bad great best better well not just only even also "
    "still all both laugh laughing smile smiling yell yelling shout throw thrown play playing start started end "
    "ended born sit sitting stand standing home school class lunch least most first last once".split()
)


class ObfuscatedEmailRecognizer:
    """E-mail addresses typed to dodge filters: spelled-out "at"/"dot", brackets, spaced letters."""

    name = "email_obfuscated"
    labels = ("EMAIL",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        low = text.casefold()
        out: list[Span] = []
        if "@" in text and re.search(r"\S @ \S", text):
            for m in _SPACED_EMAIL.finditer(text):
                compact = m.group().replace(" ", "")
                if _EMAIL.fullmatch(compact) and _split_host(compact.rsplit("@", 1)[1])[2]:
                    out.append(Span(m.start(), m.end(), "EMAIL", self.name, 0.95))
        if "@" not in low and not re.search(r"\bat\b", low):
            return out
        for m in _OBF_EMAIL.finditer(text):
            if any(s.start < m.end() and m.start() < s.end for s in out):
                continue
            at_raw, local_raw, dom_raw = m.group("at"), m.group("local"), m.group("domain")
            spelled = bool(re.search(r"\bdot\b|[\[\(\{<]", local_raw + at_raw + dom_raw, re.I)) or bool(
                re.search(r"\b(?:underscore|dash)\b", local_raw, re.I)
            )
            if at_raw == "@" and not spelled:
                continue  # a plain e-mail address: EmailRecognizer's job
            local = re.sub(_LOCAL_SEP, ".", local_raw, flags=re.I)
            domain = re.sub(_DOT, ".", dom_raw, flags=re.I).lower()
            if ".." in local or len(local) > 64:
                continue
            _, reg, suffix = _split_host(domain)
            if not suffix or not reg:
                continue
            provider = reg.split(".")[0] in _MAIL_PROVIDERS
            if at_raw.strip().casefold() == "at":
                # the plain word "at" ("look at khanacademy.org") needs a mail provider or a spelled "dot"
                if local.casefold() in _NOT_LOCAL or not (provider or spelled):
                    continue
            out.append(Span(m.start(), m.end(), "EMAIL", self.name, 0.95 if (provider or spelled) else 0.85))
        return out


# --------------------------------------------------------------------------- PHONE

_PHONE_CAND = re.compile(
    r"(?<![\w+@/#$€£¥%^*=<>])(?<!\d[.,:-])"
    r"(?:(?:\+|\b00)\d{1,3}[ .-]?)?"  # country code
    r"(?:\(0\)[ ]?)?"  # (0) trunk prefix as in +44 (0)20 ...
    r"(?:\(\d{1,5}\)[ .-]?)?"  # (area)
    r"\d{1,12}(?:[ .-]\d{1,12}){0,6}"  # digit groups, one separator each
    r"(?:[ ]?(?:x|ext\.?|extension)[ ]?\d{1,6})?"  # extension
    r"(?![\w])(?![.,]\d)",
    re.IGNORECASE,
)
_PHONE_WORD_BEFORE = re.compile(
    r"\b(?:phone|phones|telephone|tel|mob|mobile|cell|cellphone|cell phone|fax|desk|landline|hotline|whatsapp|"
    r"whats app|viber|signal|sms|imessage|call|calls|called|calling|ring|text|texts|texted|texting|dial|"
    r"reach|contact|answering|answer the phone|message|messages|voicemail|extension|ext|helpline)\b"
)
_POSSESSIVE_JUST_BEFORE = re.compile(
    r"\b(?:my|your|his|her|their|our)\s+(?:[a-z'’-]+\s+){0,2}(?:is\s+|:\s*|#\s*)?$"
)
_NOT_PHONE_NOUN = re.compile(
    r"\b(?:answer|answers|result|total|sum|score|guess|estimate|solution|product|number of|address|zip|postcode|"
    r"post code|id|account|card|pin|password|order|room|student|ssn|license|licence|passport)\b"
)
_PHONE_WORD_AFTER = re.compile(r"^\s*[-(,]?\s*(?:office|fax|mobile|cell|home|work|desk|tel|phone|landline)\b")
_UNIT_AFTER = re.compile(
    r"^\s?(?:%|percent|dollars?|cents?|euros?|pounds?|yen|usd|eur|gbp|km|kilomet|miles?|m\b|meters?|metres?|cm|mm|"
    r"kg|g\b|grams?|lbs?|ounces?|oz|liters?|litres?|ml|people|persons|students|years?|days?|hours?|minutes?|"
    r"seconds?|times|steps|points|votes|units|items|copies|books|pages?|words|visitors|views|likes)\b"
)
_CURRENCY_BEFORE = re.compile(r"(?:[$€£¥₹]|\b(?:usd|eur|gbp|rs|inr)\.?)\s?$")
_DATE_SHAPES = (
    re.compile(r"(?:19|20)\d\d[-./](?:0?[1-9]|1[0-2])[-./](?:0?[1-9]|[12]\d|3[01])"),
    re.compile(r"(?:0?[1-9]|[12]\d|3[01])[-./](?:0?[1-9]|[12]\d|3[01])[-./](?:(?:19|20)\d\d|\d\d)"),
)


def _phone_context(text: str, start: int, end: int) -> bool:
    before = _before(text, start, 48)
    # only the current sentence/line of the preceding text, plus a "Label:" on the line above
    if _PHONE_WORD_BEFORE.search(before):
        return True
    if _POSSESSIVE_JUST_BEFORE.search(before) and not _NOT_PHONE_NOUN.search(before[-24:]):
        return True
    return bool(_PHONE_WORD_AFTER.match(_after(text, end, 16)))


def _groups(core: str) -> list[str]:
    return [g for g in re.split(r"[^\d]+", core) if g]


def _is_progression(nums: list[int]) -> bool:
    if len(nums) < 3:
        return False
    d = nums[1] - nums[0]
    return all(b - a == d for a, b in zip(nums, nums[1:]))


class PhoneRecognizer:
    """Phone numbers in national and international formats (spaces, dots, dashes, parentheses,
    ``+``/``00`` country codes, ``(0)``, extensions); never maths (see the module docstring)."""

    name = "phone"
    labels = ("PHONE",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if count_digits(text) < 7:
            return []
        out = []
        for m in _PHONE_CAND.finditer(text):
            span = self._check(text, m.start(), m.end(), m.group())
            if span is not None:
                out.append(span)
        return out

    def _check(self, text: str, start: int, end: int, s: str) -> Span | None:
        ext = re.search(r"[ ]?(?:x|ext\.?|extension)[ ]?\d{1,6}$", s, re.IGNORECASE)
        core = s[: ext.start()] if ext else s
        digits = re.sub(r"\D", "", core)
        n = len(digits)
        if n < 7 or n > 15:
            return None
        groups = _groups(core)
        seps = set(re.findall(r"[ .-]", re.sub(r"^\+|\(|\)", "", core)))
        intl = core.startswith("+") or core.startswith("00")
        paren = "(" in core
        before = text[max(0, start - 6) : start].casefold()
        if _CURRENCY_BEFORE.search(before) or _UNIT_AFTER.match(text[end : end + 14].casefold()):
            return None
        if not intl and not paren:
            if seps == {"."} and len(groups) == 2:
                return None  # a decimal
            if any(p.fullmatch(core) for p in _DATE_SHAPES):
                return None
            if seps == {"."} and len(groups) == 4 and all(len(g) <= 3 and int(g) <= 255 for g in groups):
                return None  # an IP address
            if len(groups) >= 3 and _is_progression([int(g) for g in groups]):
                return None  # counting: 10 20 30 40, 40-60-80-100
        context = _phone_context(text, start, end)
        nanp = bool(re.fullmatch(r"(?:1[ .-])?\d{3}([.-])\d{3}\1\d{4}", core)) or bool(
            re.fullmatch(r"(?:1 )?\d{3} \d{3} \d{4}", core)
        )
        strong = (intl and n >= 8) or (paren and len(groups) >= 2) or nanp or (ext is not None and len(groups) >= 2)
        if not (context or strong):
            return None
        if not context and len(groups) >= 4 and not intl and not paren:
            nums = [int(g) for g in groups]
            if nums == sorted(nums) and not any(g.startswith("0") for g in groups):
                return None  # an ascending list of numbers
        if len(groups) == 1 and not context:
            return None
        return Span(start, end, "PHONE", self.name, 0.9 if context else 0.8)


_SPELLED_DIGITS = re.compile(
    r"(?<![\w-])(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)(?:[\s,-]+|$)){7,15}",
    re.IGNORECASE,
)


class SpelledPhoneRecognizer:
    """Phone digits written as words ("five five five, one two three four ...")."""

    name = "phone_spelled"
    labels = ("PHONE",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        low = text.casefold()
        if not any(w in low for w in ("five", "nine", "seven", "eight", "four", "zero", "two", "three", "six", "one")):
            return []
        out = []
        for m in _SPELLED_DIGITS.finditer(text):
            start, end = m.start(), m.end()
            while end > start and not text[end - 1].isalpha():
                end -= 1
            words = re.findall(r"[a-z]+", m.group().casefold())
            nums = [int(_DIGIT_WORDS[w]) for w in words]
            if _is_progression(nums) and len(set(nums)) > 1:
                continue  # counting "one two three four ..."
            if len(nums) >= 10 or _phone_context(text, start, end):
                out.append(Span(start, end, "PHONE", self.name, 0.85))
        return out


# --------------------------------------------------------------------------- URL

_URL_SCHEME = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`]+", re.IGNORECASE)
_URL_WWW = re.compile(r"(?<![\w./@-])www\d?\.[^\s<>\"'`]+", re.IGNORECASE)
_URL_BARE = re.compile(
    r"(?<![\w.@/:-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?::\d{2,5})?(?:/[^\s<>\"'`]*)?"
)
#: Public suffixes accepted for a bare domain without a path ("myblog.net"); others ("yes.it",
#: "main.py", "done.now") are too often ordinary words or file names glued by a dot.
_BARE_SUFFIXES = frozenset(
    "com org net edu gov io info biz blog site online app dev xyz tv ca de fr nl se dk no ch pl cz hu pt br au nz "
    "uk ie jp cn ru eu es".split()
)
#: Hosts whose pages are public reference/course/docs material (not personal), unless the path
#: points at a user ("/user/...", "/@...", "/~...").
_PUBLIC_DOMAINS = frozenset(
    """
    wikipedia.org wikimedia.org wiktionary.org wikibooks.org wikihow.com britannica.com merriam-webster.com
    dictionary.com thesaurus.com khanacademy.org coursera.org edx.org udemy.com udacity.com mathsisfun.com
    mathworld.wolfram.com wolfram.com wolframalpha.com desmos.com geogebra.org purplemath.com brilliant.org
    ixl.com mathway.com symbolab.com cuemath.com byjus.com splashlearn.com mathplayground.com coolmath.com
    coolmathgames.com nrich.maths.org maths.org bbc.co.uk bbc.com nationalgeographic.com nasa.gov noaa.gov
    python.org docs.python.org w3schools.com developer.mozilla.org mozilla.org stackoverflow.com
    stackexchange.com readthedocs.io cppreference.com oracle.com microsoft.com apple.com google.com
    amazon.com youtube.com youtu.be scratch.mit.edu code.org quizlet.com kahoot.com kahoot.it gutenberg.org
    archive.org openstax.org ck12.org libretexts.org pbs.org pbslearningmedia.org sciencedirect.com
    jstor.org arxiv.org nature.com sciencemag.org physicsclassroom.com chem.libretexts.org
    """.split()
)
#: Hosts where any page with a path belongs to someone (profiles, personal sites, file shares).
_PERSONAL_DOMAINS = frozenset(
    """
    facebook.com fb.com instagram.com twitter.com x.com tiktok.com linkedin.com snapchat.com pinterest.com
    tumblr.com reddit.com twitch.tv discord.gg discord.com discordapp.com medium.com substack.com
    blogspot.com wordpress.com wixsite.com weebly.com squarespace.com github.io gitlab.io netlify.app
    vercel.app pages.dev glitch.me carrd.co linktr.ee about.me behance.net dribbble.com deviantart.com
    artstation.com soundcloud.com bandcamp.com vimeo.com flickr.com imgur.com patreon.com ko-fi.com
    onlyfans.com venmo.com paypal.me cash.app calendly.com zoom.us meet.google.com teams.microsoft.com
    drive.google.com docs.google.com sites.google.com photos.google.com photos.app.goo.gl dropbox.com
    onedrive.live.com 1drv.ms box.com wetransfer.com we.tl icloud.com mega.nz mediafire.com
    steamcommunity.com roblox.com replit.com codepen.io github.com gitlab.com bitbucket.org kik.me t.me
    wa.me telegram.me skype.com
    """.split()
)
_PERSONAL_PATH = re.compile(
    r"/(?:~|@)[\w.-]+|/(?:u|user|users|profile|profiles|people|member|members|in|channel|c|id|author|"
    r"student|students|portfolio|blog|photos|files|file|s|d|folders?|share|sharing|invite)/[\w.-]+"
    r"|[?&](?:user|userid|uid|id|profile|u|usp=sharing)[=&]",
    re.IGNORECASE,
)
_PUBLIC_SUFFIX_TAIL = re.compile(r"(?:^|\.)(?:edu|gov|mil|int|museum|ac\.[a-z]{2}|edu\.[a-z]{2}|gov\.[a-z]{2}|k12\.[a-z.]+)$")
_PERSONAL_URL_CONTEXT = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:own\s+|new\s+|personal\s+)?(?:web ?site|site|blog|page|homepage|home page|"
    r"channel|profile|portfolio|account|shop|store|link|vlog|podcast|video|photos?|pics?|art|stream)\b"
    r"|\b(?:follow|subscribe to|check out)\s+(?:me|my)\b|\bwebsite:"
)


def _trim_url(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in ".,;:!?'\"”’*":
        end -= 1
    while end > start and text[end - 1] in ")]}>":
        opener = {")": "(", "]": "[", "}": "{", ">": "<"}[text[end - 1]]
        if text[start:end].count(opener) >= text[start:end].count(text[end - 1]):
            break
        end -= 1
        while end > start and text[end - 1] in ".,;:!?'\"":
            end -= 1
    return end


class UrlRecognizer:
    """Personal URLs: profiles, personal sites, shared files, unknown sites a user points to.

    Public reference pages (encyclopedias, courses, docs, school and government pages) are
    left alone unless the path names a user. Bare domains ("myblog.net/anna") count when they
    have a path or a common suffix; without a path, only if the context says it is theirs.
    """

    name = "url"
    labels = ("URL",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if "." not in text:
            return []
        out: list[Span] = []
        taken: list[tuple[int, int]] = []
        for rx, kind in ((_URL_SCHEME, "scheme"), (_URL_WWW, "www"), (_URL_BARE, "bare")):
            for m in rx.finditer(text):
                start = m.start()
                end = _trim_url(text, start, m.end())
                if any(s < end and start < e for s, e in taken):
                    continue
                url = text[start:end]
                score = self._classify(text, start, end, url, kind)
                if score is None:
                    continue
                taken.append((start, end))
                out.append(Span(start, end, "URL", self.name, score))
        return out

    def _classify(self, text: str, start: int, end: int, url: str, kind: str) -> float | None:
        rest = re.sub(r"^(?:https?|ftp)://", "", url, flags=re.I)
        host, _, path = rest.partition("/")
        path = "/" + path if _ else ""
        query = ""
        if "?" in host:
            host, _, query = host.partition("?")
        host = host.split("@")[-1].split(":")[0].lower().rstrip(".")
        if not host or re.fullmatch(r"[\d.]+", host):
            return None if kind == "bare" else 0.75
        sub, reg, suffix = _split_host(host)
        if not suffix or not reg:
            return None
        if kind == "bare":
            if "@" in text[max(0, start - 1) : start]:
                return None
            if not path and suffix.split(".")[-1] not in _BARE_SUFFIXES:
                return None
            if path and not re.match(r"/[\w~@%.-]", path):
                return None
        full_host = host[4:] if host.startswith("www.") else host
        hosts = {full_host, reg}
        if len(full_host.split(".")) > 2:
            hosts.add(".".join(full_host.split(".")[-3:]))
        personal_path = bool(_PERSONAL_PATH.search(path + ("?" + query if query else "")))
        meaningful_path = bool(re.sub(r"[/#?]+", "", path))
        if hosts & _PERSONAL_DOMAINS:
            # a bare "facebook.com" is a company; "facebook.com/maria.l" is a person
            if meaningful_path or sub not in ("", "www", "m"):
                return 0.9
            return None
        if personal_path:
            return 0.9
        if hosts & _PUBLIC_DOMAINS or _PUBLIC_SUFFIX_TAIL.search(full_host):
            return None
        context = bool(_PERSONAL_URL_CONTEXT.search(_before(text, start, 60)))
        if kind == "bare" and not meaningful_path:
            return 0.85 if context else None
        return 0.85 if context else 0.75


# --------------------------------------------------------------------------- USERNAME

_HANDLE = re.compile(r"(?<![\w@.+-])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?(?![\w@]|\.[A-Za-z])")
_NOT_HANDLES = frozenset({"everyone", "here", "channel", "all", "admin", "mention"})
_PLATFORMS = (
    r"discord|insta|instagram|ig|snap|snapchat|tiktok|tik tok|twitter|gamer ?tag|gamertag|xbox(?: live)?|"
    r"psn|ps4|ps5|playstation|steam|epic(?: games)?|roblox|minecraft|fortnite|valorant|"
    r"github|gitlab|reddit|twitch|youtube|yt|kik|telegram|skype|scratch|replit|chess\.com|lichess|duolingo|"
    r"wechat|whatsapp"
)
#: Platform names that are also ordinary words ("my snap is ..."): the name must look like a handle.
_AMBIGUOUS_PLATFORMS = re.compile(r"\b(?:snap|steam|epic|scratch|yt)\b(?!\s*(?:user ?name|name|id|tag|handle))", re.I)
_USERNAME_CONTEXT = re.compile(
    # "my username on the school site is mlopez2009": a user-name word, where it is used, then "is"
    r"\b(?:my|his|her|your|their|our)\s+(?:user ?name|user ?id|login(?: name)?|log ?in|handle|screen ?name|"
    r"display ?name|account(?: name)?|gamer ?tag|ign|nick(?:name)?)\s+(?:on|for|at|in)\s+(?:[\w.'’-]+\s+){0,4}?"
    r"(?:is|was|=|:)\s*(?:(?:it's|its|just|literally)\s+)?[\"'“‘]?"
    rf"|\b(?:my|his|her|your|their|our)\s+(?:(?:{_PLATFORMS})\s*(?:user ?name|name|id|tag|handle|account|profile|ign|acc)?|"
    r"user ?name|user ?id|user|handle|screen ?name|display ?name|ign|gamer ?tag|login(?: name)?|log ?in|account name|"
    r"account|nick(?:name)?)"
    r"\s*(?:is|was|=|:|-|'s|’s)?\s*(?:(?:it's|its|just|literally)\s+)?[\"'“‘]?"
    rf"|\b(?:add|follow|find|dm|message|friend|text)\s+me\s+(?:on|at)\s+(?:{_PLATFORMS})\s*(?:[:,-]|\bas\b|\bit's\b)?\s*[\"'“‘]?"
    r"|\b(?:user ?name|user ?id|handle|ign|gamer ?tag|login)\s*[:=]\s*",
    re.IGNORECASE,
)
_USERNAME_TOKEN = re.compile(r"@?[A-Za-z0-9_][A-Za-z0-9_.#-]{1,31}(?<![.#-])")
_NOT_USERNAMES = frozenset(
    """
    a an the is was are be been my your his her their our same different private public down up gone banned
    hacked deleted new old cool not it its it's this that there here on in at of and or but so if same
    also just really very still like name user password account what which who how why where when
    broken locked closed open blocked suspended disabled weird long short funny secret easy hard
    """.split()
)


class UsernameRecognizer:
    """Handles (@maria_l) and user names introduced as such ("my discord is kitty_99",
    "my roblox username: CoolKid2011", "add me on insta, maria.lopez")."""

    name = "username"
    labels = ("USERNAME",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        out: list[Span] = []
        if "@" in text:
            for m in _HANDLE.finditer(text):
                handle = m.group()[1:]
                if handle.casefold() in _NOT_HANDLES or re.fullmatch(r"[\d.:]+(?:am|pm)?", handle, re.I):
                    continue
                out.append(Span(m.start(), m.end(), "USERNAME", self.name, 0.9))
        for c in _USERNAME_CONTEXT.finditer(text):
            m = _USERNAME_TOKEN.match(text, c.end())
            if not m:
                continue
            tok = m.group()
            # "#1234" discriminators (old Discord tags) belong to the name
            if any(s.start <= m.start() < s.end for s in out):
                continue
            bare = tok.lstrip("@")
            if bare.casefold() in _NOT_USERNAMES or len(bare) < 3:
                continue
            if re.fullmatch(r"[\d\s-]+", bare):
                continue  # digits only: an ID number, IdNumberRecognizer's job
            connector = re.search(r"(?:\bis|\bwas|[=:\-\"'“‘,]|'s|’s|\bas|\bit's)\s*$", c.group(), re.IGNORECASE)
            handle_like = bool(re.search(r"[\d_.#]|[a-z][A-Z]", bare))
            if not (connector or handle_like):
                continue  # "my account stays active"
            if not handle_like and _AMBIGUOUS_PLATFORMS.search(c.group()):
                continue
            if "@" in text[m.end() : m.end() + 1]:
                continue  # an e-mail address follows
            out.append(Span(m.start(), m.end(), "USERNAME", self.name, 0.85))
        return out


# --------------------------------------------------------------------------- ID_NUM

_CARD = re.compile(r"(?<![\w.,-])\d(?:[ -]?\d){11,18}(?![\w]|[.,-]\d)")
_CARD_CONTEXT = re.compile(
    r"\b(?:card|cards|cc|credit|debit|visa|mastercard|master card|amex|american express|discover|maestro|"
    r"payment|pay with|billing)\b"
)
_SSN = re.compile(r"(?<![\w.-])\d{3}-\d{2}-\d{4}(?![\w]|[.-]\d)")
_SSN_LOOSE = re.compile(r"(?<![\w.-])\d{3}[ ]?\d{2}[ ]?\d{4}(?![\w]|[.-]\d)")
_SSN_CONTEXT = re.compile(r"\b(?:ssn|social security|social insurance|sin|tin|itin|tax id|national insurance)\b")
_IBAN = re.compile(
    r"(?<![\w])[A-Za-z]{2}\d{2}(?:[A-Za-z0-9]{11,30}|(?: [A-Za-z0-9]{4}){2,7}(?: [A-Za-z0-9]{1,4})?)(?![\w])"
)
_ID_NOUN = r"(?:id(?:entification)?|i\.d\.|number|no\.?|num|#|code|card number|card)"
_ID_CONTEXT = re.compile(
    # words that are an ID on their own ("passport: X1234567", "my licence number is ...")
    r"(?:\b(?:passport|licen[cs]e|driver'?s\s+licen[cs]e|driving\s+licen[cs]e|ssn|social\s+security|nhs|medicare|medicaid|"
    r"matriculation|matric|national\s+insurance|tax\s+id|itin|employee\s+id|badge|roll)(?:\s+" + _ID_NOUN + r")?"
    # words that need an ID noun ("student id", "login number", "account #")
    r"|\b(?:student|school|pupil|learner|login|log-in|user|member|membership|library|employee|staff|account|acct|"
    r"customer|patient|exam|candidate|applicant|application|registration|enrol?lment|reference|ref|ticket|order|"
    r"confirmation|policy|insurance|national|permit|visa|bank\s+account|routing|identity|id)\s+" + _ID_NOUN +
    r"|\bID\b|\bid(?=\s*[:#=])"
    r")\s*(?:is|was|:|=|#|-)?\s*(?:(?:it's|its)\s+)?[\"'“‘]?",
    re.IGNORECASE,
)
_ID_TOKEN = re.compile(r"(?=[A-Za-z0-9-]*\d)[A-Za-z0-9](?:[A-Za-z0-9-]{2,22}[A-Za-z0-9])(?![\w])")


class IdNumberRecognizer:
    """ID numbers: payment cards (Luhn), IBANs (mod 97), SSN-shaped numbers, and codes introduced
    as an ID ("my student id is 20231487", "license number: F1628235", "ID: AB-4471")."""

    name = "id_num"
    labels = ("ID_NUM",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if not has_digit(text):
            return []
        out: list[Span] = []

        def add(start: int, end: int, score: float) -> None:
            if not any(s.start < end and start < s.end for s in out):
                out.append(Span(start, end, "ID_NUM", self.name, score))

        low = text.casefold()
        for m in _IBAN.finditer(text):
            if iban_ok(m.group()):
                add(m.start(), m.end(), 0.99)
        for m in _SSN.finditer(text):
            area = int(m.group()[:3])
            context = bool(_SSN_CONTEXT.search(low[max(0, m.start() - 48) : m.start()]))
            if context or (area not in (0, 666) and area < 900):
                add(m.start(), m.end(), 0.97 if context else 0.85)
        for m in _SSN_LOOSE.finditer(text):  # "my ssn is 460 89 9847" / "460899847" after an SSN word
            if _SSN_CONTEXT.search(low[max(0, m.start() - 48) : m.start()]):
                add(m.start(), m.end(), 0.97)
        for m in _CARD.finditer(text):
            digits = re.sub(r"\D", "", m.group())
            seps = set(re.findall(r"[ -]", m.group()))
            if seps and not re.fullmatch(r"\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{4,5}", m.group()):
                continue  # grouped, but not like a card (4-4-4-4 or Amex 4-6-5)
            context = bool(_CARD_CONTEXT.search(low[max(0, m.start() - 48) : m.start()]))
            if luhn_ok(digits) and (context or (len(digits) in (15, 16) and digits[0] in "3456")):
                add(m.start(), m.end(), 0.98 if context else 0.9)
            elif context and 12 <= len(digits) <= 19:
                add(m.start(), m.end(), 0.9)
        for c in _ID_CONTEXT.finditer(text):
            m = _ID_TOKEN.match(text, c.end())
            if not m:
                continue
            tok = m.group()
            ndig = sum(ch.isdigit() for ch in tok)
            if ndig < 4 and not (ndig >= 2 and len(tok) >= 5):
                continue
            if re.fullmatch(r"\d{1,2}[-/.]\d{1,2}(?:[-/.]\d{2,4})?|(?:19|20)\d\d", tok):
                continue
            add(m.start(), m.end(), 0.96)
        return out


def default_pattern_recognizers() -> list:
    """One instance of every pattern recognizer, for the cascade."""
    from .address import AddressRecognizer

    return [
        EmailRecognizer(),
        ObfuscatedEmailRecognizer(),
        PhoneRecognizer(),
        SpelledPhoneRecognizer(),
        UrlRecognizer(),
        UsernameRecognizer(),
        IdNumberRecognizer(),
        AddressRecognizer(),
    ]
