"""The built-in pattern recognizers, one per module, each a
:class:`~middleware.detection.recognizer.Recognizer` with one job (Presidio style).

Scores say how sure a recognizer is (the cascade resolves overlaps by score, then length):
identifiers with a checksum or a keyword in context score >= 0.95, a shape alone 0.75-0.85.

The recognizers are written for tutoring chat, where most digits are maths: a phone needs
either a phone-only shape (``+country``, ``(area)``, ``555-123-4567``, an extension) or a
phone word nearby ("call me", "my cell", "Fax:"), and shapes that maths produces — decimals,
ranges, dates, times, money, counting sequences, lists — are rejected.
Span boundaries follow the usual annotation convention: the value only, no label words
("Phone:"), no trailing punctuation, a URL with its trailing slash.

:data:`BUILTIN` lists them in fast-pass order; the registry (``middleware/detection/registry.py``)
builds the fast pass from it and from configuration.
"""

from __future__ import annotations

from ._text import iban_ok, luhn_ok
from .address import AddressRecognizer
from .email import EmailRecognizer
from .email_obfuscated import ObfuscatedEmailRecognizer
from .id_num import IdNumberRecognizer
from .phone import PhoneRecognizer
from .phone_spelled import SpelledPhoneRecognizer
from .url import UrlRecognizer
from .username import UsernameRecognizer

#: The built-in pattern recognizers, in fast-pass order.
BUILTIN = (
    EmailRecognizer,
    ObfuscatedEmailRecognizer,
    PhoneRecognizer,
    SpelledPhoneRecognizer,
    UrlRecognizer,
    UsernameRecognizer,
    IdNumberRecognizer,
    AddressRecognizer,
)

__all__ = [
    "BUILTIN", "AddressRecognizer", "EmailRecognizer", "ObfuscatedEmailRecognizer", "IdNumberRecognizer",
    "PhoneRecognizer", "SpelledPhoneRecognizer", "UrlRecognizer", "UsernameRecognizer", "iban_ok", "luhn_ok",
]
