"""ID numbers: payment cards (Luhn), IBANs (mod 97), SSN-shaped numbers, and codes introduced as
an ID ("my student id is 20231487")."""

from __future__ import annotations

import re

from ..base import Span, TurnContext, has_digit
from ..recognizer import Recognizer
from ._text import iban_ok, luhn_ok

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
    # words that are an ID on their own ("passport: X1234567", "my licence number is ...");
    # the lookahead holds every first letter of the words: the same matches, found ~1.7x faster
    r"(?=[abcdeilmnoprstuv])(?:\b(?:passport|licen[cs]e|driver'?s\s+licen[cs]e|driving\s+licen[cs]e|ssn|social\s+security|nhs|medicare|medicaid|"
    r"matriculation|matric|national\s+insurance|tax\s+id|itin|employee\s+id|badge|roll)(?:\s+" + _ID_NOUN + r")?"
    # words that need an ID noun ("student id", "login number", "account #")
    r"|\b(?:student|school|pupil|learner|login|log-in|user|member|membership|library|employee|staff|account|acct|"
    r"customer|patient|exam|candidate|applicant|application|registration|enrol?lment|reference|ref|ticket|order|"
    r"confirmation|policy|insurance|national|permit|visa|bank\s+account|routing|identity|id)\s+" + _ID_NOUN +
    r"|\bID\b|\bid(?=\s*[:#=])"
    r")\s*(?:is|was|:|=|#|-)?\s*(?:(?:it's|its)\s+)?[\"'“‘]?",
    re.IGNORECASE,
)
#: Codes that may be a sibling of an ID found by its cue ("... and my friend's is S-2024-22222").
ID_CANDIDATE = re.compile(r"(?<![\w.-])[A-Za-z0-9]+(?:[-./][A-Za-z0-9]+){0,4}(?![\w]|[.-]\w)")


def id_shape(code: str) -> str:
    """The shape of a code: each letter A, each digit 9, separators as typed ("S-2024-11111" ->
    "A-9999-99999")."""
    return "".join("9" if c.isdigit() else "A" if c.isalpha() else c for c in code)


_ID_TOKEN = re.compile(r"(?=[A-Za-z0-9-]*\d)[A-Za-z0-9](?:[A-Za-z0-9-]{2,22}[A-Za-z0-9])(?![\w])")


class IdNumberRecognizer(Recognizer):
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
        if out:
            self._siblings(text, out, add)
        return out

    @staticmethod
    def _siblings(text: str, found: list[Span], add) -> None:
        """A code of the same shape as an ID of this turn is an ID too, cue or not ("my student id
        is S-2024-11111 and my friend's is S-2024-22222"): at least five digits, or letters and
        digits, and six characters."""
        shapes = set()
        for s in found:
            code = text[s.start : s.end]
            if len(code) >= 6 and (sum(c.isdigit() for c in code) >= 5 or (any(c.isalpha() for c in code)
                                                                           and any(c.isdigit() for c in code))):
                shapes.add(id_shape(code))
        if not shapes:
            return
        for m in ID_CANDIDATE.finditer(text):
            if id_shape(m.group()) in shapes:
                add(m.start(), m.end(), 0.9)
