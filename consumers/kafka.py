"""aiokafka plumbing: connection settings (TLS/SASL pass-through), clients and topic creation."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from plainsight.middleware.config import KafkaSettings, Settings, UsageError

log = logging.getLogger(__name__)


def connection_kwargs(k: KafkaSettings, bootstrap_servers: str) -> dict[str, Any]:
    """Keyword arguments shared by every aiokafka client: servers, client id, TLS and SASL."""
    kw: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers,
        "client_id": k.client_id,
        "security_protocol": k.security_protocol,
        "request_timeout_ms": k.request_timeout_ms,
    }
    if k.security_protocol in ("SSL", "SASL_SSL"):
        from aiokafka.helpers import create_ssl_context

        ctx = create_ssl_context(cafile=k.ssl_cafile, certfile=k.ssl_certfile, keyfile=k.ssl_keyfile)
        ctx.check_hostname = k.ssl_check_hostname
        kw["ssl_context"] = ctx
    if k.security_protocol.startswith("SASL"):
        kw["sasl_mechanism"] = k.sasl_mechanism or "PLAIN"
        if k.sasl_plain_username is not None:
            kw["sasl_plain_username"] = k.sasl_plain_username
        if k.sasl_plain_password is not None:
            kw["sasl_plain_password"] = k.sasl_plain_password.get_secret_value()
    return kw


def make_producer(settings: Settings, bootstrap_servers: str, **extra: Any) -> AIOKafkaProducer:
    k = settings.kafka
    kw = connection_kwargs(k, bootstrap_servers)
    kw.update(
        acks="all",
        # Idempotence needs broker support that Tansu lacks; outputs are deterministic, so a
        # retried duplicate is byte-identical and harmless for at-least-once consumers.
        enable_idempotence=False,
        linger_ms=k.linger_ms,
        compression_type=k.compression_type,
    )
    kw.update(extra)
    return AIOKafkaProducer(**kw)


def make_consumer(settings: Settings, bootstrap_servers: str, *topics: str, **extra: Any) -> AIOKafkaConsumer:
    k = settings.kafka
    kw = connection_kwargs(k, bootstrap_servers)
    kw.update(
        group_id=k.group_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=k.session_timeout_ms,
        heartbeat_interval_ms=k.heartbeat_interval_ms,
        max_poll_interval_ms=k.max_poll_interval_ms,
        fetch_max_wait_ms=k.fetch_max_wait_ms,
        max_poll_records=k.max_poll_records,
    )
    kw.update(extra)
    return AIOKafkaConsumer(*topics, **kw)


class BrokerUnreachable(UsageError):
    """No bootstrap address accepted a connection within ``kafka.connect_timeout_s``: the CLI
    prints it as one line and exits 2 (instead of aiokafka's endless reconnect errors)."""


def _addresses(bootstrap_servers: str) -> list[tuple[str, int]]:
    out = []
    for part in bootstrap_servers.split(","):
        part = part.strip()
        if "://" in part:
            part = part.split("://", 1)[1]
        host, sep, port = part.rpartition(":")
        if not sep or not port.isdigit():
            raise BrokerUnreachable(f"bootstrap server {part!r} is not HOST:PORT")
        out.append((host.strip("[]") or "localhost", int(port)))
    return out


async def probe_broker(k: KafkaSettings, bootstrap_servers: str) -> None:
    """Return once one bootstrap address accepts a TCP connection; raise :class:`BrokerUnreachable`
    after ``k.connect_timeout_s`` (retrying every quarter second: a broker that is starting)."""
    addrs = _addresses(bootstrap_servers)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + k.connect_timeout_s
    last = "no address"
    while True:
        for host, port in addrs:
            left = deadline - loop.time()
            if left <= 0:
                break
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=min(left, 3.0))
            except (OSError, asyncio.TimeoutError) as exc:
                last = ("connection refused" if isinstance(exc, ConnectionRefusedError) else "timed out"
                        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) else
                        getattr(exc, "strerror", None) or type(exc).__name__)
                continue
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass
            return
        if loop.time() >= deadline:
            raise BrokerUnreachable(
                f"cannot reach the Kafka broker at {bootstrap_servers} ({last}) within {k.connect_timeout_s:g} s "
                "(kafka.connect_timeout_s); is it running? Without --bootstrap-servers, serve and demo start an "
                "embedded broker")
        await asyncio.sleep(min(0.25, max(0.0, deadline - loop.time())))


#: The state topic's settings (an existing topic is not altered: ``kafka-configs --alter`` them)
STATE_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "min.compaction.lag.ms": "0",
    "segment.ms": str(3600 * 1000),
    "max.compaction.lag.ms": str(3600 * 1000),
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": str(24 * 3600 * 1000),
}


def topic_specs(settings: Settings) -> list[NewTopic]:
    t, k = settings.topics, settings.kafka
    n, rf = k.partitions, k.replication_factor
    # Input and reply topics are co-partitioned (same count, same key) so the range assignor
    # gives a worker the same sessions on both.
    specs = [NewTopic(name, n, rf) for name in (t.input, t.output, t.logs, t.replies_in, t.replies_out)]
    specs.append(NewTopic(t.dlq, n, rf))
    specs.append(
        NewTopic(
            t.state,
            n,
            rf,
            # erasure within a bound: a segment rolls at least hourly (segment.ms) and is compacted
            # within an hour after (max.compaction.lag.ms); tombstones then stay delete.retention.ms
            # (1 day) so that every worker sees them (docs/security.md)
            topic_configs={**STATE_TOPIC_CONFIGS},
        )
    )
    return specs


async def ensure_topics(settings: Settings, bootstrap_servers: str, retries: int = 20) -> list[str]:
    """Create the topics plainsight uses if they are missing; returns the names created."""
    specs = topic_specs(settings)
    last: Exception | None = None
    for attempt in range(retries):
        admin = AIOKafkaAdminClient(**connection_kwargs(settings.kafka, bootstrap_servers))
        try:
            await admin.start()
            existing = set(await admin.list_topics())
            missing = [s for s in specs if s.name not in existing]
            if missing:
                resp = await admin.create_topics(missing)
                for name, code, _msg in _topic_errors(resp):
                    if code not in (0, TopicAlreadyExistsError.errno):
                        raise KafkaError(f"creating topic {name} failed with error code {code}")
                log.info("created topics: %s", ", ".join(s.name for s in missing))
            return [s.name for s in missing]
        except (KafkaError, OSError) as exc:
            last = exc
            await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
        finally:
            await admin.close()
    raise BrokerUnreachable(f"could not create topics on {bootstrap_servers}: {type(last).__name__}")


def _topic_errors(resp: Any):
    for entry in getattr(resp, "topic_errors", []):
        name, code = entry[0], entry[1]
        msg = entry[2] if len(entry) > 2 else None
        yield name, code, msg
