"""Pattern recognizers: positive and negative cases for each, with exact boundaries."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection.address import AddressRecognizer
from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.patterns import (
    EmailRecognizer,
    IdNumberRecognizer,
    ObfuscatedEmailRecognizer,
    PhoneRecognizer,
    SpelledPhoneRecognizer,
    UrlRecognizer,
    UsernameRecognizer,
    default_pattern_recognizers,
    iban_ok,
    luhn_ok,
)

CTX = TurnContext()


def found(rec, text: str) -> list[str]:
    return [text[s.start : s.end] for s in rec.analyze(text, CTX)]


def test_default_pattern_recognizers_shape():
    recs = default_pattern_recognizers()
    names = {r.name for r in recs}
    assert len(names) == len(recs) >= 8
    labels = {lab for r in recs for lab in r.labels}
    assert labels == {"EMAIL", "PHONE", "URL", "USERNAME", "ID_NUM", "ADDRESS"}
    for r in recs:
        assert r.analyze("", CTX) == []


# --------------------------------------------------------------------------- EMAIL


@pytest.mark.parametrize(
    "text, value",
    [
        ("my email is maria.lopez@gmail.com.", "maria.lopez@gmail.com"),
        ("E-mail:\nJamiePratt@jourrapide.com\n", "JamiePratt@jourrapide.com"),
        ("write to o'brien+tutor@school.k12.ca.us please", "o'brien+tutor@school.k12.ca.us"),
    ],
)
def test_email_positive(text, value):
    assert found(EmailRecognizer(), text) == [value]


@pytest.mark.parametrize("text", ["meet @ 5pm", "2 @ $3 each", "user@localhost", "a@b", "x @ y.com is not"])
def test_email_negative(text):
    assert found(EmailRecognizer(), text) == []


@pytest.mark.parametrize(
    "text, value",
    [
        ("it's maria dot lopez at gmail dot com ok", "maria dot lopez at gmail dot com"),
        ("mail me: maria(at)gmail.com", "maria(at)gmail.com"),
        ("anna [at] school [dot] org", "anna [at] school [dot] org"),
        ("jo_smith at yahoo.com", "jo_smith at yahoo.com"),
        ("reach me at m a r i a @ g m a i l . c o m thanks", "m a r i a @ g m a i l . c o m"),
        ("my mail is kim @ outlook.com", "kim @ outlook.com"),
    ],
)
def test_obfuscated_email_positive(text, value):
    assert found(ObfuscatedEmailRecognizer(), text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "look at khanacademy.org for practice",
        "we meet at school.",
        "she is good at math dot products",
        "maria.lopez@gmail.com",  # a plain address is EmailRecognizer's
        "I arrived at home.com",
    ],
)
def test_obfuscated_email_negative(text):
    assert found(ObfuscatedEmailRecognizer(), text) == []


# --------------------------------------------------------------------------- PHONE


@pytest.mark.parametrize(
    "text, value",
    [
        ("call me at 555-123-4567.", "555-123-4567"),
        ("my cell is (555) 123 4567", "(555) 123 4567"),
        ("Mobile: 03.93.92.16.85\n", "03.93.92.16.85"),
        ("Desk: +41 (0)96 471 07 95", "+41 (0)96 471 07 95"),
        ("Fax: 345-899-3560x4587", "345-899-3560x4587"),
        ("(37) 788-063-Office", "(37) 788-063"),
        ("text me on +44 7700 900123 after school", "+44 7700 900123"),
        ("They're not answering at 78 651 450", "78 651 450"),
        ("Can someone call me on 9472 7916? thanks", "9472 7916"),
        ("Phone:\n467 3395\n", "467 3395"),
        ("my whatsapp 0049 30 1234567", "0049 30 1234567"),
        ("930.167.3943 fax", "930.167.3943"),
        ("ext: +1-903-140-4508 ext. 769", "+1-903-140-4508 ext. 769"),
    ],
)
def test_phone_positive(text, value):
    assert found(PhoneRecognizer(), text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "What is 3.5 + 2.25?",
        "pages 12-15 and 120-150",
        "The answer is 1234567.",
        "the total is 3.14159265",
        "We met on 2023-01-15 at 10:30",
        "on 12.05.2023 we started",
        "it costs $1 234 567 in total",
        "1 234 567 people live there",
        "count by tens: 10 20 30 40 50",
        "40-60-80-100-120-140",
        "the numbers 12 345 678 901",
        "IP 192.168.100.200 is blocked",
        "my answer is 4 567 890",
        "1,234,567 + 2,345,678",
        "19 31 44",
        "10  00000",
        "The product is 10,000-6000 = 4000 steps",
        "5 x 1234567 = 6172835",
    ],
)
def test_phone_negative(text):
    assert found(PhoneRecognizer(), text) == []


def test_spelled_phone():
    rec = SpelledPhoneRecognizer()
    assert found(rec, "call me five five five one two three four ok") == ["five five five one two three four"]
    assert found(rec, "it's zero seven seven zero zero nine zero zero one two three") == [
        "zero seven seven zero zero nine zero zero one two three"
    ]
    assert found(rec, "count with me: one two three four five six seven eight") == []
    assert found(rec, "one two three") == []


# --------------------------------------------------------------------------- URL


@pytest.mark.parametrize(
    "text, value",
    [
        ("My website is http://www.ScrapbookInsider.com.pt/", "http://www.ScrapbookInsider.com.pt/"),
        ("follow me https://instagram.com/maria.l!", "https://instagram.com/maria.l"),
        ("see myblog.net/anna for pics", "myblog.net/anna"),
        ("the file: https://drive.google.com/file/d/1AbC/view?usp=sharing.", "https://drive.google.com/file/d/1AbC/view?usp=sharing"),
        ("my page (www.annas-art.com) is new", "www.annas-art.com"),
        ("check my channel youtube.com/@kimdraws", "youtube.com/@kimdraws"),
        ("school page https://www.lincoln.edu/~jsmith/", "https://www.lincoln.edu/~jsmith/"),
        ("check out my site annalopez.com", "annalopez.com"),
    ],
)
def test_url_personal(text, value):
    assert found(UrlRecognizer(), text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "read https://en.wikipedia.org/wiki/Pythagorean_theorem first",
        "try www.khanacademy.org/math/algebra",
        "the course is at https://www.coursera.org/learn/calculus",
        "docs: https://docs.python.org/3/library/re.html",
        "our school page https://www.lincoln.k12.ca.us/calendar",
        "like Amazon.com boxes",
        "yes.it is 3.5 ok.so",
        "e.g. the value i.e. x",
        "open main.py and run it",
        "facebook.com is a company",
        "https://www.nasa.gov/moon",
    ],
)
def test_url_not_personal(text):
    assert found(UrlRecognizer(), text) == []


# --------------------------------------------------------------------------- USERNAME


@pytest.mark.parametrize(
    "text, value",
    [
        ("dm me @maria_l", "@maria_l"),
        ("my discord is kitty_99", "kitty_99"),
        ("my discord is maria", "maria"),
        ("My roblox username: CoolKid2011", "CoolKid2011"),
        ("add me on insta, maria.lopez", "maria.lopez"),
        ("my gamertag is xXSlayerXx", "xXSlayerXx"),
        ("username: jdoe42", "jdoe42"),
        # where the user name is used, between the cue and "is" (issue #17)
        ("my username on the school site is mlopez2009", "mlopez2009"),
        ("my login for khan academy is maria.l", "maria.l"),
    ],
)
def test_username_positive(text, value):
    assert found(UsernameRecognizer(), text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "my discord is down today",
        "Will my account stay active?",
        "My line is crooked.",
        "meet @ 5",
        "send it @everyone",
        "my username is the same",
        "email maria@gmail.com",
        "my snap is broken",
        "I love minecraft",
        "my account on the site is gone",
    ],
)
def test_username_negative(text):
    assert found(UsernameRecognizer(), text) == []


# --------------------------------------------------------------------------- ID_NUM


def test_checksums():
    assert luhn_ok("4454794511390933") and not luhn_ok("4454794511390934")
    assert iban_ok("GB59IFUE40226315499137") and iban_ok("gb42nawi04454264788619")
    assert not iban_ok("GB59IFUE40226315499138")


@pytest.mark.parametrize(
    "text, value",
    [
        ("What is the limit for card 4454794511390933?", "4454794511390933"),
        ("my card 4111 1111 1111 1111 expires", "4111 1111 1111 1111"),
        ("Here's my SSN: 460-89-9847", "460-89-9847"),
        ("my ssn is 460 89 9847.", "460 89 9847"),
        ("My IBAN is GB59IFUE40226315499137", "GB59IFUE40226315499137"),
        ("iban GB59 IFUE 4022 6315 4991 37 thanks", "GB59 IFUE 4022 6315 4991 37"),
        ("my student id is 20231487", "20231487"),
        ("My driver's license number is F162823540116", "F162823540116"),
        ("login number: AB-4471-X", "AB-4471-X"),
        ("ID: 7734921", "7734921"),
        ("passport X1234567 please", "X1234567"),
    ],
)
def test_id_positive(text, value):
    assert found(IdNumberRecognizer(), text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "15! = 1307674368000",
        "the answer is 1234567890123",
        "I did problem 12 and 13",
        "in 2023 I was in grade 5",
        "my id is fine",
        "User: 0605 Main Street",
        "the student number 12 is absent",
    ],
)
def test_id_negative(text):
    assert found(IdNumberRecognizer(), text) == []


# --------------------------------------------------------------------------- ADDRESS


@pytest.mark.parametrize(
    "text, value",
    [
        ("I live at 12 Oak Street, Springfield, IL 62704 now", "12 Oak Street, Springfield, IL 62704"),
        ("send it to 1737 Cheriton Dr Apt. 724 please", "1737 Cheriton Dr Apt. 724"),
        ("The address is 6750 Koskikatu 25 Apt. 864\nArtilleros\n, CO\n Uruguay 64677",
         "6750 Koskikatu 25 Apt. 864\nArtilleros\n, CO\n Uruguay 64677"),
        ("Meet me at PSC 0413, Box 8144\nAPO AA 42323", "PSC 0413, Box 8144\nAPO AA 42323"),
        ("It's on Via Roma 131.", "Via Roma 131"),
        ("i live at 45 maple avenue", "45 maple avenue"),
        ("P.O. Box 287, Tallinn, Estonia", "P.O. Box 287, Tallinn, Estonia"),
        ("Write to:\n20789 Allika 46\n Suite 501\n Riisa\n\n Estonia 62488", "20789 Allika 46\n Suite 501\n Riisa\n\n Estonia 62488"),
        ("my new address is 30497 Ibirapita 8057 Suite 100, Dolores, Uruguay", "30497 Ibirapita 8057 Suite 100, Dolores, Uruguay"),
        ("I live at 221B Baker Street, London NW1 6XE.", "221B Baker Street, London NW1 6XE"),
    ],
)
def test_address_positive(text, value):
    assert found(AddressRecognizer(), text) == [value]


@pytest.mark.parametrize(
    "text, parts",
    [
        # building number + numbered street line, a single ", City": reported part by part
        ("Tilly lives at 10252 Kiannonkatu 184, Oulu", ["10252", "Kiannonkatu 184", "Oulu"]),
        ("The bus drops you off at 87818 Dalmatinova 68 St. the first day", ["87818", "Dalmatinova 68"]),
        ("Jacob lives on 90 Whitchurch Road street.", ["90 Whitchurch Road"]),
        # an address block after a name line: each line, "Country postcode" as two parts
        ("Maureen Thibault\n\n41086 Kiannonkatu 98\n Suite 464\n OULU\n\n Finland 80896",
         ["41086", "Kiannonkatu 98", "Suite 464", "OULU", "Finland", "80896"]),
        ("Billing address: Sara Schwarz\n    28245 Puruntie 82 Apt. 595\n   LAPPEENRANTA\n    SK\n    53650",
         ["28245", "Puruntie 82", "Apt. 595", "LAPPEENRANTA", "SK", "53650"]),
    ],
)
def test_address_parts(text, parts):
    assert found(AddressRecognizer(), text) == parts


@pytest.mark.parametrize(
    "text, parts",
    [
        # a Spanish street line whose name begins like a month ("Mayor"), after a Spanish cue (issue #17)
        ("vivo en Calle Mayor 5, Madrid", ["Calle Mayor 5", "Madrid"]),
        ("vivo en calle mayor 5, madrid", ["calle mayor 5", "madrid"]),
        ("mi dirección es calle del prado 12", ["calle del prado 12"]),
        ("I live at 12 Marsh Lane, Leeds", ["12 Marsh Lane", "Leeds"]),
        ("j'habite au 3 rue de la Paix, Paris", ["3 rue de la Paix", "Paris"]),
    ],
)
def test_address_other_languages(text, parts):
    assert found(AddressRecognizer(), text) == parts


@pytest.mark.parametrize(
    "text",
    [
        "Plus 1 point for your effort.",
        "The area is 360 square feet.",
        "What is the place value of 7 in 2453?",
        "Wendy wants to place 20 more books",
        "there are 3 candy bars in each row",
        "It would take her 1 hour to walk 1 mile",
        "Chapter 12 and Grade 5",
        "12 March 2021",
        "on 3 Sept. 2020 and 12 May 2021",
        "3 Points Well Earned",
        "Team 4 scored 12 in Round 3",
        "See Chapter 5 Section 2 for more",
    ],
)
def test_address_negative(text):
    assert found(AddressRecognizer(), text) == []
