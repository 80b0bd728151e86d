"""In-memory per-session state with a size bound (LRU) and an idle TTL.

A session's state holds the detector's memory (people confirmed earlier in the session) and
the replacement state (which surrogate/tag stands for which value). Persistence across
workers is the transport's job (consumers/): it implements :class:`SessionRepository` and is
attached with :meth:`SessionStore.use`.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol


@dataclass(slots=True)
class SessionState:
    session_id: str
    detect_memory: Any
    replace_state: Any
    turns: int = 0
    last_seen: float = field(default_factory=time.monotonic)
    #: Set when the state changed since it was last persisted.
    dirty: bool = False
    #: The refiner's (LLM stage's) sliding context: ``[turn_index, role, de-identified text]`` of the
    #: session's last ``llm.context_turns`` logs outputs. Persisted with the state.
    llm_context: list[list] = field(default_factory=list)
    #: Replay journal kept by the transport: outputs of not-yet-committed input records,
    #: ``"topic:partition:offset" -> [[output topic, base64 payload], ...]``. Persisted.
    journal: dict[str, list] = field(default_factory=dict)
    #: Digest of what the last stored copy of this state holds (set by the repository; not persisted).
    stored_fingerprint: bytes | None = None
    #: Version of the last sealed copy (grows with every write; in the envelope's associated
    #: data, so that an older copy replayed into the store is refused).
    version: int = 0


class SessionRepository(Protocol):
    """Where sessions live outside this process's cache (e.g. a compacted Kafka topic)."""

    def load(self, session_id: str) -> SessionState | None:
        """The stored state of a session missing from the cache, or None (a fresh one is made)."""
        ...

    def evicted(self, state: SessionState) -> None:
        """A session pushed out of the cache by its size bound (not expiry or drop): keep its state
        so that its next turn can load it again."""
        ...


class NoRepository:
    """Sessions live in memory only."""

    def load(self, session_id: str) -> SessionState | None:
        return None

    def evicted(self, state: SessionState) -> None:
        return None


class SessionStore:
    def __init__(
        self,
        factory: Callable[[str], SessionState],
        max_sessions: int = 100_000,
        ttl_s: float = 6 * 3600,
        clock: Callable[[], float] = time.monotonic,
        repository: SessionRepository | None = None,
    ) -> None:
        self._factory = factory
        #: Consulted on a miss before creating a fresh session, and told about evictions.
        self.repository: SessionRepository = repository or NoRepository()
        self._max = max_sessions
        self._ttl = ttl_s
        self._clock = clock
        self._items: OrderedDict[str, SessionState] = OrderedDict()
        self.evicted = 0
        self.expired = 0

    def use(self, repository: SessionRepository) -> None:
        """Back the cache with ``repository`` (loads on a miss, keeps evicted sessions)."""
        self.repository = repository

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._items

    def get(self, session_id: str) -> SessionState:
        """The session's state, created if unknown (or expired)."""
        now = self._clock()
        st = self._items.get(session_id)
        if st is not None and now - st.last_seen > self._ttl:
            del self._items[session_id]
            self.expired += 1
            st = None
        if st is None:
            st = self.repository.load(session_id)
            if st is None:
                st = self._factory(session_id)
            self._items[session_id] = st
            self._evict()
        else:
            self._items.move_to_end(session_id)
        st.last_seen = now
        return st

    def peek(self, session_id: str) -> SessionState | None:
        return self._items.get(session_id)

    def put(self, state: SessionState) -> None:
        state.last_seen = self._clock()
        self._items[state.session_id] = state
        self._items.move_to_end(state.session_id)
        self._evict()

    def drop(self, session_id: str) -> bool:
        return self._items.pop(session_id, None) is not None

    def expire_idle(self) -> list[str]:
        """Drop sessions idle for longer than the TTL; returns their ids."""
        now = self._clock()
        gone: list[str] = []
        while self._items:
            sid, st = next(iter(self._items.items()))
            if now - st.last_seen <= self._ttl:
                break
            del self._items[sid]
            gone.append(sid)
        self.expired += len(gone)
        return gone

    def _evict(self) -> None:
        while len(self._items) > self._max:
            _sid, st = self._items.popitem(last=False)
            self.evicted += 1
            self.repository.evicted(st)

    def ids(self) -> list[str]:
        return list(self._items)
