"""The in-process API: ``plainsight.Plainsight(config).session(id)``.

The same pipeline the Kafka worker runs (``surrogate.pipeline.build_pipeline``: detect → replace,
per-session mapping), without Kafka::

    from plainsight import Plainsight

    ps = Plainsight("configs/my.yaml")          # or Plainsight(settings), or Plainsight() for defaults
    s = ps.session("lesson-42")
    safe = s.deidentify("student", "Hi, I'm Maria Lopez")   # "Hi, I'm Lucia Garcia"
    s.reidentify("Nice to meet you, Lucia!")                # "Nice to meet you, Maria!"

A session's turns go through :meth:`Pipeline.process_sync` exactly as the worker's do, so the
same session id, the same secret and the same turns give the same surrogates whether they come
through Kafka, ``plainsight proxy`` or this API. Configure ``surrogate.secret`` (``plainsight keys
generate``) for surrogates that agree across processes; without one they are consistent within
this process only.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["Plainsight", "Session"]


class Plainsight:
    """One pipeline (detector, replacer, sessions); ``session(id)`` gives a handle on one session."""

    def __init__(self, config: Any = None, *, pipeline: Any = None) -> None:
        from plainsight.middleware.config import Settings, load_settings

        if isinstance(config, Settings):
            settings = config
        elif config is None or isinstance(config, (str, os.PathLike)):
            settings = load_settings(config)
        else:
            raise TypeError("Plainsight(config): a Settings, a YAML path or None")
        self.settings = settings
        if pipeline is None:
            from plainsight.surrogate.pipeline import build_pipeline

            pipeline = build_pipeline(settings)
        self.pipeline = pipeline
        self._lock = threading.Lock()

    def session(self, session_id: str) -> "Session":
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("a session id is a non-empty string")
        return Session(self, session_id)

    def forget(self, session_id: str) -> bool:
        """Drop a session's mapping from memory (what ``plainsight forget`` does to stored state)."""
        return self.pipeline.sessions.drop(session_id)


class Session:
    """De-identify a session's turns in order; re-identify replies written with its surrogates."""

    def __init__(self, owner: Plainsight, session_id: str) -> None:
        self._owner = owner
        self.session_id = session_id

    def deidentify(self, role: str, text: str) -> str:
        """The turn with every value found replaced by the session's surrogate (the worker's output)."""
        return self.deidentify_turn(role, text).deid.text

    def deidentify_turn(self, role: str, text: str):
        """The whole :class:`~plainsight.middleware.pipeline.TurnResult` (spans, entities, timings)."""
        from plainsight.middleware.schemas import InputTurn

        p = self._owner.pipeline
        with self._owner._lock:
            state = p.sessions.get(self.session_id)
            if not text.strip():  # nothing to find (InputTurn refuses blank text)
                from plainsight.middleware.pipeline import TurnResult
                from plainsight.middleware.schemas import OutputTurn

                out = OutputTurn(session_id=self.session_id, turn_id=state.turns, role=role, text=text,
                                 entities=[], mode=p.settings.output.deid_mode, sent_at=0.0)
                return TurnResult(deid=out, logs=out, spans=[])
            turn = InputTurn(session_id=self.session_id, turn_id=state.turns, role=role, text=text, sent_at=0.0)
            return p.process_sync(turn)

    def reidentify(self, text: str) -> str:
        """``text`` with this session's surrogates mapped back to the real values."""
        p = self._owner.pipeline
        with self._owner._lock:
            state = p.sessions.get(self.session_id)
            return p.replacer.reidentify(text, state.replace_state)[0]
