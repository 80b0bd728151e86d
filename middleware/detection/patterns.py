"""Pattern recognizers: small classes with one job each (emails, phones, URLs)."""

from __future__ import annotations

import re

from .base import Span, TurnContext

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){1,4}(?![\w])"
)
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)


class EmailRecognizer:
    name = "email"
    labels = ("EMAIL",)

    def analyze(self, text: str, ctx: TurnContext) -> list[Span]:
        if "@" not in text:
            return []
        return [Span(m.start(), m.end(), "EMAIL", self.name, 1.0) for m in _EMAIL.finditer(text)]


class PhoneRecognizer:
    name = "phone"
    labels = ("PHONE",)

    def analyze(self, text: str, ctx: TurnContext) -> list[Span]:
        out = []
        for m in _PHONE.finditer(text):
            digits = sum(ch.isdigit() for ch in m.group())
            if 7 <= digits <= 15 and not re.fullmatch(r"\d+(\.\d+)?", m.group()):
                out.append(Span(m.start(), m.end(), "PHONE", self.name, 0.8))
        return out


class UrlRecognizer:
    name = "url"
    labels = ("URL",)

    def analyze(self, text: str, ctx: TurnContext) -> list[Span]:
        out = []
        for m in _URL.finditer(text):
            end = m.end()
            while end > m.start() and text[end - 1] in ".,;:!?)]}":
                end -= 1
            if end > m.start():
                out.append(Span(m.start(), end, "URL", self.name, 0.7))
        return out
