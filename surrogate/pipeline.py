"""The pipeline with the surrogate replacer: what the worker, ``redact`` and ``eval`` run.

The core pipeline (``middleware/pipeline.py``) takes its replacer as an argument and never
imports this package; this is where the two meet (above the core, below the transport).
"""

from __future__ import annotations

from typing import Any

from plainsight.middleware.config import Settings
from plainsight.middleware.pipeline import Pipeline

from .replacer import SurrogateReplacer


def build_replacer(settings: Settings) -> SurrogateReplacer:
    """The surrogate replacer (it also serves the ``tag`` and ``redact`` modes)."""
    return SurrogateReplacer.from_settings(settings)


def build_pipeline(settings: Settings | None = None, **kw: Any) -> Pipeline:
    """``Pipeline(settings, replacer=SurrogateReplacer.from_settings(settings), **kw)``; ``kw`` may
    also pass ``detector``, ``llm`` or another ``replacer``."""
    settings = settings or Settings()
    if kw.get("replacer") is None:
        kw["replacer"] = SurrogateReplacer.from_settings(settings)
    return Pipeline(settings, **kw)
