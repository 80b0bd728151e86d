"""Per-session mapping state: which surrogate stands for which real value, and back.

One :class:`SessionMapping` per session (it is ``SessionState.replace_state`` in the pipeline).
It holds real values, so it only ever leaves the process encrypted (:mod:`surrogate.crypto`).

Names are mapped token by token (``maria`` → ``Lucia``, ``lopez`` → ``Garcia``), keyed by the
folded token, so a full name, its parts and its case/possessive variants all agree. Other labels
map whole values, keyed by a per-label normal form.

``to_bytes()`` / ``from_bytes()`` give a compact, versioned encoding (JSON, sorted; a leading
format byte). Everything that the mapping rules read is in it, so a session restored from bytes
continues exactly as the original would have (byte-identical replays).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from plainsight.middleware.codable import BinaryStateCodable
from plainsight.middleware.replace import TagState

from .names import fold

FORMAT_VERSION = 1
_MAGIC = b"PSM"


class StateFormatError(ValueError):
    """Bytes that are not a session mapping this version can read (never echoes the bytes)."""


@dataclass(slots=True)
class ValueEntry:
    """A non-name value: its first-seen real form, its surrogate and generator-specific data."""

    real: str
    surrogate: str
    aux: str = ""


@dataclass(slots=True)
class SessionMapping(BinaryStateCodable):
    session_id: str
    #: folded real name token → surrogate token (natural case, e.g. "Lucia").
    names: dict[str, str] = field(default_factory=dict)
    #: folded real name token → its display form (first seen capitalised form preferred).
    name_real: dict[str, str] = field(default_factory=dict)
    #: folded misspelling → folded canonical token it was linked to.
    aliases: dict[str, str] = field(default_factory=dict)
    #: (first, last) folded token pairs seen together in one name: initials, e-mail local parts.
    people: list[tuple[str, str]] = field(default_factory=list)
    #: Initials not (yet) tied to a known person: "j|first|smith" → "EJ" (surrogate letter + real
    #: letter as written), kept stable for the session.
    initials: dict[str, str] = field(default_factory=dict)
    #: label → normal form → entry.
    values: dict[str, dict[str, ValueEntry]] = field(default_factory=dict)
    #: Numbering for the ``tag`` output mode, and the real value behind each tag ("[NAME_1]" → "Maria").
    tags: TagState = field(default_factory=TagState)
    tag_real: dict[str, str] = field(default_factory=dict)
    #: The session's own random key (32 bytes) that its surrogates derive from, when the
    #: replacer was asked for per-session keys (the worker with persisted state): kept only in
    #: this state, sealed, so erasing the state (``plainsight forget``) shreds the link between
    #: surrogates and values for everyone, the holder of ``surrogate.secret`` included. None:
    #: surrogates derive from the configured secret and the session id (offline, in memory).
    key: bytes | None = field(default=None, repr=False)
    # ---- derived, not serialised ----
    _used_names: set[str] = field(default_factory=set, repr=False)
    _used_values: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _generation: int = field(default=0, repr=False)
    _reverse: Any = field(default=None, repr=False)
    #: values of this session left unmapped (tagged, not stored) past the entry cap
    _capped: int = field(default=0, repr=False)

    # ---- queries -------------------------------------------------------------------------
    def name_surrogate(self, token: str) -> str | None:
        """Surrogate of a real name token (any case, aliases resolved), or None."""
        k = fold(token)
        k = self.aliases.get(k, k)
        return self.names.get(k)

    def real_name_seen(self, key: str) -> bool:
        return key in self.names or key in self.aliases

    def surrogate_name_used(self, key: str) -> bool:
        return key in self._used_names

    def value(self, label: str, norm: str) -> ValueEntry | None:
        d = self.values.get(label)
        return d.get(norm) if d else None

    def surrogate_value_used(self, label: str, norm: str) -> bool:
        return norm in self._used_values.get(label, ())

    @property
    def generation(self) -> int:
        """Changes whenever the mapping changes (cache key for the reverse matcher)."""
        return self._generation

    @property
    def entries(self) -> int:
        """Number of mapped values (name tokens + other values)."""
        return len(self.names) + sum(len(d) for d in self.values.values())

    # ---- updates -------------------------------------------------------------------------
    def add_name(self, key: str, real_display: str, surrogate: str) -> None:
        self.names[key] = surrogate
        self.name_real[key] = real_display
        self._used_names.add(fold(surrogate))
        self._generation += 1

    def note_display(self, key: str, display: str) -> None:
        """Prefer a capitalised display form of a real token for re-identification."""
        cur = self.name_real.get(key)
        if cur is not None and cur.islower() and display[:1].isupper() and not display.isupper():
            self.name_real[key] = display

    def add_alias(self, key: str, canonical: str) -> None:
        self.aliases[key] = canonical
        self._generation += 1

    def add_person(self, first: str, last: str) -> None:
        pair = (first, last)
        if pair not in self.people:
            self.people.append(pair)
            self._generation += 1

    def add_value(self, label: str, norm: str, entry: ValueEntry, surrogate_norm: str) -> None:
        self.values.setdefault(label, {})[norm] = entry
        self._used_values.setdefault(label, set()).add(surrogate_norm)
        self._generation += 1

    # ---- size ----------------------------------------------------------------------------
    def approx_size(self) -> int:
        """Approximate bytes held by this mapping (containers + strings), O(entries)."""
        gs = sys.getsizeof
        n = gs(self) + gs(self.names) + gs(self.name_real) + gs(self.aliases) + gs(self.people)
        n += gs(self.values) + gs(self._used_names) + gs(self._used_values)
        for k, v in self.names.items():
            n += gs(k) + gs(v)
        for v in self.name_real.values():
            n += gs(v)
        for k, v in self.aliases.items():
            n += gs(k) + gs(v)
        n += sum(gs(p) for p in self.people)
        n += gs(self.initials) + sum(gs(k) + gs(v) for k, v in self.initials.items())
        for s in self._used_names:
            n += gs(s)
        for d in self.values.values():
            n += gs(d)
            for k, e in d.items():
                n += gs(k) + gs(e) + gs(e.real) + gs(e.surrogate) + gs(e.aux)
        for s in self._used_values.values():
            n += gs(s) + sum(gs(x) for x in s)
        n += gs(self.tags) + gs(self.tags.numbers) + gs(self.tags.counters)
        n += sum(gs(k) + gs(k[1]) for k in self.tags.numbers)
        n += gs(self.tag_real) + sum(gs(k) + gs(v) for k, v in self.tag_real.items())
        return n

    # ---- serialisation (BinaryStateCodable: the state codec stores ``to_bytes()``) ----------
    def to_dict(self) -> dict:
        return {
            "v": FORMAT_VERSION,
            "s": self.session_id,
            "n": [[k, self.name_real.get(k, k), v] for k, v in self.names.items()],
            "a": [[k, v] for k, v in self.aliases.items()],
            "p": [list(p) for p in self.people],
            "i": dict(self.initials),
            "x": {
                label: [[k, e.real, e.surrogate, e.aux] for k, e in d.items()] for label, d in self.values.items()
            },
            "t": [[lbl, norm, n] for (lbl, norm), n in self.tags.numbers.items()],
            "tc": dict(self.tags.counters),
            "tr": dict(self.tag_real),
            **({"k": self.key.hex()} if self.key is not None else {}),
        }

    def to_bytes(self) -> bytes:
        """Compact, versioned encoding: ``b"PSM" + version byte + JSON``. Holds real values: encrypt it."""
        body = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return _MAGIC + bytes([FORMAT_VERSION]) + body

    @classmethod
    def from_bytes(cls, data: bytes) -> "SessionMapping":
        if len(data) < 4 or data[:3] != _MAGIC:
            raise StateFormatError("not a plainsight session mapping")
        if data[3] != FORMAT_VERSION:
            raise StateFormatError(f"unsupported session mapping format {data[3]}")
        try:
            d = json.loads(data[4:].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise StateFormatError("corrupt session mapping") from None
        return cls.from_dict(d)

    @classmethod
    def from_dict(cls, d: dict) -> "SessionMapping":
        try:
            m = cls(session_id=str(d["s"]))
            for k, real, sur in d.get("n", []):
                m.names[k] = sur
                m.name_real[k] = real
                m._used_names.add(fold(sur))
            m.aliases = {k: v for k, v in d.get("a", [])}
            m.people = [(a, b) for a, b in d.get("p", [])]
            m.initials = {str(k): str(v) for k, v in d.get("i", {}).items()}
            for label, rows in d.get("x", {}).items():
                dd = m.values.setdefault(label, {})
                used = m._used_values.setdefault(label, set())
                from .generators import surrogate_norm  # local: generators imports state

                for k, real, sur, aux in rows:
                    dd[k] = ValueEntry(real, sur, aux)
                    used.add(surrogate_norm(label, sur, aux))
            m.tags.numbers = {(lbl, norm): int(n) for lbl, norm, n in d.get("t", [])}
            m.tags.counters = {k: int(v) for k, v in d.get("tc", {}).items()}
            m.tag_real = {str(k): str(v) for k, v in d.get("tr", {}).items()}
            if d.get("k") is not None:
                m.key = bytes.fromhex(str(d["k"]))
                if len(m.key) != 32:
                    raise ValueError("session key")
        except (KeyError, TypeError, ValueError):
            raise StateFormatError("corrupt session mapping") from None
        return m
