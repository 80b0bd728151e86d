"""Helpers for the proxy tests: a fake upstream and proxies served by uvicorn in threads, a Redis
server started for the test (skipped with a message when ``redis-server`` is not installed)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from plainsight.benchmarks.proxy_upstream import FakeUpstream, free_port, wait_port
from plainsight.middleware.config import load_settings
from tests.support import secret_overrides


def proxy_settings(**proxy):
    return load_settings(None, **secret_overrides(), proxy={"store": "memory", **proxy})


class RunningProxy:
    def __init__(self, settings, upstream: str, ssl: tuple[str, str] | None = None, **kw) -> None:
        import uvicorn

        from plainsight.proxy.server import ProxyServer

        self.server = ProxyServer(settings, upstream, **kw)
        self.port = free_port()
        tls = {"ssl_certfile": ssl[0], "ssl_keyfile": ssl[1]} if ssl else {}
        self.scheme = "https" if ssl else "http"
        self._uv = uvicorn.Server(uvicorn.Config(self.server.app, host="127.0.0.1", port=self.port,
                                                 log_level="warning", access_log=False, **tls))
        self._t = threading.Thread(target=self._uv.run, daemon=True)
        self._t.start()
        wait_port(self.port)

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/v1"

    def client(self, key: str = "sk-app-key", **kw):
        from openai import OpenAI

        return OpenAI(base_url=self.base_url, api_key=key, max_retries=0, timeout=30, **kw)

    def stop(self) -> None:
        self._uv.should_exit = True
        self._t.join(timeout=10)


@contextlib.contextmanager
def running(settings=None, upstream: FakeUpstream | None = None, **kw):
    up = upstream or FakeUpstream()
    up.start()
    px = RunningProxy(settings or proxy_settings(), up.base_url, **kw)
    try:
        yield px, up
    finally:
        px.stop()
        up.stop()


@contextlib.contextmanager
def redis_server(tls: tuple[str, str] | None = None):
    """A ``redis-server`` on a free loopback port with a password; with ``tls=(cert, key)`` it
    speaks TLS only (``rediss://``)."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
    port = free_port()
    d = tempfile.mkdtemp(prefix="ps-redis-")
    ports = ["--port", "0", "--tls-port", str(port), "--tls-cert-file", tls[0], "--tls-key-file", tls[1],
             "--tls-ca-cert-file", tls[0], "--tls-auth-clients", "no"] if tls else ["--port", str(port)]
    proc = subprocess.Popen([exe, *ports, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", d, "--requirepass", "test-redis-password"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        time.sleep(0.05)
        yield f"{'rediss' if tls else 'redis'}://127.0.0.1:{port}/0", "test-redis-password"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(d, ignore_errors=True)
