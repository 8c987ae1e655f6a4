"""Through the command line: what a service says is data, shown bounded and masked.

A service (or a proxy before it) that echoes the token, in any form a service or a log carries
it (`redaction.leak_forms`), in any case or split over lines, gets it masked; so does any run
that could be a credential, known or not (the token reversed, in base32 or every byte
percent-escaped is masked so); and `webhook show` shows the live URL's path and query only as a
fingerprint.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.secrets import Secret
from reconciler.service.models import WebhookHeader
from tests.cli import reconciler
from tests.service.helpers import client_for
from tests.service.paged_service import serving

TOKEN = "tok_7Hq2Zx9Lm4Vp8Rk3Wn6Ys1Bd5"
#: The token as a service might echo it, each a way it was printed verbatim before.
ECHOES: dict[str, Callable[[str], str]] = {
    "plain": lambda token: token,
    "base64 of Bearer": lambda token: base64.b64encode(f"Bearer {token}".encode()).decode(),
    "base64 of Basic": lambda token: base64.b64encode(f"ada@example.com:{token}".encode()).decode(),
    "percent, lower case": lambda token: "".join(f"%{b:02x}" for b in token.encode()),
    "percent, upper case": lambda token: "".join(f"%{b:02X}" for b in token.encode()),
    "reversed": lambda token: token[::-1],
    "upper-cased": lambda token: token.upper(),
    "base32": lambda token: base64.b32encode(token.encode()).decode(),
    "split by a newline": lambda token: f"{token[:9]}\n{token[9:]}",
    "split by spaces": lambda token: " ".join(token[i : i + 4] for i in range(0, len(token), 4)),
    "split by zero-width spaces": lambda token: "\u200b".join(token),
    "split by a written \\n": lambda token: f"{token[:9]}\\n{token[9:]}",
}
#: Runs that could be credentials though nobody registered them.
UNKNOWN = {
    "github token": "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
    "hex key": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
}
ANSWER: dict[str, Any] = {}


async def _echo(request: Request) -> Response:
    if ANSWER.get("json"):
        return JSONResponse(ANSWER["json"], status_code=400)
    return Response(ANSWER["text"], status_code=502, media_type="text/plain")


@pytest.fixture(scope="module")
def echoing() -> Iterator[str]:
    app = Starlette(routes=[Route("/{path:path}", _echo, methods=["GET", "POST"])])
    with serving(app) as base_url:
        yield base_url


def _wallet(base_url: str) -> str:
    result = reconciler(
        "wallet", "--base-url", base_url, RECONCILER_TOKEN=TOKEN, RECONCILER_RETRY_ATTEMPTS="1"
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    return result.stdout + result.stderr


def _compact(text: str) -> str:
    return "".join(text.split()).lower()


@pytest.mark.parametrize("encoding", list(ECHOES))
def test_the_token_echoed_in_any_form_is_masked(echoing: str, encoding: str) -> None:
    echoed = ECHOES[encoding](TOKEN)
    for answer in ({"text": f"denied for {echoed}"}, {"json": {"detail": f"bad: {echoed}"}}):
        ANSWER.clear()
        ANSWER.update(answer)

        said = _wallet(echoing)

        assert "denied for" in said or "bad:" in said, said
        assert _compact(echoed)[:12] not in _compact(said), said
        assert _compact(echoed)[-12:] not in _compact(said), said


@pytest.mark.parametrize("kind", list(UNKNOWN))
def test_a_run_that_could_be_a_credential_is_masked(echoing: str, kind: str) -> None:
    ANSWER.clear()
    ANSWER["json"] = {"detail": "token check failed", "errors": [{"message": UNKNOWN[kind]}]}

    said = _wallet(echoing)

    assert "token check failed" in said and "[masked]" in said, said
    assert UNKNOWN[kind][4:20] not in said


def test_a_long_answer_is_cut_and_control_characters_are_shown_as_escapes(echoing: str) -> None:
    ANSWER.clear()
    ANSWER["text"] = "\x1b[2J\x1b]0;pwned\x07" + "word " * 10_000

    said = _wallet(echoing)

    assert "\x1b" not in said and "\x07" not in said
    assert "\\u001b[2J" in said
    assert len(said) < 2_000, len(said)
    assert "... (cut at 200 of 50,01" in said, said


def test_webhook_show_masks_the_live_urls_path_and_query(sandbox: Any) -> None:
    secret_path = "services/T01ABCDEF/B02GHIJKL"
    secret_query = "sig=q8Rj2mXz5Kp"
    with client_for(sandbox) as client:
        client.set_webhook(
            f"https://hooks.example.com/{secret_path}?{secret_query}",
            [WebhookHeader("X-Token", Secret("hv-Zq8Wm3Zx7Lk2"))],
            ["KYC"],
        )

    for output in ("json", "table", "csv"):
        result = reconciler("webhook", "show", "--format", output, server=sandbox)

        said = result.stdout + result.stderr
        assert result.returncode == 0, said
        assert "hooks.example.com" in said and "fingerprint" in said, said
        for part in ("T01ABCDEF", "B02GHIJKL", "q8Rj2mXz5Kp", "hv-Zq8Wm3Zx7Lk2"):
            assert part not in said, said
    shown = json.loads(reconciler("webhook", "show", "--format", "json", server=sandbox).stdout)
    assert shown["url"].startswith("https://hooks.example.com/\u2026 (fingerprint ")


def test_webhook_show_masks_a_host_label_that_is_the_credential(sandbox: Any) -> None:
    """Some incoming-webhook services put the secret in the host (`<id>.m.pipedream.net`)."""
    label = "eo1a2b3c4d5e6f7q"
    with client_for(sandbox) as client:
        client.set_webhook(f"https://{label}.m.pipedream.net", [], ["KYC"])

    for output in ("json", "table", "csv"):
        result = reconciler("webhook", "show", "--format", output, server=sandbox)

        said = result.stdout + result.stderr
        assert result.returncode == 0, said
        assert "m.pipedream.net" in said and "fingerprint" in said, said
        assert label not in said, said


@pytest.mark.parametrize(
    "gap", [" " * 80, " \n" * 40, "\t\u200b" * 40], ids=["spaces", "lines", "tabs-and-zero-width"]
)
def test_a_token_padded_out_by_white_space_shows_no_part(echoing: str, gap: str) -> None:
    """Padded past what is looked at, a token showed its first half once the gaps folded."""
    ANSWER.clear()
    ANSWER["text"] = "denied for " + gap.join(TOKEN)

    said = _wallet(echoing)

    assert "denied for" in said, said
    assert TOKEN[:6].lower() not in re.sub(r"\\u200b|\s", "", said).lower(), said
