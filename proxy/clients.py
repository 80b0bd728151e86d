"""The proxy's callers: a clients file of names and key digests (``plainsight proxy clients add``).

File (YAML)::

    clients:
      tutor-app:
        key_sha256: 9f2c…            # SHA-256 of the key; the key itself is printed once, never stored
        revoked: false
        upstream_api_key_env: TUTOR_APP_OPENAI_KEY   # the upstream key for this client (optional)
        fingerprint_fallback: false  # per client; off by default (docs/proxy.md says what it risks)
        max_concurrency: 16
        requests_per_minute: 600

Keys are 32 random bytes (``psk-`` + urlsafe base64), so a plain SHA-256 is a sufficient digest.
The file is re-read when it changes (checked at most every 0.5 s): adding or revoking a client
takes effect on a running proxy within a second.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

KEY_PREFIX = "psk-"
RECHECK_S = 0.5


@dataclass(frozen=True)
class Client:
    name: str
    key_sha256: str = ""
    revoked: bool = False
    upstream_api_key_env: str | None = None
    fingerprint_fallback: bool = False
    max_concurrency: int | None = None
    requests_per_minute: int | None = None

    def upstream_key(self) -> str | None:
        if self.upstream_api_key_env:
            return os.environ.get(self.upstream_api_key_env) or None
        return None


#: the one client of a proxy without a clients file (loopback only)
LOCAL = Client("local")


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def read_file(path: str | os.PathLike[str]) -> dict[str, Client]:
    p = Path(path)
    if not p.exists():
        return {}
    data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    rows = data.get("clients") or {}
    out: dict[str, Client] = {}
    for name, row in rows.items():
        row = row or {}
        out[str(name)] = Client(
            name=str(name),
            key_sha256=str(row.get("key_sha256", "")),
            revoked=bool(row.get("revoked", False)),
            upstream_api_key_env=row.get("upstream_api_key_env"),
            fingerprint_fallback=bool(row.get("fingerprint_fallback", False)),
            max_concurrency=row.get("max_concurrency"),
            requests_per_minute=row.get("requests_per_minute"),
        )
    return out


def write_file(path: str | os.PathLike[str], clients: dict[str, Client]) -> None:
    rows = {}
    for c in clients.values():
        row: dict = {"key_sha256": c.key_sha256, "revoked": c.revoked}
        for k in ("upstream_api_key_env", "max_concurrency", "requests_per_minute"):
            if getattr(c, k) is not None:
                row[k] = getattr(c, k)
        if c.fingerprint_fallback:
            row["fingerprint_fallback"] = True
        rows[c.name] = row
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(yaml.safe_dump({"clients": rows}, sort_keys=True), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, p)


class ClientRegistry:
    """Authenticates a bearer key against the clients file, re-reading it when it changes."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._clients: dict[str, Client] = {}
        self._by_digest: dict[str, Client] = {}
        self._stamp: tuple | None = None
        self._checked = 0.0
        if path:
            self._reload(force=True)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def names(self) -> list[str]:
        return sorted(self._clients)

    def _reload(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < RECHECK_S:
            return
        self._checked = now
        try:
            st = os.stat(self.path)  # type: ignore[arg-type]
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp and not force:
            return
        self._stamp = stamp
        clients = read_file(self.path) if stamp is not None else {}  # type: ignore[arg-type]
        self._clients = clients
        self._by_digest = {c.key_sha256: c for c in clients.values() if c.key_sha256 and not c.revoked}

    def authenticate(self, key: str | None) -> Client | None:
        if not self.enabled:
            return LOCAL
        self._reload()
        if not key:
            return None
        d = digest(key)
        c = self._by_digest.get(d)
        if c is None or not hmac.compare_digest(c.key_sha256, d):
            return None
        return c


def add_client(path: str, name: str, **opts) -> str:
    """Add (or re-key) ``name``; returns the new key (shown once)."""
    clients = read_file(path)
    key = new_key()
    old = clients.get(name)
    base = {k: getattr(old, k) for k in ("upstream_api_key_env", "fingerprint_fallback", "max_concurrency",
                                          "requests_per_minute")} if old else {}
    base.update({k: v for k, v in opts.items() if v is not None})
    clients[name] = Client(name=name, key_sha256=digest(key), revoked=False, **base)
    write_file(path, clients)
    return key


def revoke_client(path: str, name: str) -> bool:
    clients = read_file(path)
    c = clients.get(name)
    if c is None:
        return False
    clients[name] = Client(**{**c.__dict__, "revoked": True})
    write_file(path, clients)
    return True
