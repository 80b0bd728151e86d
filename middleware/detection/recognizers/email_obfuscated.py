"""E-mail addresses typed to dodge filters: spelled-out "at"/"dot", brackets, spaced letters."""

from __future__ import annotations

import re

from ..base import Span, TurnContext
from ..recognizer import Recognizer
from ._text import _split_host
from .email import _EMAIL

_AT = r"(?:\s*[\[\(\{<]\s*at\s*[\]\)\}>]\s*|\s+at\s+|\s+@\s+|\s*@\s*)"
_DOT = r"(?:\s*[\[\(\{<]\s*dot\s*[\]\)\}>]\s*|\s+dot\s+| ?\. ?)"
_LOCAL_SEP = r"(?:\s*[\[\(\{<]\s*dot\s*[\]\)\}>]\s*|\s+dot\s+|\s+underscore\s+|\s+dash\s+| [._-] |[._-])"
_OBF_EMAIL = re.compile(
    rf"(?<![\w.@-])(?P<local>[A-Za-z0-9][A-Za-z0-9+]*(?:{_LOCAL_SEP}[A-Za-z0-9+]+)*)"
    rf"(?P<at>{_AT})"
    rf"(?P<domain>[A-Za-z0-9][A-Za-z0-9-]*(?:{_DOT}[A-Za-z0-9][A-Za-z0-9-]*)*{_DOT}[A-Za-z]{{2,12}})\b",
    re.IGNORECASE,
)
# A mail provider without its suffix: "sam dot k at yahoo", "maria_l at gmail"
_PROVIDER_ONLY = re.compile(
    rf"(?<![\w.@-])(?P<local>[A-Za-z0-9][A-Za-z0-9+]*(?:{_LOCAL_SEP}[A-Za-z0-9+]+)*)"
    r"(?P<at>\s*[\[\(\{<]\s*at\s*[\]\)\}>]\s*|\s+at\s+|\s*@\s*)"
    r"(?P<domain>gmail|googlemail|yahoo|ymail|hotmail|outlook|icloud|aol|protonmail|proton|gmx)\b(?!\s*(?:\.|dot\b)\s*\w)",
    re.IGNORECASE,
)
_PROVIDER_WORDS = ("gmail", "yahoo", "ymail", "hotmail", "outlook", "icloud", "aol", "proton", "gmx")
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


class ObfuscatedEmailRecognizer(Recognizer):
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
        for m in _PROVIDER_ONLY.finditer(text) if any(p in low for p in _PROVIDER_WORDS) else ():
            if any(s.start < m.end() and m.start() < s.end for s in out):
                continue
            local_raw = m.group("local")
            # a spelled or typed separator, or a digit, in the local part: an address, not "I'm at yahoo"
            if not (re.search(r"\bdot\b|\bunderscore\b|[._\d]", local_raw, re.I) or "@" in m.group("at")):
                continue
            if local_raw.casefold() in _NOT_LOCAL:
                continue
            out.append(Span(m.start(), m.end(), "EMAIL", self.name, 0.9))
        return out
