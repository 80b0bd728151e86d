"""Street addresses: see ``middleware/detection/recognizers/address.py``."""

from __future__ import annotations

from .recognizers.address import AddressRecognizer  # noqa: F401
