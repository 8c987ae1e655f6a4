"""Table tests for every rule of the desired-state file, one small file per case."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.desired.interpolate import InterpolationError, has_reference, interpolate
from reconciler.desired.rules import email_problem, webhook_url_problem

WORKER = """\
  - externalId: {external_id}
    typeOfWorker: {type_of_worker}
    workerName: {name}
    workerSurname: Lovelace
    workerEmail: {email}
    countryIso: {country}
"""


def _worker(**fields: str) -> str:
    values = {
        "external_id": "ENG-001",
        "type_of_worker": "Worker",
        "name": "Ada",
        "email": "ada@example.com",
        "country": "GB",
    }
    values.update(fields)
    return WORKER.format(**values)


def _problems(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> list[str]:
    """The messages `text` is refused with (empty when it is valid)."""
    path = tmp_path / "desired.yaml"
    path.write_text(text)
    try:
        load_desired_state(path, environ=environ or {})
    except InvalidDesiredState as error:
        return [problem.message for problem in error.problems]
    return []


HEAD = "version: 1\nworkers:\n"
VALID = HEAD + _worker()

CASES = [
    # (id, file text, a fragment of the one expected message, or None when valid)
    ("valid", VALID, None),
    ("norway stays a string", HEAD + _worker(country="NO"), None),
    ("unknown country", HEAD + _worker(country="QQ"), "not an ISO 3166-1"),
    ("lower-case country", HEAD + _worker(country="gb"), "upper-case"),
    ("three-letter country", HEAD + _worker(country="GBR"), "upper-case"),
    ("email without domain", HEAD + _worker(email="ada@"), "invalid email"),
    ("email with space", HEAD + _worker(email='"ada @x.com"'), "invalid"),
    ("special-use domain", HEAD + _worker(email="a@host.local"), "invalid"),
    (
        "business without legal name",
        HEAD + _worker(type_of_worker="Business"),
        "a Business needs 'workerLegalName'",
    ),
    (
        "business with legal name",
        "version: 1\nworkers:\n"
        + _worker(type_of_worker="Business")
        + "    workerLegalName: Acme\n",
        None,
    ),
    ("unknown type", HEAD + _worker(type_of_worker="Person"), "one of"),
    ("255 characters", HEAD + _worker(name="a" * 255), None),
    ("256 characters", HEAD + _worker(name="a" * 256), "longer than 255"),
    ("blank name", HEAD + _worker(name='" "'), "empty or blank"),
    ("null name", HEAD + _worker(name="null"), "must be a string"),
    (
        "same externalId twice",
        HEAD + _worker() + _worker(email="b@example.com"),
        "externalId 'ENG-001' is given twice",
    ),
    (
        "same email ignoring case",
        "version: 1\nworkers:\n"
        + _worker()
        + _worker(external_id="ENG-2", email="ADA@example.COM"),
        "given twice (as one mailbox)",
    ),
    (
        "outside the scope",
        "version: 1\nscope: {externalIdPrefix: OPS-}\nworkers:\n" + _worker(),
        "outside the scope",
    ),
    # Identities as people see them (issue 13, point 4).
    ("externalId with a trailing space", HEAD + _worker(external_id='"ENG-001 "'), "white space"),
    ("externalId with a leading tab", HEAD + _worker(external_id='"\\tENG-001"'), "white space"),
    (
        "externalId with a zero-width space",
        HEAD + _worker(external_id='"ENG-\\u200b001"'),
        "U+200B",
    ),
    ("externalId with a bidi override", HEAD + _worker(external_id='"ENG-\\u202e100"'), "U+202E"),
    ("externalId with a control character", HEAD + _worker(external_id='"ENG-\\x07"'), "U+0007"),
    ("name with a control character", HEAD + _worker(name='"Ada\\x1b[31m"'), "U+001B"),
    ("name with a NEL", HEAD + _worker(name='"Ada\\x85"'), "U+0085"),
    (
        "the same externalId in NFC and NFD",
        "version: 1\nworkers:\n"
        + _worker(external_id='"ENG-Ren\\u00e9"')
        + _worker(external_id='"ENG-Rene\\u0301"', email="other@example.com"),
        "is given twice",
    ),
    (
        "the same email in NFC and NFD",
        "version: 1\nworkers:\n"
        + _worker(email='"ren\\u00e9@example.com"')
        + _worker(external_id="ENG-2", email='"rene\\u0301@example.com"'),
        "given twice (as one mailbox)",
    ),
    (
        "the same mailbox in Unicode and in punycode",
        "version: 1\nworkers:\n"
        + _worker(email="ada@b\u00fccher.example")
        + _worker(external_id="ENG-2", email="ADA@xn--bcher-kva.example"),
        "given twice (as one mailbox)",
    ),
    (
        "inside the scope",
        "version: 1\nscope: {externalIdPrefix: ENG-}\nworkers:\n" + _worker(),
        None,
    ),
    (
        "ignoreChanges of a real field",
        VALID + "    ignoreChanges: [jobTitle, countryIso]\n",
        None,
    ),
    ("ignoreChanges of an unknown field", VALID + "    ignoreChanges: [salary]\n", "one of"),
    ("ignoreChanges twice", VALID + "    ignoreChanges: [jobTitle, jobTitle]\n", "twice"),
    ("placeholder", VALID + "    workerEmailText: 'Hi TODO(export)'\n", "TODO(export)"),
    ("placeholder email", HEAD + _worker(email="TODO(export)"), "unfilled TODO(export)"),
    ("count limit", "version: 1\npolicy: {maxInactivations: 3}\n", None),
    ("share limit", "version: 1\npolicy: {maxInactivations: '12.5%'}\n", None),
    ("negative limit", "version: 1\npolicy: {maxInactivations: -1}\n", "non-negative integer"),
    ("fractional count", "version: 1\npolicy: {maxInactivations: 2.5}\n", "non-negative integer"),
    ("share above 100%", "version: 1\npolicy: {maxInactivations: '101%'}\n", "more than 100%"),
    ("prune as a string", "version: 1\npolicy: {prune: 'no'}\n", "true or false"),
    ("version 2", "version: 2\n", "must be 1"),
    ("no version", "workers: []\n", "no file gives the format version"),
    ("unknown top-level key", "version: 1\nwebhooks: {}\n", "did you mean 'webhook'"),
    ("a number as a key", "version: 1\n1: x\n", "the key 1 is not text"),
    ("a boolean as a key", "version: 1\nscope: {true: x}\n", "the key true is not text"),
]


def _webhook(
    url: str = "https://hooks.example.com/x", headers: str = "", events: str = "[KYC]"
) -> str:
    text = f"version: 1\nwebhook:\n  url: {url}\n  event_types: {events}\n"
    return text + (f"  headers:\n{headers}" if headers else "")


def _header(name: str, value: str = "v") -> str:
    return f"    - name: {name}\n      value: {value}\n"


WEBHOOK_CASES = [
    ("https", _webhook(), None),
    ("http to localhost", _webhook("http://localhost:8080/hook"), None),
    ("http to 127.0.0.2", _webhook("http://127.0.0.2/hook"), None),
    ("http to ::1", _webhook("http://[::1]:9000/hook"), None),
    ("http to a public host", _webhook("http://example.com/hook"), "loopback"),
    ("ftp", _webhook("ftp://example.com/hook"), "absolute https://"),
    ("no host", _webhook("https:///path"), "absolute https://"),
    ("every event type", _webhook(events="[KYC, PAYMENT, CLIENT_WALLET_TOP_UP]"), None),
    ("unknown event type", _webhook(events="[KYC, REFUND]"), "one of"),
    ("repeated event type", _webhook(events="[KYC, KYC]"), "twice"),
    ("no event type", _webhook(events="[]"), "must not be empty"),
    ("token header", _webhook(headers=_header("X-Token")), None),
    ("host header", _webhook(headers=_header("Host")), "sets the Host header itself"),
    ("content-length", _webhook(headers=_header("content-length")), "itself"),
    ("transfer-encoding", _webhook(headers=_header("Transfer-Encoding")), "itself"),
    ("name with a colon", _webhook(headers=_header("'X:Token'")), "not an HTTP token"),
    ("empty name", _webhook(headers=_header("''")), "not an HTTP token"),
    (
        "same name ignoring case",
        _webhook(headers=_header("X-Token") + _header("x-TOKEN")),
        "given twice (ignoring case)",
    ),
    ("20 headers", _webhook(headers="".join(_header(f"X-{i}") for i in range(20))), None),
    ("21 headers", _webhook(headers="".join(_header(f"X-{i}") for i in range(21))), "at most 20"),
    ("value not a string", _webhook(headers=_header("X-Token", "[1]")), "must be a string"),
    ("enabled flag", _webhook() + "  enabled: false\n", None),
]


ALL_CASES = CASES + WEBHOOK_CASES


@pytest.mark.parametrize(
    ("text", "fragment"), [case[1:] for case in ALL_CASES], ids=[case[0] for case in ALL_CASES]
)
def test_rule(tmp_path: Path, text: str, fragment: str | None) -> None:
    """A valid file gives no problem; a broken one exactly one, with this message."""
    problems = _problems(tmp_path, text)
    if fragment is None:
        assert problems == []
    else:
        assert len(problems) == 1, problems
        assert fragment in problems[0]


INTERPOLATIONS = [
    ("plain", "abc", "abc"),
    ("one variable", "${TOKEN}", "s3cret"),
    ("inside text", "Bearer ${TOKEN}!", "Bearer s3cret!"),
    ("two variables", "${HOST}:${TOKEN}", "hooks.example.com:s3cret"),
    ("escaped", "$${TOKEN}", "${TOKEN}"),
    ("escaped then real", "$${A} ${TOKEN}", "${A} s3cret"),
    ("a dollar before an escape", "$$${A}", "$${A}"),
    ("a lone dollar", "cost $5", "cost $5"),
    ("double dollar without brace", "$$", "$$"),
    ("empty variable", "${EMPTY}", ""),
]
ENVIRON = {"TOKEN": "s3cret", "HOST": "hooks.example.com", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in INTERPOLATIONS], ids=[c[0] for c in INTERPOLATIONS]
)
def test_interpolation(text: str, expected: str) -> None:
    assert interpolate(text, ENVIRON) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("${MISSING}", "MISSING not set"),
        ("${A} ${B}", "variables A, B not set"),
        ("${unclosed", "not a `${NAME}` reference"),
        ("${1ABC}", "not a `${NAME}` reference"),
        ("${}", "not a `${NAME}` reference"),
    ],
)
def test_interpolation_errors(text: str, fragment: str) -> None:
    with pytest.raises(InterpolationError, match=None) as raised:
        interpolate(text, {})
    assert fragment in str(raised.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("${A}", True), ("x ${A} y", True), ("$${A}", False), ("plain", False), ("$$${A}", False)],
)
def test_has_reference(text: str, expected: bool) -> None:
    assert has_reference(text) is expected


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("ada@example.com", True),
        ("Ada.Lovelace+tag@sub.example.co.uk", True),
        ("o'brien@example.ie", True),
        ("josé@example.es", True),
        ("ada@例え.jp", True),
        ("ada@", False),
        ("@example.com", False),
        ("ada@@example.com", False),
        ("ada..l@example.com", False),
        (".ada@example.com", False),
        ("ada@example", False),
        ("ada@localhost", False),
        ("ada@-example.com", False),
        ("a" * 64 + "@example.com", True),
        ("ada@" + "a" * 250 + ".com", False),
    ],
)
def test_email_matches_email_validator(address: str, valid: bool) -> None:
    assert (email_problem(address) is None) is valid


@pytest.mark.parametrize(
    ("url", "valid"),
    [
        ("https://hooks.example.com/x", True),
        ("https://hooks.example.com:8443/x?a=b", True),
        ("http://127.0.0.1:9000/", True),
        ("http://localhost/", True),
        ("http://[::1]/", True),
        ("http://10.0.0.1/", False),
        ("http://hooks.example.com/", False),
        ("hooks.example.com/x", False),
        ("https://[::1/", False),
        ("mailto:ops@example.com", False),
    ],
)
def test_webhook_url(url: str, valid: bool) -> None:
    assert (webhook_url_problem(url) is None) is valid


@pytest.mark.parametrize(
    ("name", "external_id"),
    [
        ('"Rene\\u0301"', '"ENG-Rene\\u0301"'),  # an ASCII file: the escapes make the accents
        ("Rene\u0301", "ENG-Rene\u0301"),  # written as they are, in NFD
        ("Ren\u00e9", "ENG-Ren\u00e9"),  # already NFC
    ],
    ids=["escaped", "nfd", "nfc"],
)
def test_the_model_holds_text_in_nfc(tmp_path: Path, name: str, external_id: str) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text("version: 1\nworkers:\n" + _worker(name=name, external_id=external_id))
    (worker,) = load_desired_state(path, environ={}).workers
    assert (worker.worker_name, worker.external_id) == ("Ren\u00e9", "ENG-Ren\u00e9")


def test_an_ascii_file_keeps_its_text_as_written(tmp_path: Path) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text("version: 1\nworkers:\n" + _worker(name="'Ada  Byron '"))
    (worker,) = load_desired_state(path, environ={}).workers
    assert worker.worker_name == "Ada  Byron "
