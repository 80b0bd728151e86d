"""A local OpenAI-compatible HTTP server for the LLM-stage tests (real HTTP on 127.0.0.1, a
free port, the real ``openai`` client pointed at it through ``base_url``).

The server itself is :class:`benchmarks.llm_simulator.FakeOpenAI` (shipped, so the benchmark
and offline demos can use it too); this module adds the fixtures, echo alterations and a
stage factory with short, test-friendly timings.

Import the fixtures into a test module with ``from tests.fake_openai import fake_llm``.
"""

from __future__ import annotations

import re

import pytest

from plainsight.middleware.config import LLMSettings
from plainsight.middleware.llm import LLMStage
from plainsight.benchmarks.llm_simulator import FakeOpenAI, Reply, closed_port_url

__all__ = ["FakeOpenAI", "Reply", "closed_port_url", "fake_llm", "make_stage", "fast_settings", "ALTER"]


@pytest.fixture
def fake_llm():
    srv = FakeOpenAI().start()
    try:
        yield srv
    finally:
        srv.stop()


def fast_settings(base_url: str, **over) -> LLMSettings:
    """LLM settings with short timeouts/backoffs so failure tests stay fast."""
    base = dict(
        base_url=base_url,
        timeout_s=2.0,
        latency_budget_ms=3000,
        async_budget_ms=3000,
        max_retries=3,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        context_turns=3,
    )
    base.update(over)
    return LLMSettings(**base)


def make_stage(base_url: str, labels=None, **over) -> LLMStage:
    kw = {"labels": labels} if labels else {}
    return LLMStage(fast_settings(base_url, **over), **kw)


# Ways a model mangles its echo (applied to the marked answer).
ALTER = {
    "verbatim": lambda a: a,
    "collapse_whitespace": lambda a: " ".join(a.split()),
    "preface_and_quotes": lambda a: 'Sure! Here is the labelled text:\n"' + a + '"',
    "code_fence": lambda a: "```\n" + a + "\n```",
    "curly_quotes": lambda a: a.replace("'", "’"),
    "drop_filler_word": lambda a: re.sub(r"\breally\s+", "", a, count=1),
    "add_word": lambda a: a.replace("help", "help me", 1),
    "punctuation": lambda a: a.replace(",", "", 1).rstrip(".") + "!",
    "capitalise_first": lambda a: a[:1].upper() + a[1:],
    "spaces_around_markers": lambda a: a.replace("@@@", "@@@ ").replace("###", " ###"),
}
