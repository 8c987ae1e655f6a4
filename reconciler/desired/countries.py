"""The country code a person most likely meant: "Britain" is GB, "Holland" NL, "USA" US.

A worker's country takes an ISO 3166-1 alpha-2 code. A name written instead (the short, official or
common name from pycountry's iso-codes, in any case), an alpha-3 code, a lower-case code, or one
of the few everyday names below, gets the code suggested in its error message; the value itself
is never changed.
"""

from __future__ import annotations

import functools
import re

#: Everyday names and codes that are no ISO 3166-1 name of the country they mean.
ALIASES = {
    "britain": "GB",
    "great britain": "GB",
    "uk": "GB",
    "united kingdom": "GB",
    "england": "GB",
    "scotland": "GB",
    "wales": "GB",
    "northern ireland": "GB",
    "en": "GB",  # English, the language
    "holland": "NL",
    "netherlands": "NL",
    "usa": "US",
    "us": "US",
    "america": "US",
    "united states of america": "US",
    "uae": "AE",
    "emirates": "AE",
    "russia": "RU",
    "south korea": "KR",
    "korea": "KR",
    "north korea": "KP",
    "czech republic": "CZ",
    "ivory coast": "CI",
    "vietnam": "VN",
    "iran": "IR",
    "syria": "SY",
    "laos": "LA",
    "bolivia": "BO",
    "venezuela": "VE",
    "tanzania": "TZ",
    "moldova": "MD",
    "taiwan": "TW",
}

_NOISE = re.compile(r"[.\s]+")


def _key(text: str) -> str:
    """Case, dots and spacing aside: "U.S.A." and "usa", "the Netherlands" and "netherlands"."""
    key = _NOISE.sub(" ", text.casefold().replace(".", "")).strip()
    return key.removeprefix("the ")


@functools.cache
def _known() -> dict[str, str]:
    import pycountry  # only when a country is wrong: a valid file never loads the iso-codes

    known: dict[str, str] = {}
    for country in pycountry.countries:
        for attribute in ("alpha_2", "alpha_3", "name", "official_name", "common_name"):
            value = getattr(country, attribute, None)
            if value:
                known.setdefault(_key(value), country.alpha_2)
    return known | {_key(alias): code for alias, code in ALIASES.items()}


def suggested_code(text: str) -> str | None:
    """The alpha-2 code `text` most likely means, or None; never `text` itself."""
    code = _known().get(_key(text))
    return None if code is None or code == text else code
