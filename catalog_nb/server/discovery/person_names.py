"""Person names found cold: a given-names dictionary, the values' shape and the field's name.

A field is scored from its sampled values and its name, never from one value alone (a lone
``Jordan`` or ``Florence`` is a person, a country or a city), so this is a *field scorer*
(:attr:`.checks.Check.scorer`), not a per-value check.

* **Shape** (share ``shape``): one to four tokens, each a capitalised word of letters with
  inner hyphens or apostrophes (``Anne-Marie``, ``O'Brien``, ``McDonald``), an initial
  (``J.``) or a lower-case particle between them (``van``, ``de``, ``von``...). A value holding a
  word that names an organisation or a place (``Inc``, ``GmbH``, ``Bank``, ``Port``, ``Lake``,
  ``Street``...) is not a name, whatever else it holds.
* **Dictionary** (share ``known``): shaped values with at least one token that is a known given
  name. The dictionary is the given names of Faker's person providers in every locale it ships
  (about 33,000 names of 86 locales, in their own scripts and romanised), Faker being a well-kept,
  MIT-licensed package the server already depends on. The demo lake draws its people from four
  of those locales, so its figures say little about names the dictionary lacks:
  ``tests/benchmarks/sensitive_recognisers.py`` measures recall with each locale's language
  left out of the dictionary (:func:`given_names` ``without=``).
* **Context** (the field name's tokens, in English, German, French, Spanish, Italian, Dutch and
  Portuguese): *strong* words name a person or a part of a person's name (``first_name``,
  ``surname``, ``employee``, ``contact``, ``nom``, ``vorname``...), the *weak* word ``name``
  (or ``label``) could be anything's name, and *negative* words name something else (``city``,
  ``company``, ``product``, ``store``...), which rules the field out.

The weight is ``1 - (1 - known) * (1 - c * shape)`` with ``c`` = :data:`STRONG_CONTEXT` or
:data:`WEAK_CONTEXT` or 0, so a column of full names is found by its values alone, a column of
surnames (rarely given names) needs a strong field name, and product names under a field called
``name`` (shaped, but seldom given names) stay well under the tag's ``minScore``.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

#: Weight of a field's shaped share when its name says it holds people's names (or ``name``).
STRONG_CONTEXT = 0.85
WEAK_CONTEXT = 0.3
#: Fewest distinct values of a field of names.
MIN_DISTINCT = 3
#: Most tokens a person's name has in a record (given names, particles and surnames).
MAX_TOKENS = 4

#: Field-name tokens of people and of the parts of their names.
STRONG_WORDS = frozenset({
    # English
    "first", "firstname", "last", "lastname", "surname", "surnames", "given", "forename",
    "family", "middle", "maiden", "fullname", "person", "people", "employee", "staff", "contact",
    "manager", "customer", "client", "patient", "student", "author", "owner", "holder",
    "cardholder", "beneficiary", "recipient", "sender", "applicant", "member", "user",
    "username", "who", "teacher", "doctor", "physician", "driver", "passenger", "guest",
    "signatory", "spouse", "parent", "mother", "father", "child", "emergency", "buyer",
    # German, French, Spanish, Italian, Dutch, Portuguese
    "vorname", "nachname", "familienname", "mitarbeiter", "kunde", "ansprechpartner",
    "nom", "prenom", "prénom", "salarie", "salarié", "employe", "employé", "interlocuteur",
    "nombre", "apellido", "apellidos", "empleado", "nome", "cognome", "dipendente",
    "naam", "voornaam", "achternaam", "medewerker", "sobrenome", "funcionario",
})
WEAK_WORDS = frozenset({"name", "names", "label", "display", "nm"})
#: Field-name tokens of things that have names but are no people.
NEGATIVE_WORDS = frozenset({
    "city", "town", "country", "state", "region", "province", "county", "place", "location",
    "street", "road", "address", "company", "companies", "org", "organisation", "organization",
    "business", "firm", "employer", "vendor", "supplier", "merchant", "brand", "product",
    "item", "sku", "article", "category", "store", "shop", "branch", "site", "building",
    "file", "filename", "host", "hostname", "domain", "server", "table", "column", "field",
    "department", "dept", "team", "project", "title", "course", "school", "university",
    "hospital", "bank", "ship", "station", "airport", "event", "campaign", "plan", "tier",
    "ville", "pays", "stadt", "land", "ciudad", "citta", "città", "firma", "societe", "société",
    "empresa", "produkt", "produit", "producto", "prodotto", "winkel", "straat", "strasse",
})
#: Value words of organisations and places: a value holding one is no person's name.
NOT_NAME_WORDS = frozenset(w.casefold() for w in (
    "Inc", "Ltd", "LLC", "LLP", "PLC", "GmbH", "AG", "KG", "SA", "SAS", "SARL", "SL", "SpA",
    "BV", "NV", "Co", "Corp", "Corporation", "Company", "Group", "Holdings", "Partners",
    "Associates", "Bank", "Trust", "Foundation", "Institute", "University", "College", "School",
    "Hospital", "Clinic", "Services", "Solutions", "Systems", "Technologies", "Industries",
    "International", "Global", "Store", "Shop", "Outlet", "Outfitters", "Market", "Cafe",
    "Restaurant", "Hotel", "Port", "Lake", "Mount", "Fort", "Saint", "St", "North", "South",
    "East", "West", "New", "City", "Town", "Village", "County", "Island", "Beach", "Valley",
    "Springs", "Heights", "Street", "Avenue", "Road", "Lane", "Drive", "Boulevard", "Square",
    "Park", "Bridge", "Station", "Airport", "Center", "Centre", "Mall", "Plaza",
    "Straße", "Strasse", "Rue", "Calle", "Via", "Gasse", "Platz", "Sainte", "San", "Santa",
    "Bad",
))
#: Forms of address and degrees before or after a name (``Dr.``, ``Herr``, ``B.Sc.``, ``Jr``).
TITLE_WORDS = frozenset(w.casefold() for w in (
    "Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Dra", "Prof", "Sir", "Dame", "Herr", "Frau",
    "Monsieur", "Madame", "Mme", "Mlle", "Don", "Doña", "Sr", "Sra", "Srta", "Sig", "Sig.ra",
    "Dott", "Ing", "pan", "pani", "Jr", "Sen", "II", "III", "IV", "MBA", "PhD", "MD", "MSc",
    "BSc", "BA", "MA", "LLM", "Esq",
))
#: Lower-case words allowed between the capitalised tokens of a name.
PARTICLES = frozenset({"van", "von", "de", "der", "den", "del", "della", "di", "da", "dos",
                       "das", "du", "la", "le", "y", "e", "bin", "ibn", "al", "ter", "ten",
                       "zu", "vom", "d'"})

#: Like ``learning.name_tokens`` (which would bring numpy along), but for any alphabet: split at
#: non-alphanumerics, between letters and digits, and at camelCase humps.
_FIELD_SPLIT = re.compile(
    r"[\W_]+|(?<=\d)(?=[^\W\d_])|(?<=[^\W\d_])(?=\d)|(?<=[^\W\d_])(?<![A-Z])(?=[A-Z])"
)
# Inner apostrophes (straight or typographic, U+2019) and hyphens: O'Brien, Anne-Marie.
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['\u2019-](?=[^\W\d_]))*\.?")


def field_tokens(field_name: str) -> set[str]:
    """Lower-case tokens of a (dotted) field name: ``manager.firstName`` -> manager, first,
    name."""
    return {token.lower() for token in _FIELD_SPLIT.split(field_name) if token}


#: Lists of given names in a Faker person provider (``first_names``, ``first_names_female``,
#: ``first_romanized_names``...): tuples, or dicts of name -> weight.
_NAME_LIST = re.compile(r"first_(\w+_)?names(_\w+)?")


@lru_cache(maxsize=8)
def given_names(without: frozenset[str] = frozenset()) -> frozenset[str]:
    """The dictionary of given names (case-folded, without diacritics): Faker's, of every
    locale whose language (``en`` of ``en_GB``) is not in ``without``.

    >>> "antonio" in given_names(), len(given_names(frozenset({"en"}))) < len(given_names())
    (True, True)
    """
    from faker.config import AVAILABLE_LOCALES

    found: set[str] = set()
    for locale in AVAILABLE_LOCALES:
        if locale.split("_")[0] in without:
            continue
        try:
            provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        except (ModuleNotFoundError, AttributeError):
            continue  # a locale without a person provider of its own
        # Read off the classes: Faker makes some of these lists properties of its instances.
        for kind in provider.__mro__:
            for attribute, listed in vars(kind).items():
                if _NAME_LIST.fullmatch(attribute) and isinstance(listed, tuple | list | dict):
                    found.update(fold_name(name) for name in listed if isinstance(name, str))
    return frozenset(found)


def name_tokens_of(value: str) -> list[str] | None:
    """The tokens of ``value`` when it has a person name's shape (module docstring), else None."""
    parts = value.replace(",", " ").split() if value.count(",") <= 1 else []
    if not 1 <= len(parts) <= MAX_TOKENS + 2:
        return None
    while parts and _is_title(parts[0]) and len(parts) > 1:
        parts = parts[1:]
    while parts and _is_title(parts[-1]) and len(parts) > 1:
        parts = parts[:-1]
    words = []
    for index, part in enumerate(parts):
        if any(p.casefold() in NOT_NAME_WORDS for p in part.rstrip(".").split("-")):
            return None
        if part in PARTICLES and index < len(parts) - 1:
            continue
        if _WORD.fullmatch(part) is None or not part[0].isupper():
            return None
        letters = [c for c in part if c.isalpha()]
        # ``LLC``, ``IBM``: a shouted word of three letters or more is an acronym, not a name.
        if len(letters) >= 3 and all(c.isupper() for c in letters):
            return None
        if part.endswith(".") and len(letters) > 1:
            return None
        words.append(part)
    if not 1 <= len(words) <= MAX_TOKENS:
        return None
    return words


def _is_title(part: str) -> bool:
    bare = part.rstrip(".").casefold()
    # Abbreviated degrees and ranks carry inner dots: ``B.Sc.``, ``Dipl.-Ing.``, ``Univ.Prof.``
    return bare in TITLE_WORDS or (len(bare) > 1 and "." in bare)


def fold_name(text: str) -> str:
    """``text`` case-folded and without diacritics: ``Antônio`` and ``ANTONIO`` are one name."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def is_known(token: str, names: frozenset[str] | None = None) -> bool:
    """Whether ``token`` (or a part of a hyphenated one) is a given name of the dictionary
    (``names``, by default :func:`given_names`)."""
    names = given_names() if names is None else names
    folded = fold_name(token).rstrip(".")
    if len(folded) < 2:
        return False
    return folded in names or ("-" in folded and any(p in names for p in folded.split("-")))


def context_of(field_name: str) -> float | None:
    """How much a field's name says it holds people's names: the shaped share's weight
    (:data:`STRONG_CONTEXT`, :data:`WEAK_CONTEXT`, 0), or None when it names something else."""
    tokens = field_tokens(field_name)
    if tokens & NEGATIVE_WORDS:
        return None
    if tokens & STRONG_WORDS:
        return STRONG_CONTEXT
    if tokens & WEAK_WORDS:
        return WEAK_CONTEXT
    return 0.0


def person_name_score(field_name: str, sample: Sequence[str],
                      names: frozenset[str] | None = None) -> float:
    """The PersonName weight of a field, 0..1, from its name and sampled values (``names``: the
    dictionary, by default :func:`given_names`)."""
    texts = [t for t in (v.strip() for v in sample) if t]
    context = context_of(field_name)
    if not texts or context is None:
        return 0.0
    # One or two distinct values (a constant, a default, a pair of roles) say nothing about the
    # rows' people, whatever they look like.
    if len(set(texts)) < MIN_DISTINCT:
        return 0.0
    shaped = known = 0
    for text in texts:
        tokens = name_tokens_of(text)
        if tokens is None:
            continue
        shaped += 1
        if any(is_known(t, names) for t in tokens):
            known += 1
    shape_share, known_share = shaped / len(texts), known / len(texts)
    return 1.0 - (1.0 - known_share) * (1.0 - context * shape_share)
