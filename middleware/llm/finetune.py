"""The research's fine-tuning loop: labelled dialogues → OpenAI chat fine-tuning JSONL.

Each example is built with *exactly* the messages the LLM stage sends for that turn
(:class:`~middleware.llm.prompts.Prompts`: the system prompt, the few-shot examples, the last
``context`` turns of the session *as the pipeline outputs them* — de-identified, here with the gold
spans replaced by session-consistent surrogates — and the raw current turn), followed by the answer
a perfect model gives: the turn echoed with the gold spans in their markers (``marking``) or the
JSON listing (``json``). A turn holding a marker string is exported in JSON mode in both cases,
because that is what the stage sends for it. The few-shot answers carry ``"weight": 0`` so only
the turn's own answer is trained on.

Dialogues, not turns, are split into training and validation (a dialogue's turns share names),
by a hash of the dialogue id and line, so the split is stable from run to run.

Tokens are estimated like the stage's throttle does (characters / 4 plus per-message overhead):
no tokenizer download is needed. The training cost is tokens × epochs × the price per 1M training
tokens (gpt-4o-mini's list price by default).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..detection.base import Span
from ..replace import Replacer, merge_adjacent
from .align import contains_markers
from .client import estimate_tokens
from .prompts import ContextTurn, Prompts, _defuse

#: OpenAI list price for training gpt-4o-mini, USD per 1M training tokens.
DEFAULT_TRAIN_PRICE_PER_1M = 3.0
DEFAULT_EPOCHS = 3


@dataclass
class Example:
    """One fine-tuning example and what it was built from (for tests and reports)."""

    messages: list[dict[str, Any]]
    #: "marking" or "json": the stage's call this example imitates
    mode: str
    dialogue: str
    turn: int
    text: str
    #: the gold spans (labels the prompts know) the answer encodes
    gold: list[Span] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return self.messages[-1]["content"]

    def record(self) -> dict[str, Any]:
        return {"messages": self.messages}


@dataclass
class ExportReport:
    train_examples: int = 0
    validation_examples: int = 0
    train_dialogues: int = 0
    validation_dialogues: int = 0
    train_tokens: int = 0
    validation_tokens: int = 0
    json_fallback: int = 0
    skipped_too_long: int = 0
    epochs: int = DEFAULT_EPOCHS
    price_per_1m: float = DEFAULT_TRAIN_PRICE_PER_1M
    train_path: str = ""
    validation_path: str | None = None

    @property
    def estimated_cost_usd(self) -> float:
        return self.train_tokens * self.epochs * self.price_per_1m / 1e6

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["estimated_cost_usd"] = round(self.estimated_cost_usd, 4)
        return d


def marked_answer(text: str, spans: Sequence[Span], markers: dict[str, tuple[str, str]]) -> str:
    """``text`` with every span wrapped in its label's markers (spans of unknown labels skipped)."""
    out: list[str] = []
    pos = 0
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if s.label not in markers or s.start < pos:
            continue
        o, c = markers[s.label]
        out += [text[pos : s.start], o, text[s.start : s.end], c]
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def json_answer(text: str, spans: Sequence[Span], labels: Iterable[str]) -> str:
    labels = set(labels)
    ents: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for s in sorted(spans, key=lambda s: (s.start, s.end)):
        key = (text[s.start : s.end], s.label)
        if s.label in labels and key not in seen:
            seen.add(key)
            ents.append({"text": key[0], "label": key[1]})
    return json.dumps({"entities": ents}, ensure_ascii=False)


def in_validation(dialogue_key: str, fraction: float) -> bool:
    if fraction <= 0:
        return False
    h = int(hashlib.sha1(dialogue_key.encode("utf-8")).hexdigest()[:8], 16)
    return h / 0xFFFFFFFF < fraction


def _gold_spans(dialogue: dict, turn: int, text: str, labels: frozenset[str]) -> list[Span]:
    out = []
    for g in dialogue.get("spans") or []:
        if int(g["turn"]) != turn or g["label"] not in labels:
            continue
        a, b = int(g["start"]), int(g["end"])
        if 0 <= a < b <= len(text):
            out.append(Span(a, b, str(g["label"]), "gold"))
    return sorted(out, key=lambda s: (s.start, s.end))


class Exporter:
    """Builds the examples of dialogues with the settings' prompts, labels and output mode."""

    def __init__(self, settings, *, replacer: Replacer, mode: str = "marking", context_turns: int | None = None) -> None:
        """``replacer``: what the pipeline replaces with (``surrogate.pipeline.build_replacer``), so
        the context turns read exactly as the stage will see them."""
        if mode not in ("marking", "json"):
            raise ValueError("mode must be 'marking' or 'json'")
        self.settings = settings
        self.mode = mode
        self.context_turns = settings.llm.context_turns if context_turns is None else int(context_turns)
        if self.context_turns < 0:
            raise ValueError("context must be >= 0")
        self.prompts = Prompts.load(settings.llm.prompts_dir, settings.detection.labels)
        self.labels = frozenset(self.prompts.labels)
        self.replacer = replacer

    def dialogue_examples(self, dialogue: dict, key: str) -> Iterator[Example | None]:
        """The examples of one dialogue in turn order (None for a turn the stage never sends)."""
        state = self.replacer.new_state(key)
        history: list[ContextTurn] = []
        out_mode = self.settings.output.logs_mode
        for i, turn in enumerate(dialogue.get("turns") or []):
            text = turn.get("text") or ""
            if not text.strip():
                continue  # the worker dead-letters empty turns
            role = str(turn.get("speaker") or "student")[:64] or "student"
            gold = _gold_spans(dialogue, i, text, self.labels)
            context = history[-self.context_turns :] if self.context_turns else []
            if len(text) > self.settings.llm.max_turn_chars:
                yield None  # the stage fails closed on it without asking the model
            else:
                mode = self.mode
                if mode == "marking" and contains_markers(text, self.prompts.all_markers):
                    mode = "json"
                if mode == "marking":
                    msgs = self.prompts.marking(text, role, context)
                    # the echo of what the model is shown ("<current_turn>" typed in a turn is
                    # defused to "<current turn>": same length, same offsets)
                    answer = marked_answer(_defuse(text), gold, self.prompts.markers)
                else:
                    msgs = self.prompts.json(text, role, context)
                    answer = json_answer(text, gold, self.labels)
                msgs = [dict(m) for m in msgs]
                for m in msgs:  # few-shot answers are part of the prompt, not training targets
                    if m["role"] == "assistant":
                        m["weight"] = 0
                msgs.append({"role": "assistant", "content": answer})
                yield Example(msgs, mode, key, i, text, gold)
            # the session's context entry is this turn as the pipeline outputs it (logs topic)
            rendered, _ = self.replacer.replace(text, merge_adjacent(text, gold), state, out_mode)
            history.append((role, rendered))


def export_finetune(
    settings,
    dialogues: Iterable[dict],
    train_path: str | Path,
    *,
    replacer: Replacer,
    mode: str = "marking",
    context_turns: int | None = None,
    validation: float = 0.1,
    validation_path: str | Path | None = None,
    epochs: int = DEFAULT_EPOCHS,
    price_per_1m: float = DEFAULT_TRAIN_PRICE_PER_1M,
) -> ExportReport:
    """Write the training (and validation) JSONL; return counts, tokens and the cost estimate."""
    if not 0 <= validation < 1:
        raise ValueError("validation must be in [0, 1)")
    exp = Exporter(settings, replacer=replacer, mode=mode, context_turns=context_turns)
    train_path = Path(train_path)
    if validation > 0 and validation_path is None:
        validation_path = train_path.with_name(train_path.stem + ".validation" + (train_path.suffix or ".jsonl"))
    rep = ExportReport(epochs=epochs, price_per_1m=price_per_1m, train_path=str(train_path),
                       validation_path=str(validation_path) if validation > 0 else None)
    ft = open(train_path, "w", encoding="utf-8")
    fv = open(validation_path, "w", encoding="utf-8") if validation > 0 else None
    try:
        for line, d in enumerate(dialogues, 1):
            key = f"{d.get('id') or 'dialogue'}#{line}"  # ids repeat in some files: the line keeps them apart
            val = fv is not None and in_validation(key, validation)
            n = 0
            for ex in exp.dialogue_examples(d, key):
                if ex is None:
                    rep.skipped_too_long += 1
                    continue
                rep.json_fallback += ex.mode == "json" and mode == "marking"
                tokens = estimate_tokens(ex.messages)
                (fv if val else ft).write(json.dumps(ex.record(), ensure_ascii=False) + "\n")
                n += 1
                if val:
                    rep.validation_examples += 1
                    rep.validation_tokens += tokens
                else:
                    rep.train_examples += 1
                    rep.train_tokens += tokens
            if n:
                if val:
                    rep.validation_dialogues += 1
                else:
                    rep.train_dialogues += 1
    finally:
        ft.close()
        if fv is not None:
            fv.close()
    return rep
