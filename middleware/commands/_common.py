"""Arguments and helpers shared by the commands."""

from __future__ import annotations

import argparse
from typing import Any

from plainsight.middleware.evaluation import percentile  # noqa: F401  (re-exported: one definition, nearest rank)


def add_config_arguments(p: argparse.ArgumentParser, kafka: bool = True, llm: bool = True) -> None:
    p.add_argument("--config", metavar="FILE", help="YAML configuration file (see configs/default.yaml)")
    if kafka:
        p.add_argument(
            "--bootstrap-servers",
            metavar="HOST:PORT",
            help="Kafka to use (default: configuration, else an embedded broker on loopback)",
        )
        p.add_argument("--group-id", help="consumer group id")
        p.add_argument("--partitions", type=int, help="partitions for topics plainsight creates")
    p.add_argument("--engine", choices=["cascade", "presidio"], help="detection engine")
    p.add_argument("--mode", choices=["surrogate", "tag", "redact"], help="output mode for both output topics")
    if llm:
        from plainsight.middleware.llm.cli_args import add_llm_arguments

        add_llm_arguments(p)


def overrides_from_args(args: argparse.Namespace) -> dict[str, Any]:
    ov: dict[str, Any] = {
        "kafka": {
            "bootstrap_servers": getattr(args, "bootstrap_servers", None),
            "group_id": getattr(args, "group_id", None),
            "partitions": getattr(args, "partitions", None),
        },
        "detection": {"engine": getattr(args, "engine", None)},
        "output": {"deid_mode": getattr(args, "mode", None), "logs_mode": getattr(args, "mode", None)},
    }
    for hook in _OVERRIDE_HOOKS:
        _merge(ov, hook(args))
    return ov


def _merge(a: dict[str, Any], b: dict[str, Any]) -> None:
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            _merge(a[k], v)
        else:
            a[k] = v


def add_secret_arguments(p: argparse.ArgumentParser, keys: bool = True, insecure: bool = False) -> None:
    """``--secret-file`` (and ``--keys-file``, ``--insecure-dev-keys``): secrets come from files or
    the environment, never from a value on the command line (it would show in ``ps``)."""
    g = p.add_argument_group("secrets (files or PLAINSIGHT_SURROGATE__* variables; never values on the command line)")
    g.add_argument("--secret-file", metavar="FILE",
                   help="file holding the surrogate secret (as PLAINSIGHT_SURROGATE__SECRET_FILE)")
    if keys:
        g.add_argument("--keys-file", metavar="FILE",
                       help="YAML/JSON file with the state keys (as PLAINSIGHT_SURROGATE__KEYS_FILE)")
    if insecure:
        g.add_argument("--insecure-dev-keys", action="store_true", default=False,
                       help="run with the PUBLIC development secret and state key when none is configured "
                            "(local experiments only; reported by /readyz and plainsight_insecure_dev_keys)")


def _secrets_hook(args: argparse.Namespace) -> dict[str, Any]:
    sec: dict[str, Any] = {"keys_file": getattr(args, "keys_file", None)}
    if getattr(args, "secret_file", None):
        # the flag beats a secret from the environment or the config file ("" = unset)
        sec.update(secret_file=args.secret_file, secret="")
    return {"surrogate": sec}


def _llm_hook(args: argparse.Namespace) -> dict[str, Any]:
    from plainsight.middleware.llm.cli_args import llm_overrides

    return llm_overrides(args)


#: Functions (args) -> overrides dict contributed by optional features.
_OVERRIDE_HOOKS: list = [_llm_hook, _secrets_hook]


def settings_from_args(args: argparse.Namespace, **extra: Any):
    from plainsight.middleware.config import load_settings

    ov = overrides_from_args(args)
    _merge(ov, extra)
    return load_settings(getattr(args, "config", None), **ov)


def embedded_tuning() -> dict[str, Any]:
    """Client timings for the embedded broker: fast group joins, low fetch latency."""
    return {"kafka": {"session_timeout_ms": 2000, "heartbeat_interval_ms": 400, "fetch_max_wait_ms": 10}}



def loop_factory():
    """uvloop when installed (less per-message overhead in the Kafka clients), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run_async(coro):
    """``asyncio.run`` on :func:`loop_factory`'s loop (the worker, the demo and the benchmark
    drivers all use the same loop, so a driver's own overhead does not dominate what it measures)."""
    import asyncio

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(coro)


def add_broker_arguments(p: argparse.ArgumentParser) -> None:
    """``--bootstrap-servers`` and ``--config`` of the small topic tools (``send``, ``tail``)."""
    p.add_argument("--bootstrap-servers", metavar="HOST:PORT", help="the broker serve uses (serve prints it)")
    p.add_argument("--config", metavar="FILE", help="YAML configuration file (topic names, TLS/SASL)")


NO_BROKER = ("no broker given: --bootstrap-servers HOST:PORT (plainsight serve prints the address of its "
             "embedded broker)")


def command_error(command: str, msg: str) -> int:
    """One line on stderr, ``plainsight COMMAND: error: …``, and exit status 2."""
    import sys

    print(f"plainsight {command}: error: {msg}", file=sys.stderr)
    return 2
