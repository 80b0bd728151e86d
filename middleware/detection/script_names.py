"""Names written in a non-Latin script, found by the self-introduction around them.

The name lexicon (``names-dataset``) and the learned reviewer know names in Latin letters; a
student who writes "我叫王伟" or "меня зовут Дима" introduces themself in their own script, and the
name there has no capital letter the English rules could use (Han, Kana, Hangul, Arabic, Hebrew,
Devanagari, Thai have no case). This small recognizer reads the introduction phrase of the
language (a closed list, below) and takes the name that follows it:

* Chinese: 我叫 X, 我名叫 X, 我的名字(是|叫) X, 叫我 X — X is 2-4 Han characters (a surname and a
  given name); a trailing particle or the start of the next clause (今, 是, 的, 在, ...) ends it.
* Japanese: 私は X です, 私の名前は X です, X と申します / X といいます.
* Korean: 제 이름은 X(입니다|이에요|예요), 저는 X(입니다|이에요|예요), X(이)라고 합니다.
* Russian / Ukrainian / Belarusian / Bulgarian: меня зовут X, моё имя X, мене звати X, казвам се X
  (one or two Cyrillic words; the second only when capitalised: "меня зовут Дима Иванов").
* Greek: με λένε X, ονομάζομαι X, το όνομά μου είναι X.
* Arabic / Persian: اسمي X, اسم من X (one or two words).
* Hebrew: קוראים לי X, שמי X.
* Hindi / Marathi: मेरा नाम X (है), माझे नाव X.
* Thai: ผมชื่อ X / ฉันชื่อ X / หนูชื่อ X (up to the next space or particle).
* English introductions of a name in one of these scripts: "my name is 李明", "I'm Дима".

The name joins the session memory as a self-introduction, so later mentions in a spaced script
("Дима, смотри") are found by the name finder, and in an unspaced one (Han, Kana, Hangul, Thai)
by :func:`find` itself. Spans are NAME with source ``names-script`` and evidence ``intro``.
"""

from __future__ import annotations

import re

from .base import Span
from .memory import SessionMemory

SOURCE = "names-script"

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff"
_KANA = r"\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HANGUL = r"\uac00-\ud7af"
_CYR = r"\u0400-\u04ff"
_GREEK = r"\u0370-\u03ff\u1f00-\u1fff"
_ARABIC = r"\u0600-\u06ff\u0750-\u077f"
_HEBREW = r"\u05d0-\u05ea"
_DEVA = r"\u0900-\u097f"
_THAI = r"\u0e00-\u0e7f"

#: Han characters that end a name run ("我叫王伟今年十岁": 今 starts the next clause).
_HAN_STOP = set("今是的在了我你他她们和也很呢吗吧啊呀哦，。！？、；：年岁住来从同学老师")

_INTROS: list[tuple[re.Pattern, str]] = [
    # Chinese (simplified and traditional)
    (re.compile(rf"(?:我叫|我名叫|我的名字(?:是|叫)|叫我|我姓名是)\s*(?P<name>[{_HAN}]{{2,4}})"), "han"),
    # Japanese
    (re.compile(rf"(?:私|わたし|僕|ぼく|俺)(?:の名前)?は\s*(?P<name>[{_HAN}{_KANA}]{{1,8}}?)\s*(?:です|だ|と申します|といいます)"), "ja"),
    (re.compile(rf"(?P<name>[{_HAN}{_KANA}]{{1,8}}?)(?:と申します|といいます|と言います)"), "ja"),
    # Korean
    (re.compile(rf"(?:제\s*이름은|내\s*이름은|저는|나는)\s*(?P<name>[{_HANGUL}]{{2,4}}?)(?:입니다|이에요|예요|이야|야|라고|이라고)"), "ko"),
    # Cyrillic
    (re.compile(rf"(?i:меня\s+зовут|мо[её]\s+имя|мене\s+звати|мяне\s+завуць|казвам\s+се|името\s+ми\s+е|зовите\s+меня)"
                rf"\s*[:—–-]?\s*(?P<name>[{_CYR}][{_CYR}'’-]+(?:\s+[А-ЯЁЇІЄҐ][{_CYR}'’-]+)?)"), "cyr"),
    # Greek
    (re.compile(rf"(?i:με\s+λένε|ονομάζομαι|το\s+όνομά\s+μου\s+είναι|με\s+λενε|ονομαζομαι)"
                rf"\s*(?P<name>[{_GREEK}][{_GREEK}'’-]+(?:\s+[Α-ΩΆ-Ώ][{_GREEK}'’-]+)?)"), "el"),
    # Arabic / Persian
    (re.compile(rf"(?:اسمي|إسمي|اسم\s+من|نام\s+من)\s*(?P<name>[{_ARABIC}]{{2,}}(?:\s+[{_ARABIC}]{{2,}})?)"), "ar"),
    # Hebrew
    (re.compile(rf"(?:קוראים\s+לי|שמי|השם\s+שלי)\s*(?P<name>[{_HEBREW}]{{2,}})"), "he"),
    # Hindi / Marathi
    (re.compile(rf"(?:मेरा\s+नाम|माझे\s+नाव|मेरा\s+नाम\s+है)\s*(?P<name>[{_DEVA}]{{2,}}(?:\s+[{_DEVA}]{{2,}})?)"), "hi"),
    # an English introduction of a name in another script ("my name is 李明", "I'm Дима")
    (re.compile(rf"(?i:my\s+name\s+is|my\s+name's|i'm|i\s+am|call\s+me|this\s+is)\s*[:-]?\s*"
                rf"(?P<name>[{_HAN}]{{2,4}}|[{_KANA}{_HAN}]{{2,8}}|[{_HANGUL}]{{2,4}}|[{_THAI}]{{2,12}}|"
                rf"(?:[{_CYR}]{{2,}}|[{_GREEK}]{{2,}}|[{_ARABIC}]{{2,}}|[{_HEBREW}]{{2,}}|[{_DEVA}]{{2,}})(?:\s+[^\sA-Za-z\d.,!?]{{2,}})?)"), "any"),
    # Thai
    (re.compile(rf"(?:ผม|ฉัน|หนู|ดิฉัน|เรา)ชื่อ\s*(?P<name>[{_THAI}]{{2,12}}?)(?=\s|ครับ|ค่ะ|คะ|นะ|$)"), "th"),
]

#: What the name can't be (Hindi "है" is the verb; Arabic/Persian "هو"/"است" likewise).
_NOT_NAMES = frozenset({"है", "हैं", "था", "است", "هو", "هي", "是", "什么", "什麼", "谁", "誰"})
#: Words a spaced-script introduction ends on that are not part of the name ("мое имя Дима и ...").
_TRAILING = frozenset({"है", "и", "а", "но", "και", "و"})
_DEVA_TAIL = re.compile(r"\s+(?:है|हैं|था)$")
#: Quick gate: any of the scripts above in the text.
_ANY = re.compile(rf"[{_HAN}{_KANA}{_HANGUL}{_CYR}{_GREEK}{_ARABIC}{_HEBREW}{_DEVA}{_THAI}]")
#: Scripts written without spaces: later mentions are found here by substring.
_UNSPACED = re.compile(rf"^[{_HAN}{_KANA}{_HANGUL}{_THAI}]+$")


def _trim(name: str, kind: str) -> str:
    if kind == "han":
        for i, ch in enumerate(name):
            if i >= 2 and ch in _HAN_STOP:
                return name[:i]
        return name
    name = _DEVA_TAIL.sub("", name)
    parts = name.split()
    while len(parts) > 1 and parts[-1].casefold() in _TRAILING:
        parts.pop()
    return " ".join(parts)


def find(text: str, memory: SessionMemory | None = None) -> list[Span]:
    """NAME spans of non-Latin-script names introduced in ``text`` (and, with ``memory``, later
    mentions of such names in unspaced scripts); introduced names are added to ``memory``."""
    if not _ANY.search(text):
        return []
    out: list[Span] = []
    for rx, kind in _INTROS:
        for m in rx.finditer(text):
            name = _trim(m.group("name"), kind)
            if len(name) < (2 if kind != "ja" else 1) or name in _NOT_NAMES:
                continue
            start = m.start("name")
            end = start + len(name)
            if any(s.start < end and start < s.end for s in out):
                continue
            out.append(Span(start, end, "NAME", SOURCE, 0.95, "intro"))
            if memory is not None:
                memory.add_person(name, 2.0)
    if memory is not None and memory.people:
        for key, strength in memory.people.items():
            if strength < 1.0 or not _UNSPACED.match(key):
                continue
            for m in re.finditer(re.escape(key), text):
                if not any(s.start < m.end() and m.start() < s.end for s in out):
                    out.append(Span(m.start(), m.end(), "NAME", SOURCE, 0.95, "memory"))
    return sorted(out, key=lambda s: s.start)
