"""The documented public API of plainsight, importable from stable paths.

* settings: :class:`Settings`, :func:`load_settings`;
* message schemas: :class:`InputTurn`, :class:`OutputTurn`, :class:`EntityOut`, :class:`DeadLetter`;
* the recognizer contract for new PII types: :class:`Recognizer` (see the README's *Adding a PII type*).

Everything not re-exported here (or from :mod:`plainsight`) is internal.
"""

from __future__ import annotations

from plainsight.middleware.config import Settings, load_settings
from plainsight.middleware.detection.recognizer import Recognizer
from plainsight.middleware.schemas import DeadLetter, EntityOut, InputTurn, OutputTurn

__all__ = ["DeadLetter", "EntityOut", "InputTurn", "OutputTurn", "Recognizer", "Settings", "load_settings"]
