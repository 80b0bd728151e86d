"""In-memory per-session state with a size bound (LRU) and an idle TTL.

A session's state holds the detector's memory (people confirmed earlier in the session) and
the replacement state (which surrogate/tag stands for which value). Persistence across
workers is the transport's job (consumers/), through :meth:`SessionStore.put`.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(slots=True)
class SessionState:
    session_id: str
    detect_memory: Any
    replace_state: Any
    turns: int = 0
    last_seen: float = field(default_factory=time.monotonic)
    #: Set when the state changed since it was last persisted.
    dirty: bool = False
    #: Transport-specific bookkeeping (e.g. last processed offset), opaque to the core.
    extra: dict[str, Any] = field(default_factory=dict)


class SessionStore:
    def __init__(
        self,
        factory: Callable[[str], SessionState],
        max_sessions: int = 100_000,
        ttl_s: float = 6 * 3600,
        clock: Callable[[], float] = time.monotonic,
        loader: Callable[[str], SessionState | None] | None = None,
        on_evict: Callable[[SessionState], None] | None = None,
    ) -> None:
        self._factory = factory
        #: Consulted on a miss before creating a fresh session (e.g. stored state of the session).
        self.loader = loader
        #: Called with a session pushed out by the size bound (not by expiry or drop), so its
        #: state can be kept elsewhere (e.g. sealed) and reloaded on its next turn.
        self.on_evict = on_evict
        self._max = max_sessions
        self._ttl = ttl_s
        self._clock = clock
        self._items: OrderedDict[str, SessionState] = OrderedDict()
        self.evicted = 0
        self.expired = 0

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
            if self.loader is not None:
                st = self.loader(session_id)
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
            if self.on_evict is not None:
                self.on_evict(st)

    def ids(self) -> list[str]:
        return list(self._items)
