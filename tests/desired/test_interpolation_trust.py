"""A value from `${VAR}` is a secret wherever it lands, and credentials are never interpolated.

Through the command line against a sandbox over real HTTP: each refused interpolation is an
error at its line before any request (the sandbox's request log stays empty), and each allowed
one is masked in every output and never stored in clear.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

HOOK_SECRET = "hs-9f8e7d6c5b4a3f2e"
WEBHOOK_TOKEN = "wt-Qm2Xv7Lp0Wn5Bt8Zk4"


@pytest.fixture(scope="module")
def server() -> Iterator[SandboxServer]:
    with SandboxServer() as sandbox:
        yield sandbox


def _requests(server: SandboxServer) -> list[dict[str, object]]:
    answer = httpx.get(f"{server.base_url}/_sandbox/requests")
    answer.raise_for_status()
    entries: list[dict[str, object]] = answer.json()
    return entries


def _sent_since(server: SandboxServer, before: int) -> list[str]:
    """What reached the service after the `before`-th request, other than reads and the login.

    `plan` reads the account while it loads the file (docs/plans.md), so a refused file may
    leave reads (with the reconciler's own credentials, never a value of the file) behind it;
    what it must never leave is a write.
    """
    return [
        f"{entry['method']} {entry['path']}"
        for entry in _requests(server)[before:]
        if entry["method"] != "GET" and entry["path"] != "/login/login/v2"
    ]


def _file(tmp_path: Path, url: str, header: str = "fixed-value") -> Path:
    path = tmp_path / "desired.yaml"
    path.write_text(
        "version: 1\n"
        "webhook:\n"
        f'  url: "{url}"\n'
        "  headers:\n"
        f'    - {{name: Authorization, value: "{header}"}}\n'
        "  event_types: [KYC]\n"
    )
    return path


HOOK = "https://hooks.example.com/hook"
PLAN_KEY = "plan-key-0123456789abcdef-0123456789"
EMAIL = "ops@example.com"
PASSWORD = "correct horse battery staple"

REFUSED = [
    ("the token by its name, in the URL", f"{HOOK}?t=${{RECONCILER_TOKEN}}", None, {}, 3),
    ("the plan key by its name", HOOK, "${RECONCILER_PLAN_KEY}", {}, 5),
    ("a GitHub variable", HOOK, "Bearer ${GITHUB_TOKEN}", {"GITHUB_TOKEN": "ghs_abcdef"}, 5),
    ("an Actions variable", HOOK, "${ACTIONS_ID_TOKEN_REQUEST_TOKEN}", {}, 5),
    ("a runner variable, in the URL", f"{HOOK}?d=${{RUNNER_TEMP}}", None, {}, 3),
    ("the token under another name", HOOK, "${COPY}", {"COPY": "<token>"}, 5),
    (
        "the plan key under another name",
        f"{HOOK}?k=${{COPY}}",
        None,
        {"COPY": PLAN_KEY, "RECONCILER_PLAN_KEY": PLAN_KEY},
        3,
    ),
]


@pytest.mark.parametrize(
    ("name", "url", "header", "env", "line"), REFUSED, ids=[case[0] for case in REFUSED]
)
def test_credentials_and_ci_variables_are_never_interpolated(
    server: SandboxServer,
    tmp_path: Path,
    name: str,
    url: str,
    header: str | None,
    env: dict[str, str],
    line: int,
) -> None:
    path = _file(tmp_path, url, header or "fixed-value")
    env = {key: server.token if value == "<token>" else value for key, value in env.items()}
    before = len(_requests(server))

    for command in ("validate", "plan"):
        result = reconciler(command, str(path), server=server, **env)
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"desired.yaml:{line}:" in result.stdout + result.stderr
        assert "never put into the webhook" in result.stdout + result.stderr
        assert server.token not in result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        if command == "validate":
            assert len(_requests(server)) == before  # validate reads no network at all

    assert _sent_since(server, before) == []  # nothing written


def test_a_token_from_token_file_cannot_be_interpolated(
    server: SandboxServer, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(server.token + "\n")
    path = _file(tmp_path, HOOK, "${COPY}")
    before = len(_requests(server))
    result = reconciler(
        "plan", str(path), "--base-url", server.base_url, "--token-file", str(token_file),
        COPY=server.token,
    )  # fmt: skip
    assert result.returncode == 1
    assert "holds one of the reconciler's own credentials" in result.stderr
    assert _sent_since(server, before) == []


def _outputs(server: SandboxServer, path: Path, tmp_path: Path, **env: str) -> str:
    """Everything a user, a log collector or a reader of CI artifacts gets from a plan."""
    texts = []
    for fmt in ("text", "json", "markdown"):
        out = tmp_path / f"plan-{fmt}.json"
        result = reconciler(
            "--log-level", "debug", "plan", str(path), "--format", fmt, "--out", str(out),
            server=server, RECONCILER_CLIENT_ID=str(server.client_id), **env,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        texts += [result.stdout, result.stderr, out.read_text()]
    comment = reconciler("comment", str(path), server=server, **env)
    assert comment.returncode == 0, comment.stderr
    return "\n".join([*texts, comment.stdout, comment.stderr])


def test_interpolated_values_are_masked_in_every_output(
    server: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path, f"{HOOK}?t=${{HOOK_SECRET}}", "Bearer ${WEBHOOK_TOKEN}")
    env = {"HOOK_SECRET": HOOK_SECRET, "WEBHOOK_TOKEN": WEBHOOK_TOKEN}

    everything = _outputs(server, path, tmp_path, **env)

    assert HOOK_SECRET not in everything and WEBHOOK_TOKEN not in everything
    assert f"{HOOK}?t=(sensitive value)" in everything  # the URL, its secret part masked
    saved = json.loads((tmp_path / "plan-text.json").read_text())
    (change,) = saved["changes"]
    assert change["webhook"]["url"]["template"] == f"{HOOK}?t=${{HOOK_SECRET}}"
    assert set(change["webhook"]["url"]) == {"template", "hmac"}

    applied = reconciler("apply", str(tmp_path / "plan-text.json"), server=server, **env)
    assert applied.returncode == 0, applied.stderr
    # Now the live URL holds the secret: a later plan that shows it as "before" masks it too.
    path.write_text(path.read_text().replace("[KYC]", "[KYC, PAYMENT]").replace("?t=", "?u="))
    later = _outputs(server, path, tmp_path, **env)
    assert HOOK_SECRET not in later and WEBHOOK_TOKEN not in later


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


#: (case, value of ${HOOK_SECRET}) with the token T, the password P (from --password-file) and
#: the plan key K: each a credential inside the value, in a form the reconciler sends.
HELD = [
    ("the password from --password-file", lambda t: PASSWORD),
    ("Bearer and the token", lambda t: f"Bearer {t}"),
    ("the token inside other text", lambda t: f"x-{t}-y"),
    ("Basic and the login in base64", lambda t: "Basic " + _b64(f"{EMAIL}:{PASSWORD}")),
    ("the login in base64 without padding", lambda t: _b64(f"{EMAIL}:{PASSWORD}").rstrip("=")),
    ("the token in base64", lambda t: _b64(t)),
    ("the token in URL-safe base64", lambda t: base64.urlsafe_b64encode(t.encode()).decode()),
    ("the token in hex", lambda t: t.encode().hex()),
    ("the password URL-encoded", lambda t: quote(PASSWORD, safe="")),
    ("the plan key after a prefix", lambda t: f"key={PLAN_KEY}"),
    ("Basic of another user and the token", lambda t: "Basic " + _b64(f"ci-bot:{t}")),
    ("base64 of the password in a JSON text", lambda t: _b64(f'{{"p": "{PASSWORD}"}}')),
    ("hex of the plan key after text", lambda t: f"k={('id=' + PLAN_KEY).encode().hex()}"),
    ("URL-encoded base64 of the token", lambda t: quote(_b64(f"u:{t}"), safe="")),
]


@pytest.mark.parametrize(("name", "value"), HELD, ids=[case[0] for case in HELD])
@pytest.mark.parametrize("where", ["header", "url"])
def test_a_variable_holding_a_credential_in_any_form_is_refused(
    server: SandboxServer, tmp_path: Path, name: str, value: Callable[[str], str], where: str
) -> None:
    password_file = tmp_path / "password"
    password_file.write_text(PASSWORD + "\n")
    if where == "header":
        path, line = _file(tmp_path, HOOK, "${HOOK_SECRET}"), 5
    else:
        path, line = _file(tmp_path, f"{HOOK}?s=${{HOOK_SECRET}}"), 3
    before = len(_requests(server))
    result = reconciler(
        "plan", str(path), "--password-file", str(password_file), server=server,
        RECONCILER_EMAIL=EMAIL, RECONCILER_PLAN_KEY=PLAN_KEY, HOOK_SECRET=value(server.token),
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"desired.yaml:{line}:" in result.stderr
    assert "holds one of the reconciler's own credentials" in result.stderr
    assert "Traceback" not in result.stderr
    assert _sent_since(server, before) == []  # nothing written


def test_a_credential_split_across_two_variables_is_refused(
    server: SandboxServer, tmp_path: Path
) -> None:
    token = server.token
    path = _file(tmp_path, HOOK, "Bearer ${A}${B}")
    before = len(_requests(server))
    result = reconciler("plan", str(path), server=server, A=token[:10], B=token[10:])
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "desired.yaml:5:" in result.stderr and "once its variables are filled in" in result.stderr
    )
    assert _sent_since(server, before) == []


def test_an_ordinary_secret_is_still_filled_in(server: SandboxServer, tmp_path: Path) -> None:
    password_file = tmp_path / "password"
    password_file.write_text(PASSWORD + "\n")
    path = _file(tmp_path, HOOK, "Bearer ${HOOK_SECRET}")
    result = reconciler(
        "plan", str(path), "--password-file", str(password_file), server=server,
        RECONCILER_EMAIL=EMAIL, HOOK_SECRET=WEBHOOK_TOKEN,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
