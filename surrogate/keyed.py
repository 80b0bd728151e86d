"""Keyed, deterministic randomness: every surrogate choice derives from HMAC-SHA256.

``derive(secret, session_id, label, value, counter)`` is the seed of one surrogate. The fields are
length-prefixed before hashing so no two different (session, label, value, counter) tuples can
produce the same message. :class:`KeyedRandom` expands a seed into as many uniform choices as a
generator needs (SHA-256 in counter mode with rejection sampling), so outputs depend only on the
seed and never on Python's ``random`` implementation: replaying a session is byte-identical across
processes, machines and Python versions.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import Sequence, TypeVar

T = TypeVar("T")


def _field(b: bytes) -> bytes:
    return struct.pack(">I", len(b)) + b


def derive(secret: bytes, session_id: str, label: str, value: str, counter: int = 0) -> bytes:
    """The 32-byte seed of the surrogate for ``value`` (already normalised) in ``session_id``."""
    msg = b"plainsight-surrogate-v1" + _field(session_id.encode()) + _field(label.encode()) + _field(
        value.encode()
    ) + struct.pack(">I", counter)
    return hmac.new(secret, msg, hashlib.sha256).digest()


class KeyedRandom:
    """A deterministic stream of choices expanded from a 32-byte seed."""

    __slots__ = ("_seed", "_block", "_buf")

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._block = 0
        self._buf = b""

    def _bytes(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._buf += hashlib.sha256(self._seed + struct.pack(">I", self._block)).digest()
            self._block += 1
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("n must be positive")
        if n == 1:
            return 0
        nbytes = (n.bit_length() + 7) // 8 + 1
        space = 1 << (8 * nbytes)
        limit = space - space % n
        while True:
            v = int.from_bytes(self._bytes(nbytes), "big")
            if v < limit:
                return v % n

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def digit(self) -> str:
        return "0123456789"[self.below(10)]

    def digits(self, n: int) -> str:
        return "".join(self.digit() for _ in range(n))

    def upper(self) -> str:
        return chr(ord("A") + self.below(26))

    def lower(self) -> str:
        return chr(ord("a") + self.below(26))

    def seed_int(self) -> int:
        """A 64-bit integer for seeding third-party generators (Faker)."""
        return int.from_bytes(self._bytes(8), "big")
