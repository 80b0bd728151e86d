"""Helpers shared by the built-in pattern recognizers (context windows, checksums, host names)."""

from __future__ import annotations

import re

from ...values import luhn_ok  # noqa: F401  (one definition, re-exported)

_DIGIT_WORDS = {
    "zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip


def _before(text: str, start: int, width: int = 48) -> str:
    return text[max(0, start - width) : start].casefold()


def _after(text: str, end: int, width: int = 16) -> str:
    return text[end : end + width].casefold()


def iban_ok(code: str) -> bool:
    """ISO 13616 mod-97 check of an IBAN (spaces ignored, any case)."""
    s = code.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", s):
        return False
    rearranged = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _tld():
    from ...offline import offline_tldextract

    return offline_tldextract()


def _split_host(host: str) -> tuple[str, str, str]:
    """(subdomain, registered domain, public suffix), lower-cased; '' suffix if not a public one."""
    r = _tld()(host)
    suffix = r.suffix.lower()
    reg = f"{r.domain}.{r.suffix}".lower() if r.domain and r.suffix else ""
    return r.subdomain.lower(), reg, suffix
