"""Handles (@maria_l) and user names introduced as such ("my discord is kitty_99")."""

from __future__ import annotations

import re

from ..base import Span, TurnContext
from ..recognizer import Recognizer

_HANDLE = re.compile(r"(?<![\w@.+-])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?(?![\w@]|\.[A-Za-z])")
_NOT_HANDLES = frozenset({"everyone", "here", "channel", "all", "admin", "mention"})
_PLATFORMS = (
    r"discord|insta|instagram|ig|snap|snapchat|tiktok|tik tok|twitter|gamer ?tag|gamertag|xbox(?: live)?|"
    r"psn|ps4|ps5|playstation|steam|epic(?: games)?|roblox|minecraft|fortnite|valorant|"
    r"github|gitlab|reddit|twitch|youtube|yt|kik|telegram|skype|scratch|replit|chess\.com|lichess|duolingo|"
    r"wechat|whatsapp|"
    # mail accounts by their provider ("my outlook is samkellerman12"): a handle-like name only
    r"outlook|gmail|hotmail|yahoo|icloud|aol|proton(?:mail)?"
)
#: Platform names that are also ordinary words ("my snap is ..."), and mail providers named as an
#: account ("my gmail is full"): the name must look like a handle.
_AMBIGUOUS_PLATFORMS = re.compile(r"\b(?:snap|steam|epic|scratch|yt|outlook|gmail|hotmail|yahoo|icloud|aol|proton(?:mail)?)\b(?!\s*(?:user ?name|name|id|tag|handle))", re.I)
_USERNAME_CONTEXT = re.compile(
    # "my username on the school site is mlopez2009": a user-name word, where it is used, then "is";
    # the lookahead holds every first letter of the alternatives: the same matches, found ~1.8x faster
    r"(?=[adfghilmotuy])(?:\b(?:my|his|her|your|their|our)\s+(?:user ?name|user ?id|login(?: name)?|log ?in|handle|screen ?name|"
    r"display ?name|account(?: name)?|gamer ?tag|ign|nick(?:name)?)\s+(?:on|for|at|in)\s+(?:[\w.'’-]+\s+){0,4}?"
    r"(?:is|was|=|:)\s*(?:(?:it's|its|just|literally)\s+)?[\"'“‘]?"
    rf"|\b(?:my|his|her|your|their|our)\s+(?:(?:{_PLATFORMS})\s*(?:user ?name|name|id|tag|handle|account|profile|ign|acc)?|"
    r"user ?name|user ?id|user|handle|screen ?name|display ?name|ign|gamer ?tag|login(?: name)?|log ?in|account name|"
    r"account|nick(?:name)?)"
    r"\s*(?:is|was|=|:|-|'s|’s)?\s*(?:(?:it's|its|just|literally)\s+)?[\"'“‘]?"
    rf"|(?:\b(?:add|follow|find|dm|message|friend|text)\s+me|\b(?:i'm|i’m|im|i\s+am)|\bme)\s+(?:on|at)\s+(?:{_PLATFORMS})\s*(?:[:,-]|\bas\b|\bit's\b|\bits\b|\bit’s\b|\bit is\b|\bis\b)?\s*[\"'“‘]?"
    r"|\b(?:user ?name|user ?id|handle|ign|gamer ?tag|login)\s*[:=]\s*)",
    re.IGNORECASE,
)
_USERNAME_TOKEN = re.compile(r"@?[A-Za-z0-9_][A-Za-z0-9_.#-]{1,31}(?<![.#-])")
_NOT_USERNAMES = frozenset(
    """
    a an the is was are be been my your his her their our same different private public down up gone banned
    hacked deleted new old cool not it its it's this that there here on in at of and or but so if same
    also just really very still like name user password account what which who how why where when
    broken locked closed open blocked suspended disabled weird long short funny secret easy hard
    """.split()
)


class UsernameRecognizer(Recognizer):
    """Handles (@maria_l) and user names introduced as such ("my discord is kitty_99",
    "my roblox username: CoolKid2011", "add me on insta, maria.lopez")."""

    name = "username"
    labels = ("USERNAME",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        out: list[Span] = []
        if "@" in text:
            for m in _HANDLE.finditer(text):
                handle = m.group()[1:]
                if not any(c.isalnum() for c in handle) or handle.casefold() in _NOT_HANDLES or re.fullmatch(r"[\d.:]+(?:am|pm)?", handle, re.I):
                    continue
                out.append(Span(m.start(), m.end(), "USERNAME", self.name, 0.9))
        for c in _USERNAME_CONTEXT.finditer(text):
            m = _USERNAME_TOKEN.match(text, c.end())
            if not m:
                continue
            tok = m.group()
            # "#1234" discriminators (old Discord tags) belong to the name
            if any(s.start <= m.start() < s.end for s in out):
                continue
            bare = tok.lstrip("@")
            if bare.casefold() in _NOT_USERNAMES or len(bare) < 3:
                continue
            if re.fullmatch(r"[\d\s-]+", bare):
                continue  # digits only: an ID number, IdNumberRecognizer's job
            connector = re.search(r"(?:\bis|\bwas|[=:\-\"'“‘,]|'s|’s|\bas|\bit's|\bits|\bit’s)\s*$", c.group(), re.IGNORECASE)
            handle_like = bool(re.search(r"[\d_.#]|[a-z][A-Z]", bare))
            if not (connector or handle_like):
                continue  # "my account stays active"
            if not handle_like and re.search(r"\bit(?:'|’)?s\s*$", c.group(), re.IGNORECASE) \
                    and not re.search(r"\b(?:is|was)\s+(?:it(?:'|’)?s)\s*$|[=:]\s*(?:it(?:'|’)?s)\s*$", c.group(), re.IGNORECASE):
                continue  # "on my account its annoying": "its" after a platform needs a handle-like name
            if not handle_like and _AMBIGUOUS_PLATFORMS.search(c.group()):
                continue
            if "@" in text[m.end() : m.end() + 1]:
                continue  # an e-mail address follows
            out.append(Span(m.start(), m.end(), "USERNAME", self.name, 0.85))
        return out
