"""`plainsight serve`: the long-running worker.

With no bootstrap servers configured it starts the embedded broker (memory only: for trying
plainsight out, not for production). SIGINT/SIGTERM drain in-flight turns, commit and exit 0.
"""

from __future__ import annotations

import argparse

from ._common import add_config_arguments

_ARG_HOOKS: list = []


def add_arguments(p: argparse.ArgumentParser) -> None:
    from middleware.metrics import add_metrics_arguments

    add_config_arguments(p)
    add_metrics_arguments(p)
    p.add_argument("--max-runtime", type=float, help="stop by itself after this many seconds (tests, batch jobs)")
    for hook in _ARG_HOOKS:
        hook(p)


def run(args: argparse.Namespace) -> int:
    from ._common import run_async

    return run_async(serve(args))


async def serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal

    from consumers.broker import EmbeddedBroker
    from consumers.worker import Worker

    from ._common import embedded_tuning, settings_from_args

    log = logging.getLogger("plainsight.serve")
    from middleware.metrics import metrics_overrides, start_metrics

    extra = metrics_overrides(args)
    settings = settings_from_args(args, **extra)
    broker = None
    if not settings.kafka.bootstrap_servers:
        settings = settings_from_args(args, **embedded_tuning(), **extra)
        broker = EmbeddedBroker.from_settings(settings.embedded)
        bootstrap = await broker.start()
        log.warning("no bootstrap servers configured: using an embedded in-memory broker on %s", bootstrap)
    else:
        bootstrap = settings.kafka.bootstrap_servers

    metrics, server = start_metrics(settings)
    if server is not None:
        log.info("metrics on %s/metrics", server.url)

    worker = Worker(settings, bootstrap, metrics=metrics)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.request_stop)
    stopper = None
    if args.max_runtime:
        stopper = loop.call_later(args.max_runtime, worker.request_stop)
    try:
        await worker.start()
        log.info("serving: %s → %s, %s (bootstrap %s)", settings.topics.input, settings.topics.output,
                 settings.topics.logs, bootstrap)
        await worker.run()
    finally:
        if stopper is not None:
            stopper.cancel()
        await worker.stop()
        if server is not None:
            server.stop()
        if broker is not None:
            await broker.stop()
    return 0
