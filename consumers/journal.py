"""The replay journal: outputs of a session's not-yet-committed turns travel inside its sealed
state (``SessionState.journal``). A turn replayed after a crash or a rebalance is answered from
the journal with the very same bytes, instead of being reprocessed with a session memory that
has moved on since. Only meaningful with persisted state; :class:`NoJournal` otherwise."""

from __future__ import annotations

import base64

from aiokafka import TopicPartition

from plainsight.middleware.sessions import SessionStore

from .producer import payload


def _key(tp: TopicPartition, offset: int) -> str:
    return f"{tp.topic}:{tp.partition}:{offset}"


class ReplayJournal:
    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions

    def hit(self, session_id: str, tp: TopicPartition, offset: int) -> list | None:
        """The outputs recorded for this input record, as (topic, bytes, None), or None."""
        journal = self.sessions.get(session_id).journal
        if not journal:
            return None
        entry = journal.get(_key(tp, offset))
        if entry is None:
            return None
        return [(topic, base64.b64decode(value), None) for topic, value in entry]

    def add(self, session_id: str, tp: TopicPartition, offset: int, outputs: list, committed: int | None) -> None:
        """Record a record's outputs; entries below ``committed`` (never replayed) are pruned."""
        state = self.sessions.peek(session_id)
        if state is None:
            return
        journal = state.journal
        if committed is not None:
            prefix = f"{tp.topic}:{tp.partition}:"
            for key in [k for k in journal if k.startswith(prefix) and int(k.rsplit(":", 1)[1]) < committed]:
                del journal[key]
        journal[_key(tp, offset)] = [(topic, base64.b64encode(payload(out)).decode("ascii")) for topic, out, _h in outputs]


    def drop(self, session_id: str, tp: TopicPartition, offset: int) -> None:
        """Forget a record's outputs (they were refused by the broker and dead-lettered)."""
        state = self.sessions.peek(session_id)
        if state is not None and state.journal:
            state.journal.pop(_key(tp, offset), None)


class NoJournal:
    """Without persisted state there is nothing to replay from."""

    def hit(self, session_id: str, tp: TopicPartition, offset: int) -> list | None:
        return None

    def add(self, session_id: str, tp: TopicPartition, offset: int, outputs: list, committed: int | None) -> None:
        return None

    def drop(self, session_id: str, tp: TopicPartition, offset: int) -> None:
        return None
