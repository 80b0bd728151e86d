"""Phone digits written as words ("five five five, one two three four ...")."""

from __future__ import annotations

import re

from ..base import Span, TurnContext
from ..recognizer import Recognizer
from ._text import _DIGIT_WORDS
from .phone import _is_progression, _phone_context

_SPELLED_DIGITS = re.compile(
    r"(?<![\w-])(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)(?:[\s,-]+|$)){7,15}",
    re.IGNORECASE,
)


class SpelledPhoneRecognizer(Recognizer):
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
