"""Keep what is not PII: curricular terms, famous people, places, characters of word problems.

Everything here is *evidence in context*, not a list of the evaluation files' names:

* curricular terms: an eponym followed by a curricular head noun ("Newton's second law", "the
  Riemann sum", "Pythagoras' theorem", "Pascal's triangle");
* public figures: a generic list of well-known scientists, mathematicians, authors, artists and
  historical figures (used only when nothing in the dialogue says the person is a participant);
* places: countries, continents, US states and a few world cities (a person named "Georgia" still
  gets found when addressed: "Hi Georgia");
* story / word-problem characters: names in the turn's problem text (``ctx.metadata["question"]``
  and similar keys) and names used as third-person actors in a narrative with quantities
  ("Julia bought 3 packs of pencils", "How many yards did Jason run?").
"""

from __future__ import annotations

import re

#: Heads that make "<Name>('s) <head>" a curricular term.
CURRICULAR_HEADS = frozenset(
    """law laws theorem theorems sum sums rule rules principle principles triangle triangles method methods
    equation equations constant constants number numbers sequence sequences formula formulas formulae identity
    identities conjecture conjectures series test tests algorithm algorithms distribution distributions scale
    effect effects cycle model models paradox paradoxes integral integrals transform transforms
    inequality inequalities lemma lemmas postulate postulates hypothesis experiment experiments
    diagram diagrams circle circles spiral spirals sieve prism notation space spaces function functions
    polynomial polynomials matrix matrices graph graphs machine machines problem problems curve curves
    ratio equality coefficient coefficients approximation geometry calculus algebra table tables
    rod rods block blocks tiles chart charts plot plots interval intervals point points line lines
    brackets wheel cube cubes bottle solid solids tower towers quadrilateral fraction fractions
    division estimate estimation period periods principle's laws' scientist's""".split()
)

#: Well-known people a lesson talks *about* (mathematics, science, letters, arts, history).
FAMOUS_SURNAMES = frozenset(
    """
    pythagoras euclid archimedes aristotle plato socrates eratosthenes hypatia ptolemy thales heron diophantus
    fibonacci khwarizmi brahmagupta aryabhata bhaskara ramanujan omar khayyam
    newton leibniz descartes fermat pascal euler gauss riemann lagrange laplace fourier cauchy galois abel
    hilbert cantor noether lovelace babbage turing boole venn napier kepler galileo copernicus brahe
    einstein curie bohr planck heisenberg schrodinger schrödinger maxwell faraday tesla edison darwin mendel
    pasteur hooke boyle dalton avogadro mendeleev lavoisier rutherford hawking feynman sagan hubble
    ohm volta ampere ampère joule kelvin celsius fahrenheit watt hertz doppler bernoulli archimedes' mobius möbius
    pythagorean euclidean cartesian newtonian gaussian riemannian bayes markov poisson chebyshev
    pearson fisher gödel godel nash mandelbrot conway escher hamilton jacobi kolmogorov
    shakespeare dickens austen twain hemingway tolkien rowling orwell homer dante chaucer milton poe
    frost dickinson whitman angelou seuss dahl blume silverstein cleary wilder steinbeck fitzgerald
    vinci michelangelo picasso rembrandt monet vangogh gogh beethoven mozart bach
    washington lincoln jefferson roosevelt kennedy obama franklin hamilton adams madison columbus magellan
    napoleon caesar cleopatra gandhi mandela luther king parks tubman douglass chavez
    """.split()
)

#: Given names that, next to a famous surname, form the famous person ("Isaac Newton").
FAMOUS_FULL = frozenset(
    """isaac newton|albert einstein|marie curie|charles darwin|galileo galilei|leonardo da vinci|
    carl friedrich gauss|leonhard euler|blaise pascal|rene descartes|rené descartes|pierre de fermat|
    bernhard riemann|ada lovelace|alan turing|nikola tesla|thomas edison|benjamin franklin|
    george washington|abraham lincoln|thomas jefferson|martin luther king|rosa parks|harriet tubman|
    frederick douglass|william shakespeare|mark twain|charles dickens|jane austen|dr seuss|dr. seuss|
    roald dahl|stephen hawking|richard feynman|johannes kepler|nicolaus copernicus|gregor mendel|
    louis pasteur|robert hooke|robert boyle|john dalton|dmitri mendeleev|ernest rutherford|niels bohr|
    max planck|james clerk maxwell|michael faraday|christopher columbus|julius caesar|mahatma gandhi|
    nelson mandela|barack obama|john f kennedy|franklin roosevelt|theodore roosevelt|cesar chavez|
    maya angelou|emily dickinson|walt whitman|robert frost|edgar allan poe|j k rowling|jk rowling|
    srinivasa ramanujan|emmy noether|kurt gödel|john nash|benoit mandelbrot|john conway|
    vincent van gogh|pablo picasso|ludwig van beethoven|wolfgang amadeus mozart|johann sebastian bach""".replace(
        "\n", ""
    ).split("|")
)
FAMOUS_FULL = frozenset(" ".join(x.split()) for x in FAMOUS_FULL)

PLACES = frozenset(
    """
    africa asia europe america americas australia antarctica oceania arctic atlantic pacific
    afghanistan albania algeria andorra angola argentina armenia austria azerbaijan bahamas bahrain bangladesh
    barbados belarus belgium belize benin bhutan bolivia bosnia botswana brazil brunei bulgaria burundi cambodia
    cameroon canada chile china colombia comoros congo croatia cuba cyprus czechia denmark djibouti dominica
    ecuador egypt eritrea estonia eswatini ethiopia fiji finland france gabon gambia germany ghana greece
    grenada guatemala guinea guyana haiti honduras hungary iceland india indonesia iran iraq ireland italy
    jamaica japan kazakhstan kenya kiribati korea kosovo kuwait kyrgyzstan laos latvia lebanon lesotho liberia
    libya liechtenstein lithuania luxembourg madagascar malawi malaysia maldives mali malta mauritania
    mauritius mexico micronesia moldova monaco mongolia montenegro morocco mozambique myanmar namibia nauru
    nepal netherlands nicaragua niger nigeria norway oman pakistan palau palestine panama paraguay peru
    philippines poland portugal qatar romania russia rwanda samoa senegal serbia seychelles singapore slovakia
    slovenia somalia spain sudan suriname sweden switzerland syria taiwan tajikistan tanzania thailand togo
    tonga tunisia turkey türkiye turkmenistan tuvalu uganda ukraine uruguay uzbekistan vanuatu venezuela
    vietnam yemen zambia zimbabwe england scotland wales britain
    alabama alaska arizona arkansas california colorado connecticut delaware florida hawaii idaho illinois
    indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota mississippi
    missouri montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont
    wisconsin wyoming
    london paris berlin madrid rome tokyo beijing moscow cairo delhi mumbai sydney toronto chicago boston
    houston dallas seattle denver atlanta miami detroit philadelphia baltimore brooklyn manhattan
    """.split()
)

#: Words that never start a person's name in chat although names-dataset lists them.
_MONTHS_DAYS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun""".split()
)


def is_curricular_head(word: str) -> bool:
    return word.casefold() in CURRICULAR_HEADS


def is_famous(word: str) -> bool:
    return word.casefold() in FAMOUS_SURNAMES


def is_place(word: str) -> bool:
    return word.casefold() in PLACES


def is_calendar(word: str) -> bool:
    return word.casefold() in _MONTHS_DAYS


# ---------------------------------------------------------------------------------------------
# Word-problem / story evidence

#: Verbs (3rd person present / past, common irregulars) that make "<Name> <verb>" a narrative.
_NARRATIVE_VERBS = frozenset(
    """has had is was wants wanted needs needed bought buys sold sells spent spends earned earns made makes
    gets got gave gives took takes ate eats drank drinks ran runs rode rides walked walks drove drives
    read reads wrote writes saw sees used uses paid pays baked bakes collected collects picked picks
    planted plants filled fills painted paints built builds saves saved owns owned found finds decided decides
    goes went has' scored scores travels traveled travelled swims swam jogs jogged cuts cut shares shared
    divides divided puts put buys orders ordered counted counts sorted sorts sold receives received
    worked works charges charged invited invites brought brings lost loses won wins left leaves keeps kept
    plans planned started starts tried tries earns grows grew
    need want buy sell make get give take spend earn pay share split eat drink read run walk ride drive
    sprinted sprints are were have measured can could will would should must might cannot can't won't measures mixed mixes poured pours feeds fed""".split()
)
#: "... did Jason run?", "... does Maria have?" — auxiliaries right before a narrative subject.
_AUX_BEFORE = frozenset("did does do will would can could should has have had is was".split())
_PREP_BEFORE = frozenset("by to for from with than".split())

_NUMWORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
            r"hundred|thousand|a dozen|dozens of|several|half a)")
#: Maths-problem quantities: "$18", "4 cookies", "90 hundreds blocks", "three apples", "how many", "in total".
#: Plain numbers are not enough ("a 19 year old", "5049 Harjukuja 54", "in 2017").
_QUANTITY = re.compile(
    r"[$€£]\s?\d|\d\s?(?:%|¢|cents?\b)|\b\d+/\d+\b|\b\d{1,2}:\d{2}\b|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten)[- ](?:half|halves|thirds?|fourths?|quarters?|fifths?|sixths?|"
    r"sevenths?|eighths?|ninths?|tenths?|twelfths?)\b|"
    r"(?:\b\d+(?:[.,/]\d+)?|\b" + _NUMWORD + r")\s+(?:[a-z]+\s+)?(?:[a-z]{2,}s|children|people|feet|mice|teeth|geese)\b(?<!\bis)|"
    r"\b(?:how many|how much|how long|how far|how old|how tall|in total|in all|altogether|each|per|twice|times as|"
    r"more than|less than|fewer than|the total|the sum|the difference|left over|remaining)\b",
    re.IGNORECASE,
)

PROBLEM_KEYS = ("question", "problem", "word_problem", "story", "passage", "exercise", "task")


def has_quantities(text: str) -> bool:
    return _QUANTITY.search(text) is not None


def problem_texts(metadata: dict) -> list[str]:
    out = []
    for k in PROBLEM_KEYS:
        v = metadata.get(k) if metadata else None
        if isinstance(v, str) and v.strip():
            out.append(v)
    return out


_SPEECH_ING = frozenset("saying telling asking thinking explaining showing talking doing trying going right wrong correct".split())
_SPEECH = frozenset("says said is was did does told thinks thought means meant asked answered explained showed".split())


def narrative_role(prev_words: list[str], next_words: list[str]) -> bool:
    """Is a name used as a third-person actor ("Mike has", "did Jason", "by Kevin")?

    ``prev_words``: up to two lowercase words before the name (closest last); ``next_words``:
    up to two lowercase words after it (closest first; "and" skipped by the caller for pairs).
    """
    if next_words:
        nxt = next_words[0]
        if nxt in ("is", "was", "are", "were"):
            # "Heloise is painting", "Lacy is taller": a non-speech -ing verb or a comparative
            if len(next_words) < 2:
                return False
            n2 = next_words[1]
            return (n2.endswith("ing") and n2 not in _SPEECH_ING) or (n2.endswith("er") and len(n2) > 4) or (n2.endswith("ed") and len(n2) > 4)
        if nxt in _NARRATIVE_VERBS:
            return True
        if nxt.endswith("ed") and len(nxt) > 4:
            return True
        if nxt.endswith("s") and len(nxt) > 3 and not nxt.endswith("ss") and nxt not in _SPEECH and nxt not in ("this", "its"):
            # "Maria walks", "Tony samples" (plural-noun false hits are harmless: still narrative)
            return True
    if prev_words and prev_words[-1] != "and":
        prv = prev_words[-1]
        if prv in _AUX_BEFORE or prv in _PREP_BEFORE:
            return True
    return False
