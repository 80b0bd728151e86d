"""Parsing of PII values, shared by detection and surrogates: a phone number's parts, a URL's
parts and its identity, the Luhn checksum, the titles that precede a name.

Core (no dependency on ``surrogate``): the session value memory
(``detection/value_memory.py``) and the pattern recognizers use these, and the surrogate
generators (``surrogate/generators.py``) build on them.
"""

from __future__ import annotations

import re
import unicodedata

# ---------------------------------------------------------------------------------------------
# PHONE
# ---------------------------------------------------------------------------------------------

_EXT = re.compile(r"(?i)\s*(?:x|ext\.?|extension|#)\s*(\d{1,6})\s*$")


class PhoneParts:
    __slots__ = ("main", "ext_text", "cc", "intl", "trunk", "nsn", "ext")

    def __init__(self) -> None:
        self.main = ""
        self.ext_text = ""
        self.cc = ""  # country code digits (kept)
        self.intl = ""  # "00"/"011" international prefix digits (kept)
        self.trunk = ""  # "0" or NANP "1" (kept)
        self.nsn = ""  # national significant number (replaced)
        self.ext = ""  # extension digits (replaced)


_CC3 = ("1", "7", "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46",
        "47", "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65",
        "66", "81", "82", "84", "86", "90", "91", "92", "93", "94", "95", "98")


def _split_cc(digits: str, layout_first_group: str) -> str:
    """Country code at the start of ``digits`` (after "+" or "00")."""
    if digits.startswith("1"):
        return "1"
    g = layout_first_group
    if 1 <= len(g) <= 3 and digits.startswith(g) and len(digits) - len(g) >= 4:
        return g
    for n in (2, 1):
        if digits[:n] in _CC3:
            return digits[:n]
    return digits[:3]


_DIGIT_WORD = {"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
               "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_DIGIT_WORD_RX = re.compile(r"(?i)(?<![^\W\d_])(?:zero|oh|o|one|two|three|four|five|six|seven|eight|nine)(?![^\W\d_])")


def spelled_layout(value: str) -> str | None:
    """A phone number written in words ("six one seven, five five five, ...") as the same layout
    with one digit per word ("6 1 7, 5 5 5, ..."); None when the value holds digits or no words."""
    if any(c.isdigit() for c in value):
        return None
    words = list(_DIGIT_WORD_RX.finditer(value))
    if len(words) < 3:
        return None
    return _DIGIT_WORD_RX.sub(lambda m: _DIGIT_WORD[m.group().casefold()], value)


def parse_phone(value: str) -> PhoneParts:
    value = spelled_layout(value) or value
    p = PhoneParts()
    m = _EXT.search(value)
    if m and len([c for c in value[: m.start()] if c.isdigit()]) >= 6:
        p.main, p.ext_text, p.ext = value[: m.start()], value[m.start() :], m.group(1)
    else:
        p.main = value
    digits = "".join(c for c in p.main if c.isdigit())
    s = p.main.lstrip()
    groups = re.findall(r"\d+", p.main)
    first_group = groups[0] if groups else ""
    if s.startswith("+") or digits.startswith("00") and len(digits) > 10 or digits.startswith("011") and len(digits) > 11:
        rest = digits
        if not s.startswith("+"):
            p.intl = "011" if digits.startswith("011") else "00"
            rest = digits[len(p.intl) :]
            first_group = first_group[len(p.intl) :] or (groups[1] if len(groups) > 1 else "")
        p.cc = _split_cc(rest, first_group)
        rest = rest[len(p.cc) :]
        if "(0)" in p.main.replace(" ", "") and rest.startswith("0"):
            p.trunk, rest = "0", rest[1:]
        p.nsn = rest
    elif len(digits) == 11 and digits.startswith("1"):
        p.trunk, p.nsn = "1", digits[1:]
    elif digits.startswith("0") and len(digits) >= 8:
        p.trunk, p.nsn = "0", digits[1:]
    else:
        p.nsn = digits
    return p


# ---------------------------------------------------------------------------------------------
# URL
# ---------------------------------------------------------------------------------------------

_URL = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)?(?P<www>www\d?\.)?(?P<host>[^/?#\s:]+)(?P<port>:\d+)?"
    r"(?P<path>/[^?#]*)?(?P<query>\?[^#]*)?(?P<frag>#.*)?$"
)


def split_url(value: str) -> dict[str, str] | None:
    m = _URL.match(value.strip())
    if not m or "." not in (m.group("host") or ""):
        return None
    return {k: v or "" for k, v in m.groupdict().items()}


def url_core(value: str) -> str:
    """The URL without scheme, ``www.`` and trailing slash (its identity)."""
    parts = split_url(value)
    if parts is None:
        return value.strip().rstrip("/")
    core = parts["host"] + parts["port"] + parts["path"] + parts["query"] + parts["frag"]
    return core.rstrip("/")



def luhn_ok(digits: str) -> bool:
    """Luhn checksum (payment cards, some IDs) of a string of digits (any script)."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = unicodedata.digit(c)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# ---------------------------------------------------------------------------------------------
# NAME: titles before a name (one definition for the name finder and the surrogate replacer)
# ---------------------------------------------------------------------------------------------
# Case-folded, without the abbreviation's dot ("Dr." -> "dr").

#: Courtesy titles before a surname, English and French ("Mr Lopez", "Ms. Chen", "Mme Dubois").
COURTESY_TITLES = frozenset("mr mrs ms miss mx mister madam madame mme mlle".split())
#: Courtesy titles before a surname, German and Spanish ("Herr Braun", "Frau Weber", "Sra. Ruiz").
COURTESY_TITLES_DE_ES = frozenset("herr frau sr sra srta".split())
#: Academic and medical titles before a surname ("Dr Chen", "Prof. Okafor", "Doctor Reyes").
ACADEMIC_TITLES = frozenset("dr doctor prof professor".split())
#: Honorifics of rank before a first or full name ("Sir Ian", "Dame Judi", "Lady Ada").
RANK_HONORIFICS = frozenset("sir dame lady lord".split())
#: Role titles used as a form of address ("Coach Maria", "Captain Lee", "Rev. Okoye", "Teacher Ana").
ROLE_TITLES = frozenset("coach teacher captain capt rev".split())
#: Kinship titles ("Aunt Rosa", "Uncle Bob", "Grandma Jo", "Brother Tom").
KINSHIP_TITLES = frozenset("aunt auntie uncle grandma grandpa nana brother sister father mother".split())

#: Titles after which a capitalised word is taken for a person's name by the name finder
#: ("Mr Lopez", "Dr. Chen", "Coach Dario"). The other honorifics, role and kinship titles are
#: common words too ("lady", "captain", "brother") and the German/Spanish ones are not read there.
NAME_TITLES = COURTESY_TITLES | ACADEMIC_TITLES | frozenset({"sir", "coach"})
#: Titles after which a lone name is a surname, for the surrogate replacer ("Mr. Lopez" -> "Mr. Garcia",
#: not a first name). The spelled-out "doctor" and "madame" are not among them (as before #14:
#: outputs kept byte-identical; whether they should be is a behaviour decision of its own).
SURNAME_TITLES = (COURTESY_TITLES | COURTESY_TITLES_DE_ES | ACADEMIC_TITLES) - frozenset({"doctor", "madame"})
#: Every title the surrogate replacer keeps verbatim in front of a name inside a NAME span.
ALL_TITLES = SURNAME_TITLES | RANK_HONORIFICS | ROLE_TITLES | KINSHIP_TITLES
