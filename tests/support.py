"""Helpers shared by the tests (not tests themselves): the repository root, the test session's
secrets, and producing / reading records on the test broker. Fixtures are in ``conftest.py``."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
import uuid
from pathlib import Path

from plainsight.middleware.evaluation import default_data_dir
from plainsight.middleware.keys import secrets_env, secrets_overrides

#: the repository root
ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = default_data_dir()

#: A surrogate secret and state key for this test session (random: no test relies on a public one).
#: Workers refuse to start without them; subprocesses get them with :func:`secret_env`.
TEST_SECRETS_ENV = secrets_env()


def secret_overrides() -> dict:
    """``load_settings`` overrides with this session's test secret and state key."""
    return secrets_overrides(TEST_SECRETS_ENV)


def secret_env(env: dict | None = None) -> dict:
    """``env`` (default: a copy of os.environ) plus this session's test secret and key variables."""
    out = dict(os.environ if env is None else env)
    out.update(TEST_SECRETS_ENV)
    return out


def cli_env() -> dict:
    """The environment for a CLI subprocess, without any PLAINSIGHT_* or OPENAI_API_KEY variable."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PLAINSIGHT_") or k == "OPENAI_API_KEY":
            env.pop(k)
    return env


def turn_bytes(session_id: str, turn_id, text: str, role: str = "student", **extra) -> bytes:
    obj = {"session_id": session_id, "turn_id": turn_id, "role": role, "text": text, "sent_at": time.time()}
    obj.update(extra)
    return json.dumps(obj).encode()


def reply_token_for(settings, session_id: str, payload: bytes = b"") -> str:
    """A valid ``reply_token`` of ``session_id`` under the settings' surrogate secret (what a
    tutor would copy from an output on the tutor topic)."""
    from plainsight.middleware import reply_token
    from plainsight.middleware.keys import load_configured

    secret = load_configured(settings)[0]
    if secret is None:  # the worker got this session's test secret through its environment
        from plainsight.middleware.config import load_settings

        secret = load_configured(load_settings(**secret_overrides()))[0]
    secret = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    return reply_token.make(reply_token.derive_key(secret, b"reply-token"), session_id, payload)


async def produce(settings, records, topic=None):
    """records: iterable of (key: str|None, value: bytes)."""
    from plainsight.consumers.kafka import make_producer

    p = make_producer(settings, settings.kafka.bootstrap_servers)
    await p.start()
    try:
        futs = []
        for key, value in records:
            futs.append(await p.send(topic or settings.topics.input, key=key.encode() if key else None, value=value))
        await asyncio.gather(*futs)
    finally:
        await p.stop()


async def read_topic(settings, topic, expected: int, timeout: float = 30.0, idle: float = 0.0):
    """Read `topic` from the beginning until `expected` records arrived (then `idle` more seconds)."""
    from plainsight.consumers.kafka import make_consumer

    c = make_consumer(settings, settings.kafka.bootstrap_servers, topic, group_id=f"reader-{uuid.uuid4().hex[:8]}")
    await c.start()
    out = []
    try:
        deadline = time.monotonic() + timeout
        extra_until = None
        while time.monotonic() < deadline:
            batch = await c.getmany(timeout_ms=100)
            for _tp, msgs in batch.items():
                out.extend(msgs)
            if len(out) >= expected:
                if extra_until is None:
                    extra_until = time.monotonic() + idle
                if time.monotonic() >= extra_until:
                    break
    finally:
        await c.stop()
    return out


async def run_forget(s, session_ids: list[str]) -> int:
    """``plainsight forget SESSION_ID …`` in-process against the test's broker and topics (the
    topics reach it through ``PLAINSIGHT_TOPICS__*``, restored afterwards); its exit status."""
    from plainsight.middleware.commands.forget import forget

    class Args:
        config = None
        bootstrap_servers = s.kafka.bootstrap_servers
        group_id = s.kafka.group_id
        partitions = s.kafka.partitions
        engine = mode = None

    Args.session_ids = list(session_ids)
    env = {f"PLAINSIGHT_TOPICS__{k.upper()}": v for k, v in s.topics.model_dump().items()}
    env.update(TEST_SECRETS_ENV)  # the workers' secret: forget MACs its forget records with it
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return await forget(Args())
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def free_port() -> int:
    """A TCP port on the loopback that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def detected_names(cascade, text: str, role: str = "student", memory=None) -> list[str]:
    """The NAME spans the cascade finds in one turn, as text (a fresh session memory unless one is given)."""
    from plainsight.middleware.detection.base import TurnContext

    mem = memory if memory is not None else cascade.new_memory()
    spans = cascade.detect(text, TurnContext(role=role, session_id="s"), mem)
    return [text[s.start : s.end] for s in spans if s.label == "NAME"]


async def start_worker(worker):
    """Start ``worker``, run it in a task and wait until it is ready (30 s); returns the task."""
    await worker.start()
    task = asyncio.create_task(worker.run())
    await worker.wait_ready(30)
    return task


async def stop_worker(worker, task) -> None:
    """Ask ``worker`` to stop, wait for its run task (60 s) and close it."""
    worker.request_stop()
    await asyncio.wait_for(task, 60)
    await worker.stop()
