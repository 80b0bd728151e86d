"""E-mail addresses (the domain must end in a public suffix)."""

from __future__ import annotations

import re

from ..base import Span, TurnContext
from ..recognizer import Recognizer
from ._text import _split_host

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+'-]{0,63}[A-Za-z0-9_%+-])?"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b"
)


class EmailRecognizer(Recognizer):
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
