"""Per-label surrogate generators that don't need the session's name mapping.

Each generator takes the real value and a :class:`~surrogate.keyed.KeyedRandom` (seeded from the
HMAC of session + label + value [+ counter]) and returns ``(surrogate, aux)``: ``aux`` is what is
needed to render the same surrogate into another surface form of the same value (a phone number
written with another layout, a URL with or without scheme). Generators that do need names (e-mail
local parts, usernames, URL paths) live in :mod:`surrogate.replacer` and use the helpers here.

Choices documented here:

* PHONE keeps the country code, the trunk prefix ("0", "(0)", NANP "1"), every separator and the
  extension layout. The national number is replaced by a number that can't be assigned where a
  fictitious range exists: NANP ``NPA-555-01XX`` (7-digit local numbers → ``555-01XX``), UK Ofcom
  drama ranges (``07700 900xxx``, ``020 7946 0xxx``, ``0113 496 0xxx``…, ``0808 157 0xxx``,
  ``03069 990xxx``), Australia's ACMA fictitious ranges (``0X 5550 xxxx``, ``0491 570 xxx``).
  Elsewhere the first digit of the national number (mobile/landline hint in most plans) is kept and
  the rest is keyed-random: such numbers may exist — that is the documented weak spot.
* ID_NUM keeps length and character classes (digit→digit, A–Z→A–Z, a–z→a–z, others kept); a
  Luhn-valid number (12–19 digits) stays Luhn-valid; an IBAN keeps its country and gets valid
  check digits.
* ADDRESS comes from Faker in the locale the original looks like (US by default), seeded from the
  HMAC; multi-line stays multi-line, one-line stays one-line, a bare number stays a number.
* EMAIL/URL domains: free-mail providers are kept (the provider is not identifying); school and
  university domains become ``<fictitious-school>.example.edu``; other domains become
  ``<word>.example.{com,org,net}``. ``example.*`` is reserved (RFC 2606), so no surrogate domain
  belongs to a real school or company.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

from plainsight.middleware.values import (  # noqa: F401  (re-exported: value parsing is shared with detection)
    _DIGIT_WORD_RX,
    PhoneParts,
    luhn_ok,
    parse_phone,
    spelled_layout,
    split_url,
    url_core,
)

from .keyed import KeyedRandom

# ---------------------------------------------------------------------------------------------
# Normal forms (identity of a value within a session)
# ---------------------------------------------------------------------------------------------

_WS = re.compile(r"\s+")


def _fold(s: str) -> str:
    nfkd = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in nfkd if not unicodedata.combining(ch)).casefold()


def value_norm(label: str, value: str) -> str:
    """The identity of a non-name value: two mentions with the same norm get the same surrogate."""
    v = value.strip()
    if label == "EMAIL":
        style = email_style(v)
        return (style.plain if style is not None else v).casefold()
    if label == "PHONE":
        p = parse_phone(v)
        return p.nsn + ("x" + p.ext if p.ext else "")
    if label == "URL":
        return url_core(v).casefold()
    if label == "USERNAME":
        return v.lstrip("@").casefold()
    if label == "ID_NUM":
        return "".join(c for c in v if c.isalnum()).upper()
    return " ".join(re.sub(r"[^\w]+", " ", _fold(v)).split())


def surrogate_norm(label: str, surrogate: str, aux: str = "") -> str:
    return value_norm(label, surrogate)


# ---------------------------------------------------------------------------------------------
# EMAIL written to dodge filters ("maria dot lopez at gmail dot com", "maria(at)gmail.com",
# "m a r i a @ g m a i l . c o m"): the surrogate is written the same way
# ---------------------------------------------------------------------------------------------

_OBF_AT = re.compile(r"(?i)\s*[\[\(\{<]\s*at\s*[\]\)\}>]\s*|\s+at\s+|\s+@\s+")
_OBF_SEP = re.compile(r"(?i)\s*[\[\(\{<]\s*(dot|underscore|dash)\s*[\]\)\}>]\s*|\s+(dot|underscore|dash)\s+")
_SEP_CHAR = {"dot": ".", "underscore": "_", "dash": "-"}
_OBF_GATE = re.compile(r"[\s\[\(\{<]")


class EmailStyle:
    """How an obfuscated address is written: the plain address it stands for, and the strings
    it uses for "@" and for each separator, in the local part and in the domain."""

    __slots__ = ("plain", "at", "local_seps", "domain_dot", "spaced")

    def __init__(self, plain: str, at: str, local_seps: dict[str, str], domain_dot: str, spaced: bool) -> None:
        self.plain, self.at, self.local_seps, self.domain_dot, self.spaced = plain, at, local_seps, domain_dot, spaced

    def render(self, plain: str) -> str:
        """``plain`` (a surrogate address) written in this style."""
        if self.spaced:
            return " ".join(plain)
        local, _, domain = plain.rpartition("@")
        spelled = any(len(v) > 1 for v in self.local_seps.values()) or len(self.domain_dot) > 1
        out = []
        for ch in local:
            if ch in "._-":
                name = {".": "dot", "_": "underscore", "-": "dash"}[ch]
                sep = self.local_seps.get(ch)
                if sep is None:
                    sep = (" " + name + " ") if spelled else ch
                out.append(sep)
            else:
                out.append(ch)
        return "".join(out) + self.at + domain.replace(".", self.domain_dot)


def email_style(value: str) -> EmailStyle | None:
    """The style of an obfuscated e-mail address, or None for a plain one (or not an address)."""
    v = value.strip()
    if "@" in v and not _OBF_GATE.search(v):
        return None  # a plain address (the common case: no spaces, no brackets)
    if re.fullmatch(r"(?:\S ){4,}\S", v) and "@" in v:
        return EmailStyle(v.replace(" ", ""), "@", {}, ".", True)
    ats = list(_OBF_AT.finditer(v))
    if not ats:
        return None
    at = ats[-1]
    local_raw, domain_raw = v[: at.start()], v[at.end() :]
    if not local_raw or not domain_raw:
        return None
    local_seps: dict[str, str] = {}

    def sub_local(m: re.Match) -> str:
        ch = _SEP_CHAR[(m.group(1) or m.group(2)).casefold()]
        local_seps.setdefault(ch, m.group())
        return ch

    local = _OBF_SEP.sub(sub_local, local_raw)
    for ch in "._-":  # "jake_w2010 AT yahoo DOT com": a separator typed as itself stays itself
        if ch in local_raw:
            local_seps.setdefault(ch, ch)
    domain_dot = "."
    for m in _OBF_SEP.finditer(domain_raw):
        if (m.group(1) or m.group(2)).casefold() == "dot":
            domain_dot = m.group()
            break
    domain = _OBF_SEP.sub(lambda m: _SEP_CHAR[(m.group(1) or m.group(2)).casefold()], domain_raw)
    if " " in local.strip() or " " in domain.strip() or "." not in domain:
        return None
    return EmailStyle(f"{local}@{domain}", at.group(), local_seps, domain_dot, False)


# ---------------------------------------------------------------------------------------------
# PHONE
# ---------------------------------------------------------------------------------------------

_WORD_OF = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _respell(mention: str, rendered_layout: str) -> str:
    """Digits of ``rendered_layout`` written back as words in the places (and case) of the words of
    ``mention``; zero is "oh" when the mention says "oh"."""
    digits = iter([c for c in rendered_layout if c.isdigit()])
    zero = "zero"
    for m in _DIGIT_WORD_RX.finditer(mention):
        if m.group().casefold() in ("oh", "o"):
            zero = "oh"
            break

    def word(m: re.Match) -> str:
        d = int(next(digits))
        w = zero if d == 0 else _WORD_OF[d]
        orig = m.group()
        if orig.isupper() and len(orig) > 1:
            return w.upper()
        return w.capitalize() if orig[:1].isupper() else w

    return _DIGIT_WORD_RX.sub(word, mention)


#: NANP area codes used for surrogates (common, valid NPAs; the 555-01XX line is what's fictitious).
_NANP_NPA = ("201", "202", "212", "213", "305", "310", "312", "404", "415", "469", "503", "512", "602",
             "617", "702", "713", "718", "773", "805", "818", "917", "206", "303", "407", "614")
_UK_GEO = ("1134960", "1144960", "1154960", "1164960", "1174960", "1184960", "1214960", "1314960",
           "1414960", "1514960", "1614960", "1914980")
_AU_MOBILE = ("491570006", "491570156", "491570157", "491570158", "491570159", "491570110", "491570313",
              "491570737")


def _phone_nsn(p: PhoneParts, rng: KeyedRandom) -> str:
    n = len(p.nsn)
    cc = p.cc
    nanp = cc == "1" or (not cc and (p.trunk == "1" or (not p.trunk and n in (7, 10))))
    if nanp and n == 10:
        return rng.choice(_NANP_NPA) + "55501" + rng.digits(2)
    if nanp and n == 7:
        return "55501" + rng.digits(2)
    uk = cc == "44" or (not cc and p.trunk == "0" and n == 10)
    if uk and n == 10:
        first = p.nsn[:1]
        if first == "7":
            return "7700900" + rng.digits(3)
        if p.nsn.startswith("20"):
            return "2079460" + rng.digits(3)
        if first == "1":
            return rng.choice(_UK_GEO) + rng.digits(3)
        if first == "3":
            return "3069990" + rng.digits(3)
        if first == "8":
            return "8081570" + rng.digits(3)
        return "7700900" + rng.digits(3)
    if cc == "61" and n == 9:
        if p.nsn[0] == "4":
            return rng.choice(_AU_MOBILE)
        area = p.nsn[0] if p.nsn[0] in "2378" else "2"
        return area + "5550" + rng.digits(4)
    # Documented fallback: keep the leading digit (mobile/landline hint), randomise the rest.
    if n <= 1:
        return rng.digits(n)
    return p.nsn[0] + rng.digits(n - 1)


def _pour(layout: str, digits: str) -> str:
    """Put ``digits`` into the digit positions of ``layout`` (same count), keeping everything else."""
    it = iter(digits)
    return "".join(next(it) if c.isdigit() else c for c in layout)


def render_phone(mention: str, nsn: str, ext: str) -> str | None:
    """The surrogate (national number ``nsn``, extension ``ext``) in the layout of ``mention``."""
    p = parse_phone(mention)
    if len(p.nsn) != len(nsn) or len(p.ext) != len(ext):
        return None
    main = _pour(p.main, p.intl + p.cc + p.trunk + nsn)
    ext_text = _pour(p.ext_text, ext) if p.ext_text else ""
    if spelled_layout(mention) is not None:  # written in words: the surrogate too
        return _respell(mention, main + ext_text)
    return main + ext_text


def gen_phone(value: str, rng: KeyedRandom) -> tuple[str, str]:
    p = parse_phone(value)
    nsn = _phone_nsn(p, rng)
    # a real number inside the fictitious ranges (555-01xx) must not keep its own line digits
    for _ in range(16):
        if len(p.nsn) < 4 or nsn[-4:] != p.nsn[-4:]:
            break
        nsn = _phone_nsn(p, rng)
    ext = rng.digits(len(p.ext))
    out = render_phone(value, nsn, ext)
    assert out is not None
    return out, f"{nsn}|{ext}"


# ---------------------------------------------------------------------------------------------
# ID_NUM
# ---------------------------------------------------------------------------------------------

def _luhn_fix(digits: str) -> str:
    body = digits[:-1]
    for d in "0123456789":
        if luhn_ok(body + d):
            return body + d
    return digits  # unreachable


_IBAN = re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$")


def _iban_check(country: str, bban: str) -> str:
    s = bban + country + "00"
    num = "".join(str(int(c, 36)) for c in s)
    return f"{98 - int(num) % 97:02d}"


def gen_id(value: str, rng: KeyedRandom) -> tuple[str, str]:
    compact = "".join(c for c in value if c.isalnum())
    if not compact:  # no letter or digit to redraw ("@_", "--"): a short code of its own (issue #22)
        new = rng.upper() + rng.digit() + rng.digit() + rng.digit()
        return new, new
    if _IBAN.match(compact):
        country = compact[:2]
        bban = "".join(_class_char(c, rng) for c in compact[4:])
        new = country + _iban_check(country, bban) + bban
        return _pour_alnum(value, new), new
    new = "".join(_class_char(c, rng) for c in compact)
    if compact.isdigit() and 12 <= len(compact) <= 19 and luhn_ok(compact):
        new = _luhn_fix(new)
    if new == compact.upper() or new == compact:  # a 1-char class may repeat; nudge the first char
        new = _class_char(compact[0], rng) + new[1:]
    return _pour_alnum(value, new), new


def gen_shaped(value: str, rng: KeyedRandom, fits=None) -> tuple[str, str]:
    """A format-preserving surrogate for a label added by configuration: same length, every
    character of the same class (digit, upper, lower; anything else kept). When ``fits`` is given
    (the recognizer's own patterns and checksum) the surrogate must pass it too: first with every
    letter and digit redrawn, then with the letters kept ("S-2024-00042" → "S-7315-86120" when
    the pattern spells the "S")."""
    cand = value
    for attempt in range(64):
        if attempt < 16:
            cand = "".join(_class_char(c, rng) for c in value)
        else:
            cand = "".join(rng.digit() if c.isdigit() else c for c in value)
        if cand != value and (fits is None or fits(cand)):
            return cand, ""
    return cand, ""


def _class_char(c: str, rng: KeyedRandom) -> str:
    if c.isdigit():
        return rng.digit()
    if c.isascii() and c.isupper():
        return rng.upper()
    if c.isascii() and c.islower():
        return rng.lower()
    if c.isalpha():
        return rng.upper() if c.isupper() else rng.lower()
    return c


def _pour_alnum(layout: str, chars: str) -> str:
    it = iter(chars)
    return "".join(next(it) if c.isalnum() else c for c in layout)


def render_id(mention: str, new: str) -> str | None:
    if sum(1 for c in mention if c.isalnum()) != len(new):
        return None
    return _pour_alnum(mention, new)


# ---------------------------------------------------------------------------------------------
# Domains (e-mail, URL hosts)
# ---------------------------------------------------------------------------------------------

FREE_MAIL = frozenset(
    """
    gmail.com googlemail.com yahoo.com yahoo.co.uk yahoo.fr yahoo.de yahoo.es yahoo.it yahoo.com.br
    yahoo.co.in yahoo.com.au ymail.com rocketmail.com hotmail.com hotmail.co.uk hotmail.fr hotmail.de
    hotmail.es hotmail.it outlook.com outlook.fr outlook.de live.com live.co.uk live.fr msn.com
    icloud.com me.com mac.com aol.com protonmail.com proton.me pm.me gmx.com gmx.de gmx.net gmx.at
    web.de mail.com mail.ru inbox.ru list.ru bk.ru yandex.ru yandex.com ya.ru qq.com 163.com 126.com
    sina.com zoho.com fastmail.com tutanota.com hey.com orange.fr free.fr laposte.net sfr.fr
    wanadoo.fr libero.it virgilio.it naver.com daum.net hanmail.net rediffmail.com seznam.cz wp.pl
    o2.pl interia.pl onet.pl t-online.de freenet.de btinternet.com sky.com virginmedia.com
    comcast.net verizon.net att.net sbcglobal.net bellsouth.net cox.net charter.net earthlink.net
    optonline.net bigpond.com bigpond.net.au shaw.ca rogers.com sympatico.ca telus.net uol.com.br
    bol.com.br terra.com.br ig.com.br
    """.split()
)

# Fictitious school / university names for edu domains (under the reserved example.edu).
_SCHOOLS = ("northfield-academy", "riverside-high", "maplewood-middle", "lakeview-elementary",
            "cedar-hill-school", "oakridge-high", "westbrook-academy", "pinecrest-school",
            "brookside-elementary", "hillcrest-middle")
_UNIVERSITIES = ("northfield-university", "lakeshore-college", "riverbend-university", "eastmoor-college",
                 "highgate-university", "westlake-institute", "stonebridge-university", "fairhaven-college")
_EDU_SCHOOL_HINT = re.compile(r"(?i)(k12|\bsch\b|school|high|elem|middle|academy|isd|district|\bps\d*\b|primary|secondary)")
_EDU_HINT = re.compile(r"(?i)(^|\.)(edu|ac|sch|k12)(\.|$)|school|academy|college|univ|uni-|campus")
_SUBDOMAIN_KEEP = frozenset({"www", "mail", "students", "student", "staff", "alumni", "my", "m", "faculty"})


def is_edu_domain(domain: str) -> bool:
    return bool(_EDU_HINT.search(domain))


def is_free_mail(domain: str) -> bool:
    return domain.casefold() in FREE_MAIL


#: Two-level public suffixes common enough to recognise (``acme.co.uk`` → main label "acme").
_SUFFIX2 = frozenset(
    "co.uk org.uk ac.uk gov.uk sch.uk me.uk com.au net.au org.au edu.au co.nz org.nz ac.nz com.br "
    "net.br org.br edu.br com.mx edu.mx com.ar co.za ac.za co.in ac.in edu.in co.jp ac.jp co.kr "
    "ac.kr com.cn edu.cn com.tr edu.tr com.sg edu.sg com.my edu.my com.pt com.es com.co edu.co".split()
)


def split_domain(domain: str) -> tuple[list[str], list[str], str]:
    """(kept subdomain labels, main labels, public suffix)."""
    labels = domain.split(".")
    if len(labels) >= 3 and ".".join(labels[-2:]).casefold() in _SUFFIX2:
        suffix = ".".join(labels[-2:])
        body = labels[:-2]
    elif len(labels) >= 2:
        suffix = labels[-1]
        body = labels[:-1]
    else:
        return [], labels, ""
    subs: list[str] = []
    while len(body) > 1 and body[0].casefold() in _SUBDOMAIN_KEEP:
        subs.append(body.pop(0))
    return subs, body, suffix


def edu_domain(domain: str, rng: KeyedRandom) -> str:
    subs, _, _ = split_domain(domain)
    names = _SCHOOLS if _EDU_SCHOOL_HINT.search(domain) else _UNIVERSITIES
    return ".".join([*subs, rng.choice(names), reserved_base(domain, "edu")])


_RESERVED_BASES = ("example.com", "example.org", "example.net", "example.edu")


def shares_reserved_base(original: str, new: str) -> bool:
    """Both end with the same reserved base (example.net → x.example.net would keep the original)."""
    o = original.casefold()
    return any((o == b or o.endswith("." + b)) and new.endswith(b) for b in _RESERVED_BASES)


def reserved_base(original: str, tld: str) -> str:
    """``example.<tld>``, or another reserved base when the original already is that one."""
    o = original.casefold()
    first = f"example.{tld}"
    for base in (first, *_RESERVED_BASES):
        if not (o == base or o.endswith("." + base)):
            return base
    return first  # pragma: no cover - a domain can't end with all of them


def generic_tld(suffix: str) -> str:
    s = suffix.casefold().split(".")[-1] if suffix else "com"
    return s if s in ("com", "org", "net") else "com"


# ---------------------------------------------------------------------------------------------
# URL helpers
# ---------------------------------------------------------------------------------------------

#: Platforms whose host is kept (the path holds the personal part).
PLATFORMS = frozenset(
    """
    github.com gitlab.com bitbucket.org facebook.com fb.com instagram.com twitter.com x.com
    linkedin.com youtube.com youtu.be tiktok.com reddit.com medium.com pinterest.com tumblr.com
    soundcloud.com twitch.tv vimeo.com flickr.com behance.net dribbble.com deviantart.com
    about.me linktr.ee substack.com wordpress.com blogspot.com wix.com weebly.com sites.google.com
    docs.google.com drive.google.com scratch.mit.edu replit.com codepen.io kaggle.com
    stackoverflow.com quora.com snapchat.com discord.gg discord.com t.me wa.me threads.net
    mastodon.social bsky.app patreon.com ko-fi.com spotify.com open.spotify.com steamcommunity.com
    goodreads.com strava.com duolingo.com khanacademy.org
    """.split()
)

#: Path segments kept verbatim (structure, not identity).
PATH_WORDS = frozenset(
    """
    in u user users profile profiles p channel c watch status posts post blog about home index
    index.html index.php portfolio photos videos repos tree main master blob wiki pub people members
    member id en www page pages gallery projects project s share shared view edit d file files
    folder folders drive document documents spreadsheets presentation forms studio embed playlist
    shorts reel reels stories story tag tags search results article articles news category
    comments comment add new account settings dashboard feed public private raw src docs doc
    """.split()
)


# ---------------------------------------------------------------------------------------------
# ADDRESS (Faker)
# ---------------------------------------------------------------------------------------------

_US_STATE = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|"
    "ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC|AA|AE|AP"
)
_LOCALE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b[A-Z]\d[A-Z] ?\d[A-Z]\d\b|\bCanada\b"), "en_CA"),
    (re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b|United Kingdom|\bUK\b|England|Scotland|Wales"), "en_GB"),
    (re.compile(rf"\b(?:{_US_STATE})\b,? \d{{5}}(?:-\d{{4}})?\b|\bUSA\b|United States"), "en_US"),
    (re.compile(r"\bAustralia\b|\b(?:NSW|VIC|QLD|TAS|ACT)\b"), "en_AU"),
    (re.compile(r"\bNew Zealand\b"), "en_NZ"),
    (re.compile(r"\bIreland\b"), "en_IE"),
    (re.compile(r"\bIndia\b"), "en_IN"),
    (re.compile(r"(?i)stra(ss|ß)e\b|\bstr\.|Germany|Deutschland"), "de_DE"),
    (re.compile(r"(?i)Austria|Österreich"), "de_AT"),
    (re.compile(r"(?i)Switzerland|Schweiz"), "de_CH"),
    (re.compile(r"(?i)\brue\b|\bboulevard\b|\ball[ée]e\b|France"), "fr_FR"),
    (re.compile(r"(?i)Belgi"), "nl_BE"),
    (re.compile(r"(?i)\bvia\b|\bviale\b|\bpiazza\b|Italy|Italia"), "it_IT"),
    (re.compile(r"(?i)\bcalle\b|\bavenida\b|\bplaza\b|Spain|España"), "es_ES"),
    (re.compile(r"(?i)Mexico|México"), "es_MX"),
    (re.compile(r"(?i)\brua\b|Brazil|Brasil"), "pt_BR"),
    (re.compile(r"(?i)Portugal"), "pt_PT"),
    (re.compile(r"(?i)straat\b|laan\b|Netherlands|Nederland"), "nl_NL"),
    (re.compile(r"(?i)gatan\b|vägen\b|Sweden|Sverige"), "sv_SE"),
    (re.compile(r"(?i)Norway|Norge|\bveien\b"), "no_NO"),
    (re.compile(r"(?i)Denmark|Danmark|\bvej\b"), "da_DK"),
    (re.compile(r"(?i)(tie|katu)\b|Finland|Suomi"), "fi_FI"),
    (re.compile(r"(?i)\butca\b|\btér\b|Hungary"), "hu_HU"),
    (re.compile(r"(?i)\bul\.|\bulica\b|Poland|Polska"), "pl_PL"),
    (re.compile(r"(?i)Czech"), "cs_CZ"),
)


def address_locale(value: str) -> str:
    for pat, loc in _LOCALE_RULES:
        if pat.search(value):
            return loc
    return "en_US"


_FAKERS: dict[str, object] = {}
#: Faker instances are shared and re-seeded per value: seeding and drawing must not interleave.
_FAKER_LOCK = threading.RLock()


def _faker(locale: str):
    f = _FAKERS.get(locale)
    if f is None:
        from faker import Faker

        try:
            f = Faker(locale)
        except AttributeError:  # pragma: no cover - locale missing in this Faker
            f = Faker("en_US")
        _FAKERS[locale] = f
    return f


def _one_line(s: str) -> str:
    return ", ".join(x.strip() for x in s.splitlines() if x.strip())


#: Words of an address that identify nothing ("Suite 377", "PO Box 12"): kept when alone with numbers.
UNIT_WORDS = frozenset(
    "suite ste apt apartment unit box po p o pob flat floor fl room rm no nr number bldg building "
    "lot space dept piso".split()
)


def gen_address(value: str, rng: KeyedRandom) -> tuple[str, str]:
    """An address in the shape of the original: the same parts in the same order (street line
    with its number before or after the street name, unit, city, state, postcode, country), in the
    locale the original looks like (street words, postcode format, country name). A country name
    is kept (it identifies no one); numbers keep their length. Lines are kept as they are: a
    one-line original gets a one-line surrogate (no newline is ever inserted into a chat turn)."""
    v = value.strip()
    alpha_tokens = [t for t in re.findall(r"[^\W\d_]+", v)]
    if all(_fold(t) in UNIT_WORDS for t in alpha_tokens) and any(c.isdigit() for c in v):
        # "33963", "Suite 377", "PO Box 12": keep the shape, new digits.
        out = "".join(rng.digit() if c.isdigit() else c for c in value)
        return out, ""
    locale = next((loc for pat, loc in _LOCALE_RULES if pat.search(v)), None)
    # the original's town, region and country (surrogate/labels/address.py): a real town of the same
    # region, a postcode of it, the country's street words
    from .labels.address import plan as address_plan

    ap = address_plan(v, rng)
    if ap.locale is not None and locale in (None, ap.locale):
        locale = ap.locale
    elif ap.where is not None and not ap.us_state:
        ap.where = None  # the text says another country than its town: the text decides
    locale = locale or "en_US"
    with _FAKER_LOCK:
        fake = _faker(locale)
        fake.seed_instance(rng.seed_int())
        if _MILITARY_ADDR.search(v):
            out = _one_line(fake.address()) if "\n" not in v else fake.address()
        else:
            street_done = False
            lines = []
            for line in v.split("\n"):
                parts = []
                for part in line.split(","):
                    new, was_street = _address_part(part, fake, rng, street_done, ap)
                    street_done = street_done or was_street
                    parts.append(new)
                lines.append(",".join(parts))
            out = "\n".join(lines)
    # keep surrounding whitespace of the span
    lead = value[: len(value) - len(value.lstrip())]
    trail = value[len(value.rstrip()) :]
    return lead + out + trail, ""


_MILITARY_ADDR = re.compile(r"(?i)\b(?:psc|cmr|usns|usnv|uscgc|uss)\b|\b[adf]po\s+a[aep]\b")
_COUNTRIES = re.compile(
    r"(?i)^(?:united kingdom|uk|great britain|england|scotland|wales|northern ireland|usa|u\.s\.a\.|us|"
    r"united states(?: of america)?|canada|australia|new zealand|ireland|india|germany|deutschland|austria|"
    r"österreich|switzerland|schweiz|suisse|france|belgium|belgique|belgië|italy|italia|spain|españa|mexico|"
    r"méxico|brazil|brasil|portugal|netherlands|nederland|sweden|sverige|norway|norge|denmark|danmark|finland|"
    r"suomi|hungary|magyarország|poland|polska|czech republic|czechia|česko|uruguay|argentina|chile|colombia|"
    r"peru|estonia|eesti|latvia|lithuania|greece|turkey|türkiye|japan|china|korea|south africa|nigeria|kenya)$"
)
_UNIT_TAIL = re.compile(
    r"(?i)(?:\s*\b(?:apt\.?|apartment|suite|ste\.?|unit|flat|fl\.?|floor|room|rm\.?|bldg\.?|building|piso|puerta|"
    r"etg\.?|étage|#)\s*#?[A-Za-z]?\d{1,5}[A-Za-z]?\b)+$"
)
_POSTCODE = re.compile(
    r"\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b|\b[A-Z]\d[A-Z] ?\d[A-Z]\d\b|\b\d{4,6}(?:-\d{4})?\b|\b\d{2}-\d{3}\b|\b\d{3} \d{2}\b"
)
_STATE_ABBR = re.compile(rf"\b(?:{_US_STATE})\b")
_STREET_WORDS = re.compile(
    r"(?i)\b(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|close|"
    r"crescent|square|highway|hwy|parkway|via|viale|piazza|corso|rue|avenida|calle|carrer|camino|paseo|plaza|rua|"
    r"travessa|ul|ulica|aleja)\b\.?|(?:stra(?:ss|ß)e|str\.|weg|gasse|straat|laan|gatan|vägen|vej|veien|katu|tie|utca)\b"
)


def _digits_like(s: str, rng: KeyedRandom) -> str:
    """New digits in place of the old ones (a leading digit stays non-zero)."""
    out = []
    for i, c in enumerate(s):
        if c.isdigit():
            d = rng.digit()
            if (i == 0 or not s[i - 1].isdigit()) and c != "0" and d == "0":
                d = str(1 + rng.below(9))
            out.append(d)
        else:
            out.append(c)
    return "".join(out)


def _fake_one(fake, what: str, fallback: str = "city") -> str:
    f = getattr(fake, what, None) or getattr(fake, fallback)
    return _one_line(str(f()))


def _address_part(part: str, fake, rng: KeyedRandom, street_done: bool, ap=None) -> tuple[str, bool]:
    """One comma-separated part of an address line → (surrogate part, was it the street line)."""
    core = part.strip()
    lead = part[: len(part) - len(part.lstrip())]
    trail = part[len(part.rstrip()) :]
    if not core:
        return part, False
    if ap is not None and ap.where is not None and not ap.town_done:
        # "8 church st ballarat": the street and the town without a comma between them
        m = re.search(r"(?i)\s(" + re.escape(ap.where[2]) + r")$", core)
        if m and _STREET_WORDS.search(core[: m.start()]):
            street, was = _address_part(core[: m.start()], fake, rng, street_done, None)
            ap.town_done = True
            return lead + street + " " + (ap.town(m.group(1)) or _fake_one(fake, "city")) + trail, was
    if _COUNTRIES.match(core):
        return part, False  # the country stays
    if any(c.isdigit() for c in core) and all(_fold(t) in UNIT_WORDS for t in re.findall(r"[^\W\d_]+", core)):
        return lead + _digits_like(core, rng) + trail, False  # "Suite 501", "P.O. Box 287"
    m = re.match(r"^(.*?[^\W\d_].*?)\s+(\d{4,6})$", core)
    if m and _COUNTRIES.match(m.group(1)):  # "Uruguay 64677"
        return lead + m.group(1) + " " + _digits_like(m.group(2), rng) + trail, False
    unit = _UNIT_TAIL.search(core)
    unit_text = ""
    if unit and unit.start() > 0:
        unit_text = unit.group()
        core = core[: unit.start()]
        unit_text = re.sub(r"\d+", lambda d: _digits_like(d.group(), rng), unit_text)
    has_digit = any(c.isdigit() for c in core)
    letters = re.sub(r"[\d\W_]+", "", core)
    town_here = ap is not None and ap.where is not None and _has_town(core, ap)
    is_street = not street_done and bool(letters) and not (town_here and not _STREET_WORDS.search(core)) and (
        bool(_STREET_WORDS.search(core)) or (has_digit and not _POSTCODE.fullmatch(core.strip())
                                             and not _postcode_city(core))
    )
    if is_street:
        lead_num = re.match(r"^(\d+[A-Za-z]?(?:[-/]\d+[A-Za-z]?)?)\s+", core)
        tail_num = re.search(r"\s+(\d+[A-Za-z]?(?:[-/]\d+[A-Za-z]?)?)\.?$", core)
        name = _fake_one(fake, "street_name", "street_address")
        name = re.sub(r"^\d+\s+|\s+\d+$", "", name)  # a street name, without a number of its own
        new = name
        if lead_num:
            new = _digits_like(lead_num.group(1), rng) + " " + new
        if tail_num and (not lead_num or tail_num.start() > lead_num.end()):
            new = new + " " + _digits_like(tail_num.group(1), rng)
        if core.islower():  # "8 church st" typed in lower case
            new = new.lower()
        return lead + new + unit_text + trail, True
    if unit_text and not letters:
        return lead + _digits_like(core, rng) + unit_text + trail, False
    # city / state / postcode: each piece in its place
    pieces: list[str] = []
    pos = 0
    city_done = False
    for mm in _LOCALITY_PIECE.finditer(core):
        pieces.append(core[pos : mm.start()])
        tok = mm.group()
        if ap is not None and _STATE_ABBR.fullmatch(tok) and (ap.us_state or ap.where is not None):
            pieces.append(tok)  # the state stays: the new town and ZIP code are of it
        elif _STATE_ABBR.fullmatch(tok) and hasattr(fake, "state_abbr"):
            pieces.append(str(fake.state_abbr()))
        elif any(c.isdigit() for c in tok):
            pc = ap.postcode(tok, fake) if ap is not None else None
            if pc is None:
                pc = _fake_one(fake, "postcode") if hasattr(fake, "postcode") else _digits_like(tok, rng)
            pieces.append(pc if any(c.isdigit() for c in pc) else _digits_like(tok, rng))
        elif ap is not None and ap.where is not None:
            if ap.is_town(tok):
                ap.town_seen = True
            if ap.is_town(tok) or not (city_done or ap.town_done):
                pieces.append(ap.town(tok) or _fake_one(fake, "city"))
                city_done = ap.town_done = True
            elif getattr(ap, "town_seen", False) or _COUNTRIES.match(tok):
                pieces.append(tok)  # a region or country after the town stays
            else:
                # a place word before the town (a locality: "Koramangala, Bengaluru") is replaced:
                # it may be the most identifying part of the address
                pieces.append(ap.town(tok) or _fake_one(fake, "city"))
        elif not city_done:
            pieces.append(_fake_one(fake, "city"))
            city_done = True
        else:
            pieces.append(_fake_one(fake, "city"))
        pos = mm.end()
    pieces.append(_digits_like(core[pos:], rng))
    return lead + "".join(pieces) + unit_text + trail, False


_WORD_ONLY = r"[^\W\d_](?:[^\W\d_]|['’.()-])*(?!\w)"
_LOCALITY_PIECE = re.compile(rf"{_POSTCODE.pattern}|{_STATE_ABBR.pattern}|{_WORD_ONLY}(?:[ \t]+{_WORD_ONLY})*")


def _has_town(core: str, ap) -> bool:
    """Does this address part end with the original's town ("ballarat", "8020 Graz")?"""
    return fold_words(core).endswith(fold_words(ap.where[2]))


def fold_words(s: str) -> str:
    return " ".join(_fold(w) for w in re.findall(r"[^\W\d_]+", s))


def _postcode_city(core: str) -> bool:
    """"10789 Berlin", "London NW1 6XE", "IL 62704": a locality with its postcode, not a street."""
    rest = _POSTCODE.sub("", core)
    rest = _STATE_ABBR.sub("", rest)
    return bool(_POSTCODE.search(core)) and not any(c.isdigit() for c in rest)


def gen_location(value: str, rng: KeyedRandom) -> tuple[str, str]:
    with _FAKER_LOCK:
        fake = _faker("en_US")
        fake.seed_instance(rng.seed_int())
        return fake.city(), ""


def gen_org(value: str, rng: KeyedRandom) -> tuple[str, str]:
    with _FAKER_LOCK:
        fake = _faker("en_US")
        fake.seed_instance(rng.seed_int())
        return fake.company(), ""


@lru_cache(maxsize=1)
def faker_version() -> str:
    try:
        from importlib.metadata import version

        return version("faker")
    except Exception:  # pragma: no cover
        return "?"
