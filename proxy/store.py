"""Where the proxy keeps sealed session mappings: in memory, a local SQLite file (the default) or
Redis (several proxy instances serving one conversation).

Keys are ``ps:<sha256(session id)[:32]>:<sha256(client)[:16]>`` — no session id in clear, and
``forget`` finds a session id's entries for every client by prefix. Values are AES-GCM envelopes
(``surrogate.crypto.StateCipher``, the worker's state keys); every entry carries a TTL.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time


def store_key(session_id: str, client: str) -> str:
    s = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    c = hashlib.sha256(client.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"ps:{s}:{c}"


def session_prefix(session_id: str) -> str:
    return "ps:" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ":"


class MemoryStore:
    def __init__(self) -> None:
        self._d: dict[str, tuple[bytes, float]] = {}

    async def get(self, key: str) -> bytes | None:
        hit = self._d.get(key)
        if hit is None or hit[1] < time.time():
            self._d.pop(key, None)
            return None
        return hit[0]

    async def put(self, key: str, blob: bytes, ttl_s: float) -> None:
        self._d[key] = (blob, time.time() + ttl_s)

    async def forget(self, session_id: str) -> int:
        pre = session_prefix(session_id)
        gone = [k for k in self._d if k.startswith(pre)]
        for k in gone:
            del self._d[k]
        return len(gone)

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        return None


class SQLiteStore:
    """One table ``sessions(key, blob, expires)``; expired rows are swept now and then."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, blob BLOB NOT NULL, "
                         "expires REAL NOT NULL)")
        self._puts = 0

    async def get(self, key: str) -> bytes | None:
        row = self._db.execute("SELECT blob, expires FROM sessions WHERE key = ?", (key,)).fetchone()
        if row is None or row[1] < time.time():
            return None
        return bytes(row[0])

    async def put(self, key: str, blob: bytes, ttl_s: float) -> None:
        self._db.execute("INSERT OR REPLACE INTO sessions (key, blob, expires) VALUES (?, ?, ?)",
                         (key, blob, time.time() + ttl_s))
        self._puts += 1
        if self._puts % 1000 == 0:
            self._db.execute("DELETE FROM sessions WHERE expires < ?", (time.time(),))

    async def forget(self, session_id: str) -> int:
        pre = session_prefix(session_id)
        cur = self._db.execute("DELETE FROM sessions WHERE substr(key, 1, ?) = ?", (len(pre), pre))
        return cur.rowcount

    async def ping(self) -> bool:
        self._db.execute("SELECT 1").fetchone()
        return True

    async def close(self) -> None:
        self._db.close()


class RedisStore:
    """``redis.asyncio``; ``rediss://`` URLs for TLS, a password from settings (never logged)."""

    def __init__(self, url: str, password: str | None = None, ssl_ca_certs: str | None = None,
                 timeout_s: float = 2.0) -> None:
        import redis.asyncio as redis

        kw: dict = {"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s}
        if password:
            kw["password"] = password
        if ssl_ca_certs and url.startswith("rediss://"):
            kw["ssl_ca_certs"] = ssl_ca_certs
        self._r = redis.Redis.from_url(url, **kw)

    async def get(self, key: str) -> bytes | None:
        return await self._r.get(key)

    async def put(self, key: str, blob: bytes, ttl_s: float) -> None:
        await self._r.set(key, blob, px=max(1, int(ttl_s * 1000)))

    async def forget(self, session_id: str) -> int:
        n = 0
        async for k in self._r.scan_iter(match=session_prefix(session_id) + "*", count=500):
            n += await self._r.delete(k)
        return n

    async def ping(self) -> bool:
        return bool(await self._r.ping())

    async def close(self) -> None:
        await self._r.aclose()


def open_store(ps) -> "MemoryStore | SQLiteStore | RedisStore":
    """The store ``ps`` (a ProxySettings) configures."""
    if ps.store == "memory":
        return MemoryStore()
    if ps.store == "redis":
        if not ps.redis_url:
            raise ValueError("proxy.store is redis but proxy.redis_url is not set")
        pw = ps.redis_password.get_secret_value() if ps.redis_password is not None else None
        return RedisStore(ps.redis_url, pw, ps.redis_ssl_ca_certs)
    return SQLiteStore(ps.sqlite_path)


async def _noop() -> None:  # pragma: no cover
    await asyncio.sleep(0)
