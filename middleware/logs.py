"""Logging setup.

Rule for the whole code base: log identifiers (topic, partition, offset, a session *hash*),
counts, reasons and timings; never message text, entity values or raw payloads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        obj = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info and record.exc_info[0] is not None:
            # the exception *type* only: messages of arbitrary exceptions may quote input
            obj["exc_type"] = record.exc_info[0].__name__
        return json.dumps(obj, ensure_ascii=False)


class _PlainFormatter(logging.Formatter):
    converter = time.gmtime

    def formatException(self, ei) -> str:  # noqa: N802 - logging API
        # Tracebacks name code locations; exception messages might quote input, so drop them.
        import traceback

        lines = traceback.format_tb(ei[2])
        return "".join(lines) + f"{ei[0].__name__}: <message withheld>"


def setup_logging(level: str | None = None, json_format: bool | None = None) -> None:
    level = level or os.environ.get("PLAINSIGHT_LOGGING__LEVEL", "INFO")
    if json_format is None:
        json_format = os.environ.get("PLAINSIGHT_LOGGING__JSON_FORMAT", "").lower() in ("1", "true", "yes")
    handler = logging.StreamHandler(sys.stderr)
    if json_format:
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(_PlainFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
    # chatty libraries
    for name in ("aiokafka", "kafka", "httpx", "openai", "presidio-analyzer"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))


#: Key of the digests in logs and dead letters (``set_digest_key``: the worker derives it from
#: ``surrogate.secret``), so that a guessable session id or payload cannot be confirmed from a
#: log line or a DLQ record by hashing guesses. Without one (offline commands): plain SHA-256.
_DIGEST_KEY: bytes | None = None


def set_digest_key(key: bytes | None) -> None:
    global _DIGEST_KEY
    _DIGEST_KEY = key


def keyed_digest(data: bytes) -> str:
    """HMAC-SHA256 of ``data`` under the digest key (hex), plain SHA-256 without one."""
    import hmac

    if _DIGEST_KEY is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(_DIGEST_KEY, data, hashlib.sha256).hexdigest()


def session_ref(session_id: str) -> str:
    """A short, non-reversible reference to a session for logs (keyed: see ``set_digest_key``)."""
    return keyed_digest(session_id.encode("utf-8", "surrogatepass"))[:12]
