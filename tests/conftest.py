"""Shared fixtures: one real embedded Kafka-protocol broker (Tansu) per test session, unique
topics per test. Loopback only, bounded waits. Tests that use the broker are marked ``broker``
(``pytest -m "not broker"`` runs the rest). Helpers: ``tests/support.py``."""

from __future__ import annotations

import itertools
import uuid

import pytest

from plainsight.consumers.broker import EmbeddedBroker
from plainsight.middleware.config import load_settings

# helpers live in tests/support.py; re-exported for test modules that import them from here
from .support import (  # noqa: F401
    DATA_DIR,
    ROOT,
    TEST_SECRETS_ENV,
    produce,
    read_topic,
    secret_env,
    secret_overrides,
    turn_bytes,
)

_counter = itertools.count()


@pytest.fixture(scope="session")
def broker():
    b = EmbeddedBroker()
    b.start_sync()
    yield b
    b.stop_sync()


@pytest.fixture
def make_settings(broker):
    """Settings for a test: the shared broker, fast group timings, topics unique to the test."""

    def factory(**overrides):
        n = next(_counter)
        prefix = f"t{n}-{uuid.uuid4().hex[:6]}"
        base = {
            "kafka": {
                "bootstrap_servers": broker.bootstrap_servers,
                "group_id": f"{prefix}-g",
                "partitions": 4,
                "session_timeout_ms": 2000,
                "heartbeat_interval_ms": 400,
                "fetch_max_wait_ms": 10,
            },
            "topics": {
                "input": f"{prefix}.turns",
                "output": f"{prefix}.deid",
                "logs": f"{prefix}.logs",
                "dlq": f"{prefix}.dlq",
                "replies_in": f"{prefix}.replies.in",
                "replies_out": f"{prefix}.replies.out",
                "state": f"{prefix}.state",
            },
            "metrics": {"enabled": False},
            **secret_overrides(),
        }
        for k, v in overrides.items():
            base.setdefault(k, {}).update(v)
        return load_settings(**base)

    return factory


@pytest.fixture
def data_dir():
    if not DATA_DIR.is_dir():
        pytest.skip(f"dev data not found at {DATA_DIR}")
    return DATA_DIR


def pytest_collection_modifyitems(config, items):
    """Mark every test that uses the embedded broker (directly or through ``make_settings``)."""
    for item in items:
        if "broker" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.broker)
