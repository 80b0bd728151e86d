"""How the parts of a session's state are stored: the interface the state codec calls.

A session's state holds two parts made by pluggable components: the detector's memory
(:meth:`middleware.detection.base.Detector.new_memory`) and the replacer's state
(:meth:`middleware.replace.Replacer.new_state`). To be stored (sealed, in the Kafka state topic)
and restored on another worker, each part's class implements :class:`StateCodable` explicitly:

* ``to_dict()`` -> JSON-serialisable data (dicts with str keys, lists, str, int, float, bool,
  None) and the class method ``from_dict(data)`` -> an equal instance;
* a part with its own compact, versioned byte encoding implements :class:`BinaryStateCodable`
  (``to_bytes()`` / ``from_bytes()``) as well; the codec then stores those bytes.

A detector without memory returns ``None`` from ``new_memory()``; nothing else is stored
without its class saying how. :func:`require_codable` raises :class:`NotCodableError` (a
``TypeError`` naming the class, never the data) for an object that does not implement it.

The parts hold real values: their encodings only ever leave the process sealed by the state
cipher (:mod:`middleware.state_codec`).
"""

from __future__ import annotations

import dataclasses
import typing
from abc import ABC, abstractmethod
from typing import Any, Self


class StateCodable(ABC):
    """A session-state part that can be stored: to plain data and back."""

    __slots__ = ()

    @abstractmethod
    def to_dict(self) -> Any:
        """JSON-serialisable data from which :meth:`from_dict` rebuilds an equal part."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Any) -> Self:
        """The part ``to_dict()`` described (raises ``ValueError``/``TypeError``/``KeyError`` on
        data it cannot read)."""


class BinaryStateCodable(StateCodable):
    """A state part with its own compact, versioned byte encoding (preferred by the codec)."""

    __slots__ = ()

    @abstractmethod
    def to_bytes(self) -> bytes: ...

    @classmethod
    @abstractmethod
    def from_bytes(cls, data: bytes) -> Self: ...


class NotCodableError(TypeError):
    """A state part whose class does not implement :class:`StateCodable` (names the class only)."""


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def require_codable(cls: type, what: str) -> type[StateCodable]:
    """``cls`` if it implements :class:`StateCodable`, else :class:`NotCodableError`."""
    if isinstance(cls, type) and issubclass(cls, StateCodable):
        return cls
    raise NotCodableError(
        f"{what} class {_class_name(cls) if isinstance(cls, type) else type(cls).__name__} does not implement "
        "plainsight.middleware.codable.StateCodable (to_dict/from_dict): the session state cannot be stored"
    )


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(obj: Any) -> Any:
    """JSON-serialisable form of a field value: sets as sorted lists, tuples as lists, dict keys as
    str, a nested :class:`StateCodable` part by its own ``to_dict``, a dataclass field by field."""
    if type(obj) in _SCALARS:  # most values (words, numbers): no ABC check (a state is fingerprinted every turn)
        return obj
    if isinstance(obj, StateCodable):
        return obj.to_dict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return fields_to_dict(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(plain(x) for x in obj)
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    return obj


def fields_to_dict(obj: Any) -> dict:
    """Generic ``to_dict`` of a dataclass of plain types: its public fields by name (see :func:`plain`)."""
    return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if not f.name.startswith("_")}


def fields_from_dict(cls: type, data: dict) -> Any:
    """Inverse of :func:`fields_to_dict` for a dataclass whose set/tuple fields are annotated as such.
    Unknown keys are ignored and missing ones take the field's default (older/newer documents)."""
    if not isinstance(data, dict):
        raise TypeError("expected a mapping")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data or f.name.startswith("_"):
            continue
        v = data[f.name]
        origin = typing.get_origin(hints.get(f.name)) or hints.get(f.name)
        if origin in (set, frozenset):
            v = set(v)
        elif origin is tuple:
            v = tuple(v)
        kwargs[f.name] = v
    return cls(**kwargs)
