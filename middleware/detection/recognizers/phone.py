"""Phone numbers in national and international formats; never maths (decimals, ranges, dates,
times, money, counting sequences, lists)."""

from __future__ import annotations

import re

from ..base import Span, TurnContext, count_digits
from ..recognizer import Recognizer
from ._text import _after, _before

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
#: Digits typed one by one with a space between ("6 1 7 5 5 5 0 1 9 8").
_SINGLE_DIGITS = re.compile(r"(?<![\w.,+-])(?:\+ ?)?\d(?: \d){6,14}(?![\w]|[.,]\d)")
#: A list of numbers to work on, not a number to call ("the median of 3 5 2 7 8 1 4 9 6 0").
_NUMBER_LIST = re.compile(r"\b(?:median|mean|mode|average|range|sort|order|list|data|set|sequence|numbers|digits|"
                          r"values|sum|add|total|count|pattern)\b", re.IGNORECASE)
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


class PhoneRecognizer(Recognizer):
    """Phone numbers in national and international formats (spaces, dots, dashes, parentheses,
    ``+``/``00`` country codes, ``(0)``, extensions); never maths (see the module docstring)."""

    name = "phone"
    labels = ("PHONE",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if count_digits(text) < 7:
            return []
        out = []
        if re.search(r"\d \d \d", text):
            for m in _SINGLE_DIGITS.finditer(text):
                span = self._single_digits(text, m.start(), m.end(), m.group())
                if span is not None:
                    out.append(span)
        for m in _PHONE_CAND.finditer(text):
            if any(s.start < m.end() and m.start() < s.end for s in out):
                continue
            span = self._check(text, m.start(), m.end(), m.group())
            if span is not None:
                out.append(span)
        return out

    @staticmethod
    def _single_digits(text: str, start: int, end: int, s: str) -> Span | None:
        """A number typed digit by digit: after a phone word, or ten or eleven digits that are no
        counting sequence, in a turn that works on no list of numbers."""
        digits = [int(c) for c in s if c.isdigit()]
        if _phone_context(text, start, end):
            return Span(start, end, "PHONE", "phone", 0.9)
        if len(digits) not in (10, 11) and not s.startswith("+"):
            return None
        if _is_progression(digits) or len(set(digits)) <= 2 or _NUMBER_LIST.search(text):
            return None
        return Span(start, end, "PHONE", "phone", 0.8)

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
