"""Helpers for the surrogate tests: turns written with inline span markers."""

from __future__ import annotations

import re

from plainsight.middleware.detection.base import Span

_MARK = re.compile(r"\[\[(.+?)\|([A-Z_]+)\]\]", re.S)


def parse(marked: str) -> tuple[str, list[Span]]:
    """``"Hi [[Maria|NAME]]!"`` → ``("Hi Maria!", [Span(3, 8, "NAME", "test")])``."""
    out: list[str] = []
    spans: list[Span] = []
    pos = 0
    length = 0
    for m in _MARK.finditer(marked):
        chunk = marked[pos : m.start()]
        out.append(chunk)
        length += len(chunk)
        value, label = m.group(1), m.group(2)
        spans.append(Span(length, length + len(value), label, "test"))
        out.append(value)
        length += len(value)
        pos = m.end()
    out.append(marked[pos:])
    return "".join(out), spans


# A 40-turn tutoring session: the same people come back with case, possessive, partial and
# misspelt mentions, plus contact details in several layouts.
DIALOGUE_40 = [
    "student: hi, I'm [[Maria Lopez|NAME]] from grade 7",
    "tutor: Welcome [[Maria|NAME]]! What are we working on?",
    "student: fractions. my brother [[Daniel|NAME]] said they are easy lol",
    "tutor: [[Daniel|NAME]] is right, they get easier. Ready, [[maria|NAME]]?",
    "student: yes. [[Mr. Chen|NAME]] gave us homework",
    "tutor: What did [[Mr. Chen|NAME]] assign?",
    "student: page 12. btw my email is [[maria.lopez@gmail.com|EMAIL]]",
    "tutor: Thanks [[Maria|NAME]], noted.",
    "student: and my school email is [[mlopez@lincoln.k12.ne.us|EMAIL]]",
    "tutor: Got it.",
    "student: [[MARIA|NAME]] IS TIRED",
    "tutor: Let's take a short break, [[Maria|NAME]].",
    "student: [[Daniel Lopez|NAME]] wants to join too",
    "tutor: Sure, [[Daniel|NAME]] can join.",
    "student: [[Daniel's|NAME]] phone is [[(415) 555-2671|PHONE]]",
    "tutor: I can't call anyone, but noted.",
    "student: ok [[Lopez|NAME]] family rules lol",
    "tutor: Ha! Back to fractions, [[Maria|NAME]].",
    "student: 1/2 + 1/4 = 3/4?",
    "tutor: Correct!",
    "student: my username on the class site is [[maria_lopez07|USERNAME]]",
    "tutor: Good to know.",
    "student: [[Mraia|NAME]] is my nickname, typo lol",
    "tutor: Got it, [[Maria|NAME]].",
    "student: also call [[415-555-2671|PHONE]] if you need [[Daniel|NAME]]",
    "tutor: Thanks.",
    "student: [[ms. garcia|NAME]] is our principal",
    "tutor: Say hi to [[Ms. Garcia|NAME]] for me.",
    "student: [[Chen|NAME]] says [[Garcia|NAME]] is strict",
    "tutor: Teachers care, [[Maria|NAME]].",
    "student: my student id is [[S-20231187|ID_NUM]]",
    "tutor: Please keep ids private.",
    "student: ok. [[maria lopez|NAME]] signing off soon",
    "tutor: One more problem: 2/3 of 9?",
    "student: 6",
    "tutor: Great work, [[Maria|NAME]]!",
    "student: [[Daniel|NAME]] says bye too",
    "tutor: Bye [[Daniel|NAME]] and [[Maria|NAME]]!",
    "student: see github.com/[[mlopez07|USERNAME]] for my project",
    "tutor: Will do. See you next time, [[Maria Lopez|NAME]].",
]
