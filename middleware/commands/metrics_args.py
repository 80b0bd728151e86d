"""``plainsight serve`` flags for the metrics server (``--metrics-port``, ``--metrics-host``,
``--no-metrics``) and the settings overrides they make."""

from __future__ import annotations

import argparse
from typing import Any


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--metrics-port``, ``--metrics-host`` and ``--no-metrics`` to a subcommand's parser.

    Unset flags stay ``None`` so the YAML/environment values apply; feed the result of
    :func:`metrics_overrides` to ``load_settings(**overrides)``.
    """
    g = parser.add_argument_group("metrics")
    g.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="PORT",
        help="serve /metrics, /healthz, /readyz on this port (0 = a free port; default 9464)",
    )
    g.add_argument("--metrics-host", default=None, metavar="HOST", help="address to bind (default 0.0.0.0)")
    g.add_argument(
        "--no-metrics",
        dest="metrics_enabled",
        action="store_const",
        const=False,
        default=None,
        help="don't start the metrics HTTP server",
    )


def metrics_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``{"metrics": {...}}`` from the flags of :func:`add_metrics_arguments` (None = unset)."""
    port = getattr(args, "metrics_port", None)
    if port is not None and not (0 <= port <= 65535):
        raise SystemExit(f"--metrics-port must be 0..65535, got {port}")
    return {
        "metrics": {
            "port": port,
            "host": getattr(args, "metrics_host", None),
            "enabled": getattr(args, "metrics_enabled", None),
        }
    }
