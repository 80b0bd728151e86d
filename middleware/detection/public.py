"""What is not private: public figures, fictional characters, places, languages, events, brands.

A chat about sport, films, books or public life names many people who are not participants and
must be kept as written ("Messi's last season", "Macbeth and Banquo", "she speaks Portuguese").
The evidence is of two kinds:

* **closed classes** from well-kept data, precomputed by ``scripts/build_public_tables.py`` into
  ``middleware/data/public_names.json.gz`` (~140 kB): Pantheon 1.0 public figures (full names and
  their surnames), countries / first-level subdivisions / world cities (pycountry, babel CLDR),
  languages and nationalities, holidays / events / awards / brands, well-known fictional characters;
* **context**: the words of a conversation about public life (``PUBLIC_CUES``: team, season,
  quarterback, film, album, novel, president, ...), counted per turn and per session, a determiner
  before a capitalised word ("an Emmy", "the Montagues"), and the personal cues that override all
  of it (``personal_cue``: "my friend Will Turner", "our son", an address or phone in the sentence).

A list match is never enough on its own for a token that is also a common first name ("Georgia",
"Anna", "Romeo"): it then needs context (a place preposition, "Georgia Tech", a film or book cue).
"""

from __future__ import annotations

from importlib import resources
import functools
import gzip
import json
from pathlib import Path

PUBLIC_PATH = Path(str(resources.files("plainsight.middleware").joinpath("data", "public_names.json.gz")))

#: Words of a conversation about sport, screen, music, books, politics and public life.
PUBLIC_CUES = frozenset(
    """season seasons league leagues coach coaches coached quarterback quarterbacks qb qbs
    nfl nba mlb nhl mls fifa uefa ncaa espn football soccer basketball baseball hockey tennis golf boxing cricket
    rugby olympics olympic championship championships playoff playoffs touchdown touchdowns drafted rookie
    mvp stadium athlete athletes sports superbowl tournament medal medals fan fans
    receiver linebacker pitcher striker goalie goalkeeper midfielder halftime inning innings
    movie movies film films actor actors actress actresses starred starring director directed directing
    hollywood oscar oscars emmy emmys sitcom episode episodes netflix celebrity celebrities sequel trilogy
    franchise comedian
    song songs album albums singer singers band bands rapper rappers concert concerts musician musicians
    guitarist drummer lyrics grammy grammys billboard
    novel novels novelist author authors playwright biography character characters protagonist villain
    president presidents senator senators governor congress election elections politician politicians
    minister emperor dynasty billionaire inventor philosopher painter composer scientist physicist astronaut""".split()
)

#: Public roles: right before a name they say who is talked about ("QB Lamar Jackson", "senator
#: Warren", "actress Emma Stone"); "coach" only in a conversation about public life (a school's
#: "Coach Davis" is a person of the speaker's life), and none after a possessive ("my coach Dan").
PUBLIC_ROLES = frozenset(
    """qb quarterback coach president senator governor congressman congresswoman mayor chancellor minister
    actor actress singer rapper songwriter guitarist drummer director producer comedian ceo founder billionaire
    author novelist poet playwright artist painter composer astronaut
    pitcher catcher shortstop linebacker cornerback receiver safety striker goalkeeper goalie midfielder
    defender wr rb linebackers quarterbacks legend""".split()
)

#: Nicknames of the teams of the major North American leagues (NFL, NBA, MLB, NHL, MLS): a
#: capitalised one is a cue of sport talk ("the Redskins", "Giants fans"); lowercase they are words.
TEAM_NAMES = frozenset(
    """49ers bears bengals bills broncos browns buccaneers bucs cardinals chargers chiefs colts cowboys dolphins eagles
    falcons giants jaguars jets lions packers panthers patriots pats raiders rams ravens redskins commanders saints
    seahawks steelers texans titans vikings
    celtics nets knicks sixers 76ers raptors bulls cavaliers cavs pistons pacers bucks hawks hornets heat magic wizards
    nuggets timberwolves thunder blazers jazz warriors clippers lakers suns kings mavericks mavs rockets grizzlies
    pelicans spurs
    orioles yankees rays blue jays red sox white sox guardians indians tigers royals twins astros angels athletics
    mariners rangers braves marlins mets phillies nationals cubs reds brewers pirates diamondbacks rockies dodgers
    padres
    bruins sabres canadiens senators leafs maple lightning islanders devils flyers penguins capitals hurricanes
    blackhawks avalanche stars wild predators blues flames oilers canucks ducks sharks coyotes golden knights kraken
    galaxy sounders timbers""".split()
)

#: Heads that make the capitalised token before them part of a place or an institution.
PLACE_HEADS = frozenset(
    """tech state university college city county river mountain mountains lake island islands valley street road
    avenue park bay coast beach airport station high school elementary middle academy institute hospital
    church cathedral museum bridge tower square district province region""".split()
)
#: Capitalised heads of an organisation's, a school's or a street's name ("Parker Elementary").
ORG_HEADS = frozenset(
    """school elementary middle high academy college university institute hospital clinic church library museum
    street st road rd avenue ave boulevard blvd lane drive park square bridge station airport stadium arena center
    centre hall inc llc ltd corp corporation company co group foundation associates sons brothers partners
    university's school's""".split()
)
_PLACE_PREP = frozenset("in from to at near visit visited visiting across around towards toward through via into of".split())
#: Relations that make a name a person of the speaker's life ("my colleague Olu", "our son Mateo").
RELATIONS = frozenset(
    """mom mum mother mama mommy dad father papa daddy sister brother sis bro aunt auntie uncle cousin grandma
    grandpa grandmother grandfather granny nana gran grandson granddaughter grandchild son daughter kid kids child
    children baby wife husband partner boyfriend girlfriend fiance fiancé fiancee fiancée spouse friend friends
    bestie buddy neighbor neighbour classmate classmates teacher tutor colleague colleagues coworker co-worker
    workmate boss manager roommate flatmate housemate nephew niece stepmom stepdad stepmother stepfather
    stepsister stepbrother in-law godmother godfather mentor student students pupil pupils doctor dentist
    nanny babysitter landlord landlady coach trainer""".split()
) | frozenset(
    # the same in the languages learners practise most (Spanish, French, German, Italian, Portuguese):
    # "mi hija Lucía", "mon mari Julien", "meine Schwester Anna"
    """hijo hija hijos hijas hermano hermana madre padre mamá papá esposo esposa marido mujer novio novia amigo amiga
    abuelo abuela tío tía primo prima sobrino sobrina jefe jefa compañero compañera vecino vecina suegra suegro nieto nieta
    fils fille frère soeur sœur mère père maman mari femme copain copine ami amie grand-mère grand-père oncle tante
    cousine neveu nièce patron patronne collègue voisin voisine belle-mère beau-père
    sohn tochter bruder schwester mutter vater oma opa onkel neffe nichte chef chefin kollege kollegin nachbar nachbarin
    freund freundin
    figlio figlia fratello sorella mamma papà marito moglie amico amica nonno nonna zio zia cugino cugina nipote capo
    collega vicino vicina fidanzato fidanzata
    filho filha irmão irmã mãe pai avô avó tio tia sobrinho sobrinha chefe colega vizinho vizinha namorado namorada""".split()
)
#: Possessives before a relation word ("my", and "mi", "mon", "meine", "mio", "minha", ...).
POSSESSIVES = frozenset(
    """my our your his her their mi mis tu nuestro nuestra mon ma mes notre nos ton ta mein meine meinem meinen meiner
    unser unsere mio mia miei mie nostro nostra meu minha meus minhas nosso nossa""".split()
)
_POSSESSIVE = POSSESSIVES


@functools.lru_cache(maxsize=1)
def tables() -> dict[str, frozenset[str]]:
    """The shipped closed classes (sets of case-folded names; multi-word entries space-joined)."""
    if not PUBLIC_PATH.exists():
        return {k: frozenset() for k in ("people", "surnames", "places", "languages", "things", "fiction")}
    with gzip.open(PUBLIC_PATH, "rt", encoding="utf-8") as fh:
        d = json.load(fh)
    return {k: frozenset(v) for k, v in d.items() if isinstance(v, list)}


@functools.lru_cache(maxsize=1)
def _first_words() -> frozenset[str]:
    """First words of every multi-word entry (a cheap gate before looking for n-grams)."""
    out = set()
    for k in ("people", "places", "fiction", "things", "languages"):
        for e in tables()[k]:
            if " " in e:
                out.add(e.split(" ", 1)[0])
    return frozenset(out)


def classes_of(phrase: str) -> tuple[str, ...]:
    """Which closed classes hold this case-folded phrase ('people', 'fiction', 'places', ...)."""
    t = tables()
    return tuple(k for k in ("people", "fiction", "things", "languages", "places") if phrase in t[k])


def is_public_surname(low: str) -> bool:
    return low in tables()["surnames"]


def starts_entry(low: str) -> bool:
    return low in _first_words()


def topic_cues(lows: list[str], caps: list[bool] | None = None) -> int:
    """Number of public-life cue words among the turn's case-folded tokens (a team's nickname
    counts when it is capitalised: ``caps``)."""
    n = sum(1 for w in lows if w in PUBLIC_CUES)
    if caps is not None:
        n += sum(1 for w, c in zip(lows, caps) if c and w in TEAM_NAMES)
    return n


def place_context(prev_low: str, next_low: str) -> bool:
    return prev_low in _PLACE_PREP or next_low in PLACE_HEADS


def personal_cue(lows: list[str], k: int, span_end: int) -> bool:
    """A relation word before the name ("my friend Will Turner", "our son Mateo", "my colleague
    Olu", "Ana, my sister"): the name is a person of the speaker's life, whatever lists say."""
    lo = max(0, k - 3)
    for j in range(lo, k):
        if lows[j] in RELATIONS and any(lows[i] in _POSSESSIVE for i in range(max(0, j - 2), j)):
            return True
    after = lows[span_end + 1 : span_end + 4]
    if len(after) >= 2 and after[0] in _POSSESSIVE and after[1] in RELATIONS:
        return True
    return False
