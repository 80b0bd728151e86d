"""Name finding as one recognizer of the registry (the last one: it sees what the pattern
recognizers found, so tokens inside an e-mail address, a URL or an ID are never name candidates)."""

from __future__ import annotations

from typing import Callable, Sequence

from .base import Span, TurnContext
from .memory import SessionMemory
from .names import NameFinder
from .recognizer import Recognizer

#: Built-in labels whose spans hide name candidates ("https://www.VCShow.cz/", "maria.lopez@x.com").
CONTAINER_LABELS = frozenset({"URL", "EMAIL", "USERNAME", "ID_NUM", "PHONE"})

#: text -> PERSON ranges from the neural model, or None when it did not run on this turn.
NerHook = Callable[[str], "list[tuple[int, int]] | None"]


class NameRecognizer(Recognizer):
    """plainsight's name finding (:class:`~middleware.detection.names.NameFinder`): chat cues,
    session memory, keep rules and the learned reviewer. Reads and updates the session memory."""

    name = "names"
    labels = ("NAME",)
    descriptions = {"NAME": "the name of a real person"}
    surrogate = "shape"

    def __init__(self, finder: NameFinder | None = None, ner: NerHook | None = None,
                 container_labels: frozenset[str] = CONTAINER_LABELS) -> None:
        self.finder = finder if finder is not None else NameFinder(model=True)
        self.ner = ner
        self.container_labels = container_labels

    def find(self, text: str, ctx: TurnContext, memory: SessionMemory, found: Sequence[Span] = (),
             doubts: list | None = None, keeps: list | None = None) -> list[Span]:
        """NAME spans; ``doubts`` receives the model's unsure rejections (start, end, probability),
        ``keeps`` the name-like spans kept on purpose (start, end, evidence)."""
        ner = self.ner(text) if self.ner is not None else None
        blocked = [(s.start, s.end) for s in found if s.label in self.container_labels]
        return self.finder.find(text, ctx, memory, ner, doubts=doubts, blocked=blocked, keeps=keeps)

    def detect(self, text: str, ctx: TurnContext, memory: SessionMemory, found: Sequence[Span] = ()) -> list[Span]:
        """Name finding on its own (e.g. inside Presidio): the Latin-script finder, then names in
        other scripts introduced in the turn ("我叫王伟", "меня зовут Дима"). The cascade calls
        :meth:`find` and the script names itself, in its own order."""
        from . import script_names

        return [*self.find(text, ctx, memory, found), *script_names.find(text, memory)]
