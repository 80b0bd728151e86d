"""The built-in pattern recognizers (kept importable from here; each lives in its own module of
``middleware/detection/recognizers/``)."""

from __future__ import annotations

from .recognizers import (  # noqa: F401
    BUILTIN,
    AddressRecognizer,
    EmailRecognizer,
    IdNumberRecognizer,
    ObfuscatedEmailRecognizer,
    PhoneRecognizer,
    SpelledPhoneRecognizer,
    UrlRecognizer,
    UsernameRecognizer,
    iban_ok,
    luhn_ok,
)


def default_pattern_recognizers() -> list:
    """One instance of every built-in pattern recognizer, in fast-pass order."""
    return [cls() for cls in BUILTIN]
