"""``--llm-*`` flags for the CLI commands (serve, demo, redact, eval). Imports argparse only.

Usage in a command module::

    from plainsight.middleware.llm.cli_args import add_llm_arguments, llm_overrides

    def add_arguments(p):
        ...
        add_llm_arguments(p)

    def run(args):
        settings = load_settings(args.config, **llm_overrides(args), ...)
"""

from __future__ import annotations

import argparse
from typing import Any


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("LLM stage (optional; off unless an endpoint or model is given)")
    g.add_argument("--llm-base-url", default=None, metavar="URL",
                   help="OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1); turns the LLM stage on")
    g.add_argument("--llm-model", default=None, metavar="NAME", help="model name (default gpt-4o-mini); turns the LLM stage on")
    g.add_argument("--llm-mode", default=None, choices=["marking", "json"], help="marking (special identifiers) or json (structured output)")
    g.add_argument("--llm-policy", default=None, choices=["wait", "async-refine"],
                   help="wait: the turn waits for the model within the latency budget; async-refine: fast result now, refined logs later")
    g.add_argument("--llm-gate", default=None, choices=["uncertain", "all", "never"], help="which turns go to the model")
    g.add_argument("--llm-verifier", default=None, choices=["off", "uncertain", "all"], help="T/F verifier on candidates")
    g.add_argument("--llm-budget-ms", type=int, default=None, metavar="MS", help="latency budget per turn for policy wait")
    g.add_argument("--no-llm", action="store_true", default=False, help="turn the LLM stage off even if configured")


def llm_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``{"llm": {...}}`` for ``load_settings(**...)``; empty when no flag was given."""
    llm: dict[str, Any] = {}
    base_url = getattr(args, "llm_base_url", None)
    model = getattr(args, "llm_model", None)
    if base_url:
        llm["base_url"] = base_url
    if model:
        llm["model"] = model
    if base_url or model:
        llm["enabled"] = True
    for flag, key in (("llm_mode", "mode"), ("llm_policy", "policy"), ("llm_gate", "gate"),
                      ("llm_verifier", "verifier"), ("llm_budget_ms", "latency_budget_ms")):
        v = getattr(args, flag, None)
        if v is not None:
            llm[key] = v
    if getattr(args, "no_llm", False):
        llm["enabled"] = False
    return {"llm": llm} if llm else {}
