"""Postal addresses: a street line found by its shape, grown over the unit, city, state,
country and postcode that follow it (on the same line or the next lines).

Street-line shapes (any of):
  * number + name + street type: "12 Oak Street", "1737 Cheriton Dr", "9 N. Main St."
  * number + street type + name: "95 Avenue des Tuileries", "26 rue de Tanger"
  * street word + name + number: "Via Roma 131", "ul. Słowicza 10", "Rua Mina 50"
  * name with a street suffix + number: "Koskikatu 25", "Nybyvägen 65", "Augsburger Strasse 36"
  * P.O. boxes and US military addresses: "PSC 0413, Box 8144 APO AA 42323", "USNS Bergman FPO AP 93757"
  * a capitalised name + number ("Buerlia 227") only right after an address cue ("lives at",
    "my address is", "send it to")
Maths never has these shapes with a street word; the bare "Name + number" needs a cue.
"""

from __future__ import annotations

import re

from .base import Span, TurnContext

_L = r"[^\W\d_]"  # a letter, any script
_W = rf"{_L}[\w'’.-]*"  # a word starting with a letter
_CAP = r"[^\W\d_a-zß-ÿ]"  # an upper-case (or caseless) letter

def _cased(words: str) -> str:
    """'street|st' -> 'Street|STREET|St|ST' (a street word is written capitalised or in capitals)."""
    out = []
    for w in words.split("|"):
        out += [w[:1].upper() + w[1:], w.upper()]
    return "|".join(sorted(set(out), key=len, reverse=True))


_STREET_TYPES = (
    "street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|terr|"
    "close|crescent|cres|circle|cir|highway|hwy|parkway|pkwy|square|trail|trl|alley|grove|gardens|loop|"
    "bypass|pike|plaza|heights|mews|hill|coves|cove|harbor|harbour|prairie|radial|squares|extensions|"
    "extension|islands|motorway|expressway|freeway|causeway|esplanade|promenade|quay|wharf|route|rte|"
    "corners|crossing|spur|viaduct|ridge|estates|meadows|commons|green|park|row|walk|view|vista|run"
)
_PREFIX_TYPES = (
    "via|viale|vicolo|corso|piazza|piazzetta|largo|rue|avenue|av|avda|avenida|calle|carrer|camino|paseo|"
    "plaza|praça|rua|travessa|estrada|alameda|boulevard|chaussée|chemin|allée|ulica|aleja|strada|odos|leof"
)
_PREFIX_ABBR = r"(?:ul\.|al\.|bd\.|str\.|Av\.|trg|Trg|TRG|UL\.|AV\.)"
_SUFFIXES = (
    r"katu|kuja|tie|polku|gatan|gata|gränd|vägen|väg|vej|vejen|gade|veien|vegen|vei|veg|gate|"
    r"straße|strasse|straat|weg|gasse|laan|plein|dreef|utca|útja|allee|platz|steig|"
    r"iela|gatve|ulica|cesta|ulice|brekka|braut|stígur|vegur|sokak|caddesi|vænget|stræti|stræde"
)
_NUM = r"\d{1,6}[A-Za-z]?(?:[-/]\d{1,4}[A-Za-z]?)?"
_UNIT_WORD = r"(?:Apt|APT|Apartment|Suite|SUITE|Ste|Unit|UNIT|Flat|Box|BOX|Floor|Room)\b"
_CW = rf"(?!{_UNIT_WORD}){_CAP}[\w'’.-]*"  # a capitalised word (not a unit word)
_PARTICLES = r"(?:de|des|du|la|le|les|del|della|da|do|dos|das|di|van|von|der|den|d'|l')"

_STREET_RX = (
    rf"(?<![\w.-])(?:"
    # 12 Oak Street / 9 N. Main St. / 1436 Redbud Drive
    rf"{_NUM}[ \t]+(?:[NSEW]\.?[ \t]+)?(?:{_CW}[ \t]+){{0,3}}{_CW}[ \t]+(?:{_cased(_STREET_TYPES)})\b\.?"
    rf"|{_NUM}[ \t]+(?:[NSEW]\.?[ \t]+)?{_CW}[ \t]+(?:St|Rd|Ave|Dr|Ln|Blvd|Ct)\b\.?"
    # 95 Avenue des Tuileries / 26 rue de Tanger
    rf"|{_NUM}[ \t]+(?:{_cased(_PREFIX_TYPES)}|rue|avenue|via|calle|rua)\.?[ \t]+(?:{_PARTICLES}[ \t]+)*{_L}[\w'’.-]*(?:[ \t]+(?:{_PARTICLES}[ \t]+)?{_CW}){{0,3}}(?:[ \t]+{_NUM}\b)?"
    # Via Roma 131 / ul. Słowicza 10 / Rue de Kairouan 12
    rf"|(?:{_cased(_PREFIX_TYPES)}|{_PREFIX_ABBR})[ \t]+(?:(?:{_PARTICLES}[ \t]+)?{_CW}[ \t]+){{1,5}}{_NUM}\b"
    # an intersection: "the corner of Oak Street and 5th Avenue"
    rf"|(?i:the[ \t]+corner[ \t]+of)[ \t]+(?:[\w'’.-]+[ \t]+){{1,5}}?and[ \t]+(?:{_CW}[ \t]+){{0,3}}{_CW}"
    # Koskikatu 25 / Nybyvägen 65 / Augsburger Strasse 36 / Wesselényi u. 94.
    rf"|(?:{_CW}[ \t]+){{0,2}}{_CAP}[\w'’-]*?(?i:{_SUFFIXES})[ \t]+{_NUM}\b"
    rf"|(?:{_CW}[ \t]+){{1,2}}(?:u\.|út|utca|Str\.|Strasse|Straße|Gasse|Weg|Vej|Gade|Vei|Gate|Laan|Straat|Street|St\.)[ \t]+{_NUM}\b\.?"
    # P.O. Box 287 / PSC 0413, Box 8144 / Unit 4719 Box 7394 / USNS Bergman
    rf"|(?i:p\.?\s?o\.?\s?box|post(?:al)?[ \t]+box|postbox)[ \t]+\d{{1,6}}"
    rf"|(?i:psc|cmr|unit)[ \t]+\d{{3,5}},?[ \t]+(?i:box)[ \t]+\d{{3,5}}"
    rf"|(?:USNS|USNV|USCGC|USS|USNV|usns|usnv|uscgc|uss)[ \t]+{_L}[\w'’-]*(?=,?\s*\n?\s*(?i:[adf]po)\b)"
    rf")"
)
_STREET = re.compile(_STREET_RX)
#: All-lowercase chat ("i live at 12 oak street"): the same shapes, any case, after an address cue.
_STREET_ANYCASE = re.compile(
    rf"(?<![\w.-]){_NUM}[ \t]+(?:[nsew]\.?[ \t]+)?(?:{_W}[ \t]+){{0,3}}(?i:{_STREET_TYPES})\b\.?"
    rf"|(?<![\w.-])(?i:{_PREFIX_TYPES}|ul\.|al\.|trg)[ \t]+(?:{_W}[ \t]+){{0,4}}{_NUM}\b"
    rf"|(?<![\w.-])(?:{_W}[ \t]+){{0,2}}{_L}[\w'’-]*?(?i:{_SUFFIXES})[ \t]+{_NUM}\b"
)
_MILITARY_TAIL = re.compile(r",?\s*\n?\s*(?i:[adf]po)\s+(?i:a[aep])\s+\d{5}")
_STRONG_CUE = re.compile(
    r"(?:address(?:es)?|lives?\s+(?:at|on)|lived\s+(?:at|on|in)|living\s+(?:at|on)|located\s+at|send\s+(?:\w+\s+){0,3}to|"
    r"deliver(?:ed)?\s+(?:\w+\s+){0,2}to|mail(?:ed)?\s+(?:\w+\s+){0,2}to|ship(?:ped)?\s+(?:\w+\s+){0,2}to|"
    r"meet\s+(?:me|us)\s+at|drops?\s+(?:me|you|us)\s+off\s+at|my\s+(?:house|home)\s+is\s+(?:at|on)|"
    r"(?:office|restaurant|store|shop)\s+is\s+(?:at|on|located\s+at))\s*[:\-?]?\s*(?:(?:is|was|it\s+is|it's)\s+)?(?:\d{1,6}\s+)?$",
    re.IGNORECASE,
)
_CUE_WORDS = re.compile(r"(?i)address|liv(?:e|es|ed|ing)\b|located|send|deliver|mail|ship|meet|drop|house|home|office|restaurant|store|shop")
_UNIT_ANYWHERE = re.compile(r"(?i)\b(?:apt|apartment|suite|ste|unit|flat|fl|floor|room|rm|bldg|building)\b|#\s?\d")
_CUE_NAME_NUM = re.compile(rf"(?:{_CAP}[\w'’.-]*[ \t]+){{0,3}}{_CAP}[\w'’.-]*[ \t]+{_NUM}\b")
_UNIT = re.compile(
    r"[ \t]*,?[ \t]*(?:\n[ \t>?]*)?(?i:apt\.?|apartment|suite|ste\.?|unit|flat|fl\.?|floor|room|rm\.?|bldg\.?|building|#)"
    r"[ \t]*#?[A-Za-z]?\d{1,5}[A-Za-z]?\b"
)
_LOCALITY_TOKEN = re.compile(
    rf"(?:[A-Z]{{1,2}}\d[A-Z\d]?\s?\d[A-Z]{{2}}\b|[A-Z]\d[A-Z]\s?\d[A-Z]\d\b|"
    rf"\((?:{_CAP}[\w'’.-]*)(?:\s+{_CAP}[\w'’.-]*)*\)|(?!{_UNIT_WORD}){_CAP}[\w'’&-]*\.?|nan|\d{{4,6}}(?:-\d{{4}})?|(?:de|del|da|do|la|le|du|nad|na|u|am|an|im|sur|upon|on|of)(?=\s+{_CAP}))"
)
#: A blank line, then a "Country 12345" line closing the address block.
_BLANK_THEN_POSTCODE_LINE = re.compile(
    rf"[ \t]*\n[ \t>?]*\n[ \t>?]*(?:{_CAP}[\w'’()-]*[ \t]+){{0,3}}\d{{4,6}}(?=[ \t]*(?:\n|$))"
)
_LABEL_LINE = re.compile(r"\s*(?:[\w-]+\s?){1,2}:", re.UNICODE)
_MONTHS_ETC = re.compile(
    r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*$|^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*day$|"
    r"^(?:chapter|page|grade|question|problem|unit|lesson|step|level|part|section|exercise|room|year|class|table|"
    r"figure|item|number|no|apt|suite|box|times|plus|minus|and|or|of)$",
    re.IGNORECASE,
)


def _grow(text: str, start: int, end: int, lower_ok: bool) -> int:
    """Extend an address from ``end`` over units, city/state/country/postcode chunks."""
    n = len(text)
    stop = False
    for _ in range(8):
        if stop:
            break
        m = _UNIT.match(text, end)
        if m:
            end = m.end()
            continue
        m = _MILITARY_TAIL.match(text, end)
        if m:
            end = m.end()
            continue
        m = _BLANK_THEN_POSTCODE_LINE.match(text, end) or re.match(r"[ \t]*(?:,[ \t]*|\n[ \t>?]*(?:,[ \t]*)?|\s)", text[end:])
        if m is not None and m.re is _BLANK_THEN_POSTCODE_LINE:
            end = m.end()
            break
        if not m:
            break
        pos = end + m.end()
        if pos >= n:
            break
        if "\n" in m.group() and _LABEL_LINE.match(text, pos):
            break  # "Mobile: ..." on the next line
        tokens_end = pos
        count = 0
        while count < 6:
            t = _LOCALITY_TOKEN.match(text, tokens_end)
            if not t and lower_ok:
                t = re.compile(rf"{_L}[\w'’.-]*").match(text, tokens_end)
            if not t:
                break
            word = t.group()
            if _LABEL_LINE.match(text, tokens_end) and text[t.end() : t.end() + 1] == ":":
                break
            if lower_ok and word.casefold() in ("for", "in", "i", "it", "and", "last", "the", "is", "please", "to"):
                break
            tokens_end = t.end()
            count += 1
            if word.endswith("."):
                stop = True
                break  # "... OULU NO. I now live ..." : a sentence ends here
            sp = re.match(r"[ \t]+", text[tokens_end:])
            if sp and tokens_end + sp.end() < n and (
                _LOCALITY_TOKEN.match(text, tokens_end + sp.end()) or lower_ok
            ):
                nxt = tokens_end + sp.end()
                if _LABEL_LINE.match(text, nxt) and re.match(r"[\w-]+:", text[nxt:]):
                    break
                tokens_end = nxt
            else:
                break
        tokens_end = len(text[:tokens_end].rstrip())
        if count == 0 or tokens_end <= pos:
            break
        end = tokens_end
    return end


class AddressRecognizer:
    """Street addresses (see the module docstring)."""

    name = "address"
    labels = ("ADDRESS",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if not any(ch.isdigit() for ch in text):
            return []
        lower_ok = not any(ch.isupper() for ch in text)
        out: list[Span] = []
        cands: list[tuple[int, int, float]] = []
        has_cue = bool(_CUE_WORDS.search(text))
        for m in _STREET.finditer(text):
            cands.append((m.start(), m.end(), 0.85))
        if lower_ok or has_cue:
            for m in _STREET_ANYCASE.finditer(text):
                if _STRONG_CUE.search(text[max(0, m.start() - 48) : m.start()]):
                    cands.append((m.start(), m.end(), 0.8))
        has_unit = bool(_UNIT_ANYWHERE.search(text))
        for m in _CUE_NAME_NUM.finditer(text) if (has_cue or has_unit) else ():
            # "Name 46" is a street line after an address cue, or when a unit follows ("Allika 46\n Suite 501")
            if _STRONG_CUE.search(text[max(0, m.start() - 40) : m.start()]) or _UNIT.match(text, m.end()):
                first = m.group().split()[0]
                if not _MONTHS_ETC.match(first):
                    cands.append((m.start(), m.end(), 0.8))
        cands.sort(key=lambda c: (c[0], -c[1]))
        for start, end, score in cands:
            if any(s.start <= start < s.end for s in out):
                continue
            words = text[start:end].split()
            if len(words) >= 2 and _MONTHS_ETC.match(words[1]) and not re.search(r"(?i)box|apt|suite|unit", words[1]):
                continue  # "12 March ...", "3 times ..."
            # a building number right before: "6750 Koskikatu 25", "479 95 Avenue ..."
            pre = re.search(rf"(?<![\w.,-]){_NUM}[ \t]+$", text[max(0, start - 10) : start])
            if pre:
                start -= len(pre.group())
            end = _grow(text, start, end, lower_ok)
            while end > start and text[end - 1] in " \t\n,.;:>":
                if text[end - 1] == "." and re.search(r"(?i)\b(?:st|ave|rd|dr|apt|ste|u|str|blvd|ln|ct|pl)\.$", text[start:end]):
                    break
                end -= 1
            out = [s for s in out if not (start <= s.start and s.end <= end)]
            out.append(Span(start, end, "ADDRESS", self.name, score))
        return sorted(out, key=lambda s: s.start)
