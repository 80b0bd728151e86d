"""Offline guards for libraries that like to fetch things at run time."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def offline_tldextract():
    """A TLDExtract that never touches the network: the public suffix list snapshot bundled
    with tldextract, no cache directory, no suffix-list URLs."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


class _OfflineTldModule:
    """Stands in for the ``tldextract`` module inside Presidio's email recognizer."""

    @staticmethod
    def extract(url: str, *args, **kwargs):
        return offline_tldextract()(url)


def patch_presidio_offline() -> None:
    """Route Presidio's tldextract use through the offline extractor."""
    from presidio_analyzer.predefined_recognizers.generic import email_recognizer

    email_recognizer.tldextract = _OfflineTldModule()
