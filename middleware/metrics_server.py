"""The small HTTP server that exposes plainsight's metrics: ``/metrics``, ``/healthz``, ``/readyz``.

Usage::

    metrics, server = start_metrics(settings)        # server is None with metrics.enabled false
    ...
    server.stop()
"""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .metrics import Metrics

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- HTTP server


class MetricsServerError(RuntimeError):
    pass


class _Handler(BaseHTTPRequestHandler):
    server_version = "plainsight-metrics"
    sys_version = ""
    # HTTP/1.0: one request per connection, so stop() really ends service (a keep-alive
    # connection from Prometheus would otherwise outlive the listening socket).
    protocol_version = "HTTP/1.0"
    timeout = 30  # seconds a client may take to send its request

    def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        metrics: Metrics = self.server.metrics  # type: ignore[attr-defined]
        path = urlsplit(self.path).path.rstrip("/") or "/"
        if path == "/metrics":
            try:
                body, ctype = metrics.exposition(self.headers.get("Accept"))
            except Exception as exc:  # pragma: no cover - a broken collector
                log.error("metrics exposition failed: %s", type(exc).__name__)
                self._send(500, b"exposition failed\n")
                return
            self._send(200, body, ctype)
        elif path == "/healthz":
            self._send(200, b"ok\n")
        elif path == "/readyz":
            warn = b" (INSECURE: public development secret and state key, --insecure-dev-keys)" if metrics.insecure else b""
            if metrics.is_ready:
                self._send(200, b"ready" + warn + b"\n")
            else:
                self._send(503, b"not ready" + warn + b"\n")
        elif path == "/":
            self._send(200, b"plainsight metrics: /metrics /healthz /readyz\n")
        else:
            self._send(404, b"not found\n")

    do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        # request lines carry no PII here, but scrapes every few seconds would flood the log
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Python sets request_queue_size=5 by default; scrapes are few, keep it
    #: connections served at once (``metrics.max_connections``); more are closed at once
    max_connections = 16
    _slots: threading.BoundedSemaphore | None = None
    # a client that opens a connection and sends nothing must not hold a thread forever
    timeout = 10

    def process_request(self, request, client_address):
        if self._slots is None:
            self._slots = threading.BoundedSemaphore(self.max_connections)
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # over the limit: refused, never queued without bound
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            if self._slots is not None:
                self._slots.release()


class MetricsServer:
    """Serves ``/metrics``, ``/healthz`` and ``/readyz`` from a daemon thread.

    ``port=0`` binds a free port; ``server.port`` is the bound one after ``start()``.
    """

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 9464, max_connections: int = 16) -> None:
        self.metrics = metrics
        self.max_connections = int(max_connections)
        self.host = host
        self.port = int(port)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_settings(cls, metrics: Metrics, settings: Settings) -> MetricsServer:
        return cls(metrics, settings.metrics.host, settings.metrics.port,
                   getattr(settings.metrics, "max_connections", 16))

    def start(self) -> MetricsServer:
        if self._httpd is not None:
            return self
        host = self.host
        server_cls: type[_Server] = _Server
        if ":" in host.strip("[]"):
            host = host.strip("[]")

            class _V6(_Server):
                address_family = socket.AF_INET6

            server_cls = _V6
        try:
            httpd = server_cls((host, self.port), _Handler)
        except OSError as exc:
            raise MetricsServerError(
                f"cannot bind the metrics server to {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        httpd.metrics = self.metrics  # type: ignore[attr-defined]
        httpd.max_connections = self.max_connections
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="plainsight-metrics", daemon=True
        )
        self._thread.start()
        log.info("metrics on http://%s:%d/metrics", self.host, self.port)
        return self

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def stop(self, timeout: float = 5.0) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> MetricsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_metrics(settings: Settings, metrics: Metrics | None = None) -> tuple[Metrics, MetricsServer | None]:
    """Create metrics from settings and start the server if ``settings.metrics.enabled``."""
    metrics = metrics or Metrics.from_settings(settings)
    if not settings.metrics.enabled:
        return metrics, None
    return metrics, MetricsServer.from_settings(metrics, settings).start()
