"""`plainsight serve`: the long-running worker.

With no bootstrap servers configured it starts the embedded broker (memory only: for trying
plainsight out, not for production). SIGINT/SIGTERM drain in-flight turns, commit and exit 0.

Against a broker it refuses to start (exit 2, one line saying how to make them) without a
configured surrogate secret and state key (middleware/keys.py); ``--insecure-dev-keys`` runs with
the public development values instead and says so in the log, ``/readyz`` and a metric.
"""

from __future__ import annotations

import argparse

from plainsight.middleware.config import UsageError

from ._common import add_config_arguments

_ARG_HOOKS: list = []


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .metrics_args import add_metrics_arguments

    from ._common import add_secret_arguments

    add_config_arguments(p)
    add_metrics_arguments(p)
    add_secret_arguments(p, keys=True, insecure=True)
    p.add_argument("--max-runtime", type=float, help="stop by itself after this many seconds (tests, batch jobs)")
    for hook in _ARG_HOOKS:
        hook(p)


def run(args: argparse.Namespace) -> int:
    from ._common import run_async

    return run_async(serve(args))


def load_pipeline(settings):
    """The pipeline with every configured stage loaded and warmed up (detector and its recognizers,
    surrogates, the LLM client when ``llm`` is configured). A stage that cannot be loaded raises
    :class:`StageLoadError` (exit 2, one line naming the stage; exception types, never values)."""
    from plainsight.middleware.pipeline import Pipeline, build_detector, build_llm_stage

    def build_replacer(s):
        from plainsight.surrogate.pipeline import build_replacer as build

        return build(s)

    def load(what: str, fn):
        try:
            return fn(settings)
        except UsageError:
            raise
        except ImportError as exc:
            why = f"module {exc.name} fails to import" if exc.name else f"an import fails: {str(exc)[:200]}"
            raise StageLoadError(f"{what} cannot be loaded: {why} ({type(exc).__name__}); check the installation") from None
        except Exception as exc:
            raise StageLoadError(f"{what} cannot be loaded ({type(exc).__name__})") from None

    detector = load("the detector (detection.engine, detection.recognizers)", build_detector)
    replacer = load("the surrogate replacer", build_replacer)
    llm = load("the LLM stage (llm.base_url / llm.model, --llm-base-url)", build_llm_stage)
    pipeline = load("the pipeline", lambda s: Pipeline(s, detector=detector, replacer=replacer, llm=llm))
    load("the detector (warm-up)", lambda s: pipeline.warm_up())
    return pipeline


class StageLoadError(UsageError):
    """A configured stage that cannot be loaded at start-up."""


async def serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal

    from plainsight.consumers.broker import EmbeddedBroker
    from plainsight.consumers.worker import Worker

    from ._common import embedded_tuning, settings_from_args

    log = logging.getLogger("plainsight.serve")
    from plainsight.middleware.metrics_server import start_metrics

    from .metrics_args import metrics_overrides

    extra = metrics_overrides(args)
    settings = settings_from_args(args, **extra)
    broker = None
    embedded = not settings.kafka.bootstrap_servers
    if embedded:
        settings = settings_from_args(args, **embedded_tuning(), **extra)
    # Secrets before anything starts: against a broker the state lasts, so a secret and a state
    # key must be configured; the in-memory embedded broker keeps nothing, random ones will do.
    import sys

    from plainsight.middleware.keys import SecretsError, resolve_secrets

    # (an embedded broker with persistent storage, should one be configured, counts as lasting)
    in_memory = str(getattr(settings.embedded, "storage_engine", None) or "memory://").startswith("memory://")
    try:
        settings, secrets_status = resolve_secrets(
            settings, allow_ephemeral=embedded and in_memory,
            insecure_dev_keys=bool(getattr(args, "insecure_dev_keys", False)),
        )
    except SecretsError as exc:
        print(f"plainsight serve: {exc}", file=sys.stderr)
        return 2
    if secrets_status.insecure:
        log.warning("INSECURE: %s; anyone with the source can re-identify surrogates and read stored state "
                    "(--insecure-dev-keys: local experiments only)", secrets_status.describe())
    elif secrets_status.ephemeral:
        log.warning("%s (embedded in-memory broker: nothing stored outlives this process)", secrets_status.describe())
    else:
        log.info("%s", secrets_status.describe())
    # every configured stage is loaded before anything starts: one that cannot be (a broken LLM
    # client install, a recognizer plug-in) stops serve here with one line, never a worker without it
    pipeline = await asyncio.to_thread(load_pipeline, settings)
    if embedded:
        broker = EmbeddedBroker.from_settings(settings.embedded)
        bootstrap = await broker.start()
        log.warning("no bootstrap servers configured: using an embedded in-memory broker on %s", bootstrap)
    else:
        from plainsight.consumers.kafka import probe_broker

        bootstrap = settings.kafka.bootstrap_servers
        await probe_broker(settings.kafka, bootstrap)  # unreachable: one line, exit 2, within connect_timeout_s

    metrics, server = start_metrics(settings)
    metrics.set_insecure_dev_keys(secrets_status.insecure)
    if server is not None:
        log.info("metrics on %s/metrics", server.url)

    worker = Worker(settings, bootstrap, metrics=metrics, pipeline=pipeline)
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
