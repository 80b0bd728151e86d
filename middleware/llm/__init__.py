"""The optional LLM stage: an OpenAI-compatible model marks PII in a turn, with sliding
de-identified context, a verifier, throttling, cost accounting and fail-closed behaviour.

Entry points: :class:`LLMStage` (``from_settings``, ``refine``), :class:`LLMOutcome`,
:class:`LLMStats`; CLI flags in :mod:`middleware.llm.cli_args`; a local simulated model in
:mod:`benchmarks.llm_simulator`; a benchmark in :mod:`benchmarks.llm` (the ``bench`` extra).
"""

from .stage import LLMOutcome, LLMStage, union_merge
from .stats import LLMStats

__all__ = ["LLMOutcome", "LLMStage", "LLMStats", "union_merge"]
