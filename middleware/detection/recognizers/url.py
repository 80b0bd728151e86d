"""Personal URLs: profiles, personal sites, shared files, unknown sites a user points to
(public reference pages are kept)."""

from __future__ import annotations

import re

from ..base import Span, TurnContext
from ..recognizer import Recognizer
from ._text import _before, _split_host

_URL_SCHEME = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`]+", re.IGNORECASE)
_URL_WWW = re.compile(r"(?<![\w./@-])www\d?\.[^\s<>\"'`]+", re.IGNORECASE)
_URL_BARE = re.compile(
    r"(?<![\w.@/:-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?::\d{2,5})?(?:/[^\s<>\"'`]*)?"
)
#: Public suffixes accepted for a bare domain without a path ("myblog.net"); others ("yes.it",
#: "main.py", "done.now") are too often ordinary words or file names glued by a dot.
_BARE_SUFFIXES = frozenset(
    "com org net edu gov io info biz blog site online app dev xyz tv ca de fr nl se dk no ch pl cz hu pt br au nz "
    "uk ie jp cn ru eu es".split()
)
#: Hosts whose pages are public reference/course/docs material (not personal), unless the path
#: points at a user ("/user/...", "/@...", "/~...").
_PUBLIC_DOMAINS = frozenset(
    """
    wikipedia.org wikimedia.org wiktionary.org wikibooks.org wikihow.com britannica.com merriam-webster.com
    dictionary.com thesaurus.com khanacademy.org coursera.org edx.org udemy.com udacity.com mathsisfun.com
    mathworld.wolfram.com wolfram.com wolframalpha.com desmos.com geogebra.org purplemath.com brilliant.org
    ixl.com mathway.com symbolab.com cuemath.com byjus.com splashlearn.com mathplayground.com coolmath.com
    coolmathgames.com nrich.maths.org maths.org bbc.co.uk bbc.com nationalgeographic.com nasa.gov noaa.gov
    python.org docs.python.org w3schools.com developer.mozilla.org mozilla.org stackoverflow.com
    stackexchange.com readthedocs.io cppreference.com oracle.com microsoft.com apple.com google.com
    amazon.com youtube.com youtu.be scratch.mit.edu code.org quizlet.com kahoot.com kahoot.it gutenberg.org
    archive.org openstax.org ck12.org libretexts.org pbs.org pbslearningmedia.org sciencedirect.com
    jstor.org arxiv.org nature.com sciencemag.org physicsclassroom.com chem.libretexts.org
    """.split()
)
#: Hosts where any page with a path belongs to someone (profiles, personal sites, file shares).
_PERSONAL_DOMAINS = frozenset(
    """
    facebook.com fb.com instagram.com twitter.com x.com tiktok.com linkedin.com snapchat.com pinterest.com
    tumblr.com reddit.com twitch.tv discord.gg discord.com discordapp.com medium.com substack.com
    blogspot.com wordpress.com wixsite.com weebly.com squarespace.com github.io gitlab.io netlify.app
    vercel.app pages.dev glitch.me carrd.co linktr.ee about.me behance.net dribbble.com deviantart.com
    artstation.com soundcloud.com bandcamp.com vimeo.com flickr.com imgur.com patreon.com ko-fi.com
    onlyfans.com venmo.com paypal.me cash.app calendly.com zoom.us meet.google.com teams.microsoft.com
    drive.google.com docs.google.com sites.google.com photos.google.com photos.app.goo.gl dropbox.com
    onedrive.live.com 1drv.ms box.com wetransfer.com we.tl icloud.com mega.nz mediafire.com
    steamcommunity.com roblox.com replit.com codepen.io github.com gitlab.com bitbucket.org kik.me t.me
    wa.me telegram.me skype.com
    """.split()
)
_PERSONAL_PATH = re.compile(
    r"/(?:~|@)[\w.-]+|/(?:u|user|users|profile|profiles|people|member|members|in|channel|c|id|author|"
    r"student|students|portfolio|blog|photos|files|file|s|d|folders?|share|sharing|invite)/[\w.-]+"
    r"|[?&](?:user|userid|uid|id|profile|u|usp=sharing)[=&]",
    re.IGNORECASE,
)
_PUBLIC_SUFFIX_TAIL = re.compile(r"(?:^|\.)(?:edu|gov|mil|int|museum|ac\.[a-z]{2}|edu\.[a-z]{2}|gov\.[a-z]{2}|k12\.[a-z.]+)$")
_PERSONAL_URL_CONTEXT = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:own\s+|new\s+|personal\s+)?(?:web ?site|site|blog|page|homepage|home page|"
    r"channel|profile|portfolio|account|shop|store|link|vlog|podcast|video|photos?|pics?|art|stream)\b"
    r"|\b(?:follow|subscribe to|check out)\s+(?:me|my)\b|\bwebsite:"
)


def _trim_url(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in ".,;:!?'\"”’*":
        end -= 1
    while end > start and text[end - 1] in ")]}>":
        opener = {")": "(", "]": "[", "}": "{", ">": "<"}[text[end - 1]]
        if text[start:end].count(opener) >= text[start:end].count(text[end - 1]):
            break
        end -= 1
        while end > start and text[end - 1] in ".,;:!?'\"":
            end -= 1
    return end


class UrlRecognizer(Recognizer):
    """Personal URLs: profiles, personal sites, shared files, unknown sites a user points to.

    Public reference pages (encyclopedias, courses, docs, school and government pages) are
    left alone unless the path names a user. Bare domains ("myblog.net/anna") count when they
    have a path or a common suffix; without a path, only if the context says it is theirs.
    """

    name = "url"
    labels = ("URL",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if "." not in text:
            return []
        out: list[Span] = []
        taken: list[tuple[int, int]] = []
        for rx, kind in ((_URL_SCHEME, "scheme"), (_URL_WWW, "www"), (_URL_BARE, "bare")):
            for m in rx.finditer(text):
                start = m.start()
                end = _trim_url(text, start, m.end())
                if any(s < end and start < e for s, e in taken):
                    continue
                url = text[start:end]
                score = self._classify(text, start, end, url, kind)
                if score is None:
                    continue
                taken.append((start, end))
                out.append(Span(start, end, "URL", self.name, score))
        return out

    def _classify(self, text: str, start: int, end: int, url: str, kind: str) -> float | None:
        rest = re.sub(r"^(?:https?|ftp)://", "", url, flags=re.I)
        host, _, path = rest.partition("/")
        path = "/" + path if _ else ""
        query = ""
        if "?" in host:
            host, _, query = host.partition("?")
        host = host.split("@")[-1].split(":")[0].lower().rstrip(".")
        if not host or re.fullmatch(r"[\d.]+", host):
            return None if kind == "bare" else 0.75
        sub, reg, suffix = _split_host(host)
        if not suffix or not reg:
            return None
        if kind == "bare":
            if "@" in text[max(0, start - 1) : start]:
                return None
            if not path and suffix.split(".")[-1] not in _BARE_SUFFIXES:
                return None
            if path and not re.match(r"/[\w~@%.-]", path):
                return None
        full_host = host[4:] if host.startswith("www.") else host
        hosts = {full_host, reg}
        if len(full_host.split(".")) > 2:
            hosts.add(".".join(full_host.split(".")[-3:]))
        personal_path = bool(_PERSONAL_PATH.search(path + ("?" + query if query else "")))
        meaningful_path = bool(re.sub(r"[/#?]+", "", path))
        if hosts & _PERSONAL_DOMAINS:
            # a bare "facebook.com" is a company; "facebook.com/maria.l" is a person
            if meaningful_path or sub not in ("", "www", "m"):
                return 0.9
            return None
        if personal_path:
            return 0.9
        if hosts & _PUBLIC_DOMAINS or _PUBLIC_SUFFIX_TAIL.search(full_host):
            return None
        context = bool(_PERSONAL_URL_CONTEXT.search(_before(text, start, 60)))
        if kind == "bare" and not meaningful_path:
            return 0.85 if context else None
        return 0.85 if context else 0.75
