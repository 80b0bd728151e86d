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

import bisect
import re

from ..base import Span, TurnContext, has_digit
from ..recognizer import Recognizer

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
    r"(?:office|restaurant|store|shop)\s+is\s+(?:at|on|located\s+at)|"
    # the same cues in the languages whose street words are known ("vivo en calle mayor 5", "j'habite au 3 rue ...")
    r"viv(?:o|e|imos|en)\s+en|mi\s+direcci[oó]n\s+es|direcci[oó]n|moro\s+(?:na|em|no)|abito\s+in|indirizzo|"
    r"j'habite\s+(?:au|à|a)|adresse|(?:ich\s+)?wohne\s+(?:in\s+der|in|am|an\s+der)|anschrift)\s*[:\-?]?\s*(?:(?:is|was|it\s+is|it's)\s+)?(?:\d{1,6}\s+)?$",
    re.IGNORECASE,
)
# the lookahead is every alternative's first letter: the same matches, found ~2x faster (most
# positions fail on one class test instead of 24 alternatives); keep it in step with the words
_CUE_WORDS = re.compile(r"(?i)(?=[adhilmorsvw])(?:address|adresse|direcci|indirizzo|anschrift|wohne|habite|abito|moro\b|viv(?:o|e|imos|en)\b|liv(?:e|es|ed|ing)\b|located|send|deliver|mail|ship|meet|drop|house|home|office|restaurant|store|shop)")
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
    # month names as written ("12 March", "3 Sept."), not words that begin like one ("Calle Mayor 5", "12 Marsh Lane")
    r"^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|"
    r"nov(?:ember)?|dec(?:ember)?)\.?$|^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*day$|"
    r"^(?:chapter|page|grade|question|problem|unit|lesson|step|level|part|section|exercise|room|year|class|table|"
    r"figure|item|number|no|apt|suite|box|times|plus|minus|and|or|of)$",
    re.IGNORECASE,
)


# ---- shapes from outside the US and the UK (issue #22) ----------------------------------------
#: A floor and door after a Spanish or Portuguese street line ("Calle de Alcalá 42, 2º A").
_FLOOR = re.compile(
    r"[ \t]*,?[ \t]*(?:\d{1,2}[ \t]?[ºª°](?:[ \t]?[A-Za-z]\b)?|(?i:piso|planta|puerta|pta\.?|esc\.?|escalera|andar|bloco)"
    r"[ \t]*\d{1,3}[ºª°]?[A-Za-z]?\b)"
)
_CHUNK = r"(?:\d{1,3}(?:st|nd|rd|th)[ \t]+)?[A-Z][\w'’.-]*(?:[ \t]+(?:[A-Z][\w'’.-]*|\d{1,4}[A-Za-z]?\b(?![ \t]*\d))){0,3}"
#: An address led by its unit, in comma-separated parts, as written in India and elsewhere:
#: "Flat 12, Lotus Residency, 5th Main, Koramangala, Bengaluru 560034".
_UNIT_LED = re.compile(
    r"(?<![\w-])(?i:flat|apt\.?|apartment|house(?:[ \t]+no\.?)?|h\.?[ \t]?no\.?|door(?:[ \t]+no\.?)?|plot(?:[ \t]+no\.?)?|"
    r"unit|villa|block|suite)[ \t]*#?[ \t]*\d{1,5}[A-Za-z]?(?:[-/]\d{1,4}[A-Za-z]?)?"
    rf"(?P<parts>(?:[ \t]*,[ \t]*{_CHUNK}){{2,7}})(?P<pin>[ \t]*[-,]?[ \t]*\d{{5,6}})?(?![\w])"
)
#: The same comma-separated parts led by a bare house number, after an address cue.
_CUE_LED = re.compile(
    rf"(?<![\w-])\d{{1,5}}[A-Za-z]?(?:[-/]\d{{1,4}}[A-Za-z]?)?(?P<parts>(?:[ \t]*,[ \t]*{_CHUNK}){{2,7}})"
    r"(?P<pin>[ \t]*[-,]?[ \t]*\d{5,6})?(?![\w])"
)
#: "number 7 on Birch Lane": a house number, then the street it is on.
_NUMBER_ON = re.compile(
    rf"(?i:\b(?:number|no\.?|nr\.?|#))[ \t]*(?P<num>\d{{1,5}}[A-Za-z]?)[ \t]+(?i:on|in|at)[ \t]+(?i:the[ \t]+)?"
    rf"(?P<street>(?:{_W}[ \t]+){{1,3}}(?i:{_STREET_TYPES}))\b"
)
#: A postcode after its cue word ("my postcode is M14 5RT", "zip: 02139", "PIN code 560034").
_POSTCODE_CUE = re.compile(
    r"(?i:\b(?:post ?code|postal[ \t]+code|zip(?:[ \t]?code)?|pin[ \t]?code|c[oó]digo[ \t]+postal|code[ \t]+postal|"
    r"plz|postleitzahl|eircode|cap))[ \t]*(?:is|was|:|-|=|'s|’s)?[ \t]*(?:(?:it's|its|it’s)[ \t]+)?$"
)
_POSTCODE = re.compile(
    r"(?i:[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d|[A-Z]\d{2}[ \t]?[A-Z\d]{4}|\d{4}[ \t]?[A-Z]{2}"
    r"|\d{3}-\d{4}|\d{2}-\d{3}|\d{5}(?:-\d{4})?|\d{3}[ \t]?\d{3}|\d{4})(?![\w-])"
)
#: Addresses in Chinese and Japanese script: prefecture / province, city, ward, then the block
#: number ("大阪府大阪市北区梅田3-1-1", "北京市朝阳区建国路88号", "東京都港区六本木6丁目10番1号").
_CJK_ADDRESS = re.compile(
    r"(?:[\u4e00-\u9fff]{1,4}(?:都|道|府|県|省))?(?:[\u4e00-\u9fff]{1,6}(?:市|区|區|町|村|郡|县|縣))+"
    r"[\u4e00-\u9fff\u3040-\u30ff]{0,10}?[0-9０-９]+(?:(?:[-−－ー]|丁目|番地|番|号|號)[0-9０-９]*){0,4}(?:号|號)?"
)
#: Korean: "서울특별시 강남구 테헤란로 123".
_HANGUL_ADDRESS = re.compile(r"(?:[가-힣]+(?:시|도)[ \t])?[가-힣]+(?:구|군|시)[ \t][가-힣0-9]+(?:로|길)[ \t]?\d+(?:-\d+)?")


#: Substrings (of the case-folded turn) without which a shape below cannot occur: cheap gates.
_UNIT_WORDS = ("flat", "apt", "apartment", "house", "h.no", "hno", "door", "plot", "unit", "villa", "block", "suite")
_CUE_SUBSTRINGS = ("liv", "address", "adresse", "direcci", "indirizzo", "anschrift", "wohne", "habite", "abito", "moro",
                   "viv", "located", "send", "deliver", "mail", "ship", "meet", "drop", "house", "home", "office",
                   "restaurant", "store", "shop")
_NUMBER_WORDS = ("number", "no", "nr", "#")
_NUMBER_GATE = re.compile(r"(?i)(?:number|no\.?|nr\.?|#)[ \t]*\d")
_POSTCODE_WORDS = ("post", "zip", "pin", "codigo", "código", "plz", "eircode", "cap")
_CJK_OR_HANGUL = re.compile(r"[\u3040-\u9fff\uac00-\ud7a3]")


#: A street without a number after "live on" ("I live on Birch Lane", "we stay at Rose Close").
_LIVED_ON = re.compile(
    r"(?i:\b(?:live|lives|lived|living|stay|stays|stayed|staying|moved)[ \t]+(?:on|at|in|to)[ \t]+)"
    rf"(?P<street>(?:{_CW}[ \t]+){{1,3}}(?:{_cased(_STREET_TYPES)}))\b"
)


def _street_lived_on(text: str) -> list[Span]:
    if "liv" not in text and "stay" not in text and "moved" not in text:
        return []
    return [Span(m.start("street"), m.end("street"), "ADDRESS", "address", 0.8) for m in _LIVED_ON.finditer(text)]


def _more_shapes(text: str) -> list[tuple[int, int, float]]:
    """Address parts of the shapes above: (start, end, score)."""
    out: list[tuple[int, int, float]] = []
    low = text.casefold()
    comma = "," in text
    if comma and any(w in low for w in _UNIT_WORDS):
        for m in _UNIT_LED.finditer(text):
            if m.group("pin") or m.group("parts").count(",") >= 3:
                out.append((m.start(), m.end(), 0.85))
    if comma and any(w in low for w in _CUE_SUBSTRINGS) and _CUE_WORDS.search(text):
        for m in _CUE_LED.finditer(text):  # "I live at 45, 2nd Cross, Indiranagar, Bengaluru 560038"
            if (m.group("pin") or m.group("parts").count(",") >= 3) and _STRONG_CUE.search(text[max(0, m.start() - 48) : m.start()]):
                out.append((m.start(), m.end(), 0.85))
    if any(w in low for w in _NUMBER_WORDS) and _NUMBER_GATE.search(text):
        for m in _NUMBER_ON.finditer(text):
            out.append((m.start("num"), m.end("num"), 0.8))
            out.append((m.start("street"), m.end("street"), 0.8))
    if any(w in low for w in _POSTCODE_WORDS):
        for m in _POSTCODE.finditer(text):
            if _POSTCODE_CUE.search(text[max(0, m.start() - 40) : m.start()]) and not re.match(r"[\w-]", text[m.start() - 1 : m.start()] or " "):
                out.append((m.start(), m.end(), 0.9))
    if _CJK_OR_HANGUL.search(text):
        for rx in (_CJK_ADDRESS, _HANGUL_ADDRESS):
            for m in rx.finditer(text):
                out.append((m.start(), m.end(), 0.9))
    return out


def _grow(text: str, start: int, end: int, lower_ok: bool) -> int:
    """Extend an address from ``end`` over units, city/state/country/postcode chunks."""
    n = len(text)
    stop = False
    for _ in range(8):
        if stop:
            break
        m = _UNIT.match(text, end) or _FLOOR.match(text, end)
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


class AddressRecognizer(Recognizer):
    """Street addresses (see the module docstring)."""

    name = "address"
    labels = ("ADDRESS",)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if not has_digit(text):
            return _street_lived_on(text)
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
        extra = _more_shapes(text)
        cands.sort(key=lambda c: (c[0], -c[1]))
        # ``out`` is kept sorted by start (``starts`` beside it) and the longest span length known,
        # so "does a span cover this start" and "which spans does this one contain" look at the
        # few spans near it, not all of them (near-linear on a turn with thousands of addresses)
        starts: list[int] = []
        longest = 0
        for start, end, score in cands:
            lo = bisect.bisect_left(starts, start - longest)
            hi = bisect.bisect_right(starts, start)
            if any(out[i].start <= start < out[i].end for i in range(lo, hi)):
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
            end = _drop_trailing_street_word(text, start, end)
            lo, hi = bisect.bisect_left(starts, start), bisect.bisect_right(starts, end)
            if lo < hi:
                keep = [s for s in out[lo:hi] if not (start <= s.start and s.end <= end)]
                out[lo:hi] = keep
                starts[lo:hi] = [s.start for s in keep]
            for a, b in _components(text, start, end):
                i = bisect.bisect_right(starts, a)
                starts.insert(i, a)
                out.insert(i, Span(a, b, "ADDRESS", self.name, score))
                longest = max(longest, b - a)
        for start, end, score in extra:
            if not any(s.start < end and start < s.end for s in out):
                out.append(Span(start, end, "ADDRESS", self.name, score))
        return sorted(out, key=lambda s: s.start)


_TRAILING_STREET_WORD = re.compile(r"[ \t]+(?:St\.?|ST\.?|st\.|[Ss]treet)$")
_ENDS_WITH_NUMBER_OR_TYPE = re.compile(rf"(?:\d[A-Za-z]?\.?|\b(?:{_cased(_STREET_TYPES)}|{_cased(_PREFIX_TYPES)})\b\.?[ \t]+(?:{_CW}[ \t]*)+)$")
_BUILDING_THEN_STREET = re.compile(rf"({_NUM})[ \t]+(?=\S)(.*\d.*)$")


def _drop_trailing_street_word(text: str, start: int, end: int) -> int:
    """"Dalmatinova 68 St.", "90 Whitchurch Road street": a street word after a street line that is
    already complete (it ends with its number, or already holds a street type) is not part of it."""
    m = _TRAILING_STREET_WORD.search(text, start, end)
    if m and "\n" not in text[start:end]:
        head = text[start : m.start()]
        if re.search(r"\d[A-Za-z]?\.?$", head) or re.search(rf"\b(?:{_cased(_STREET_TYPES)})\b\.?$", head) or (
                re.match(rf"{_NUM}[ \t]+(?:{_cased(_PREFIX_TYPES)})\b", head)):
            return m.start()
    return end


_MILITARY = re.compile(r"(?i)\b(?:psc|cmr|unit|usns|usnv|uscgc|uss)\b.*\b[adf]po\b", re.DOTALL)
_UNIT_PART = re.compile(r"(?i)\b(?:apt\.?|apartment|suite|ste\.?|unit|flat|room)[ \t]*#?[A-Za-z]?\d{1,5}[A-Za-z]?\b")
_COUNTRY_POSTCODE = re.compile(rf"^((?:(?:{_L}|\()[\w'’().-]*[ \t]+){{1,3}})(\d{{4,6}})$")
_LINE_PREFIX = re.compile(r"^[ \t>?]*")


def _components(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """An address written as separate parts is reported part by part (the convention of the labelled
    data: each line of an address block, a leading building number, a trailing ", City" on its own).

    * a block: the address starts a line (not after a "Label:" line) and runs over several lines,
      its first line holding a building number and a numbered street ("28030 Edeby 55"): each line
      is a part; a "Country 99178" line is two parts; a unit ("Apt. 297") is a part;
    * one line "street, City" (a single locality after one comma, nothing else): two parts;
    * "28030 Edeby 55" / "975 3968 Bay Street" alone: building number and street line.
    Every part stays an ADDRESS span, so nothing of the address is left uncovered."""
    seg = text[start:end]
    if _MILITARY.search(seg):
        return [(start, end)]
    line_start = text.rfind("\n", 0, start) + 1
    if "\n" in seg and not text[line_start:start].strip(" \t>?"):
        prev_line = text[:line_start].rstrip().rsplit("\n", 1)[-1]
        first = seg.split("\n", 1)[0]
        if not prev_line.rstrip().endswith(":") and re.match(rf"{_NUM}[ \t]+(?=.*{_L}).*\d", first):
            out: list[tuple[int, int]] = []
            pos = start
            for line in seg.split("\n"):
                a = pos + _LINE_PREFIX.match(line).end()
                b = pos + len(line.rstrip(" \t,"))
                pos += len(line) + 1
                if b <= a:
                    continue
                out.extend(_line_parts(text, a, b, first=not out))
            return out
        return [(start, end)]
    if "\n" not in seg and seg.count(",") == 1:
        head, tail = seg.split(",")
        if tail.strip() and not re.search(r"\d", tail) and len(tail.split()) <= 3 and re.search(r"\d", head):
            a2 = start + len(head) + 1 + (len(tail) - len(tail.lstrip()))
            return _split_building_number(text, start, start + len(head.rstrip())) + [(a2, end)]
    return _split_building_number(text, start, end)


def _line_parts(text: str, a: int, b: int, first: bool) -> list[tuple[int, int]]:
    line = text[a:b]
    if first:
        m = _UNIT_PART.search(line)
        if m and m.start() > 0:  # "28245 Puruntie 82 Apt. 595"
            cut = a + len(line[: m.start()].rstrip())
            return _split_building_number(text, a, cut) + [(a + m.start(), a + m.end())]
        return _split_building_number(text, a, b)
    m = _COUNTRY_POSTCODE.match(line)
    if m:  # "Sweden 99178"
        return [(a, a + len(m.group(1).rstrip())), (a + m.start(2), b)]
    return [(a, b)]


def _split_building_number(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A bare street line with two numbers, "28030 Edeby 55" / "975 3968 Bay Street": the leading
    building number and the street line are two parts (nothing else follows on the line)."""
    seg = text[start:end]
    if "\n" in seg or "," in seg or _UNIT_ANYWHERE.search(seg):
        return [(start, end)]
    m = _BUILDING_THEN_STREET.match(seg)
    if not m or not re.search(r"\d", m.group(2)) or not re.search(rf"{_L}", m.group(2)):
        return [(start, end)]
    a2 = start + m.start(2)
    return [(start, start + m.end(1)), (a2, end)]
