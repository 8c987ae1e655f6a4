"""How a client reaches the service: a plain-http (loopback) service directly, without the
certificate bundle; an https one as httpx reaches any.

No TLS connection made through the plain-http context can go unverified: a real TLS server on
loopback, with a certificate made for the test, is refused through it and accepted by a context
that trusts that certificate. With proxies set in the environment, the sandbox is still reached
directly (a proxy would carry the token in clear text), by the service client and by a login,
and so is a loopback GitHub API.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.gitops.github import GitHub
from reconciler.sandbox import SandboxServer
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import resolve_config
from reconciler.service.reach import reach
from reconciler.service.transport import Transport
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub


def test_https_keeps_httpx_defaults() -> None:
    for url in ("https://api.example.com", "https://127.0.0.1:8443", "HTTPS://api.example.com"):
        assert reach(url) == {"verify": True, "trust_env": True}


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://localhost", "HTTP://[::1]:1"])
def test_plain_http_gets_a_context_that_trusts_nothing(url: str) -> None:
    context = reach(url)["verify"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0  # no bundle was loaded
    assert not reach(url)["trust_env"]


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A TLS server on loopback with a self-signed certificate for 127.0.0.1; its port and
    certificate."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command makes the test's certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    request = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    names = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [openssl, *request, "-keyout", str(key), "-out", str(cert), *names],
        check=True,
        capture_output=True,
    )
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve() -> None:
        for _ in range(2):  # one connection refused, one accepted
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            try:
                with server_context.wrap_socket(connection, server_side=True):
                    pass
            except (OSError, ssl.SSLError):
                pass  # the client refused the certificate

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], cert
    finally:
        listener.close()
        thread.join(timeout=10)


def test_no_tls_connection_through_the_plain_http_context_goes_unverified(
    tls_server: tuple[int, Path],
) -> None:
    port, cert = tls_server
    context = reach("http://127.0.0.1:1")["verify"]
    assert isinstance(context, ssl.SSLContext)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        context.wrap_socket(raw, server_hostname="127.0.0.1")
    trusting = ssl.create_default_context(cafile=str(cert))  # the same server, trusted: fine
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        trusting.wrap_socket(raw, server_hostname="127.0.0.1").close()


@pytest.fixture
def loaded_bundles(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every certificate bundle loaded into a TLS context from now on (httpx loads certifi's
    into each client it makes with the default verification)."""
    loaded: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loaded.append(args or kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    return loaded


def test_the_clients_of_a_plain_http_service_load_no_bundle(
    sandbox: SandboxServer, loaded_bundles: list[object]
) -> None:
    _read_with_a_token_and_after_a_login(sandbox)
    assert loaded_bundles == []
    token = {"RECONCILER_TOKEN": sandbox.token}
    Transport(resolve_config(base_url="https://api.example.com", environ=token), read_only=True)
    assert loaded_bundles  # an https client does load it: the count above could see one


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """A proxy named by every proxy variable; what it was sent, one item per connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    received: list[bytes] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(5)
                received.append(connection.recv(65536))
                connection.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    address = f"http://127.0.0.1:{listener.getsockname()[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, address)
        monkeypatch.setenv(name.lower(), address)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    try:
        yield received
    finally:
        done.set()
        listener.close()
        thread.join(timeout=5)


def test_a_loopback_service_is_reached_directly_whatever_the_proxies(
    sandbox: SandboxServer, proxy: list[bytes]
) -> None:
    _read_with_a_token_and_after_a_login(sandbox)
    assert proxy == []  # neither a request nor the login (with the password) went through it


def test_a_loopback_github_api_is_reached_directly_too(proxy: list[bytes]) -> None:
    token = "ghs_" + "0" * 36
    with (
        FakeGitHub(token) as fake,
        GitHub(OWNER_REPO, Secret(token), api_url=fake.api_url, backoff=0.01) as api,
    ):
        assert api.post(api.repo_path("issues/42/comments"), {"body": "a plan"})["id"]
    assert proxy == []  # GitHub's token did not go to the proxy in clear text


def _read_with_a_token_and_after_a_login(sandbox: SandboxServer) -> None:
    """The workers read by a client with the sandbox's token, and by one that signs in first
    (its login made by a client of its own)."""
    login = {"RECONCILER_EMAIL": sandbox.email, "RECONCILER_PASSWORD": sandbox.password}
    for environ in ({"RECONCILER_TOKEN": sandbox.token}, login):
        with ServiceClient(resolve_config(base_url=sandbox.base_url, environ=environ)) as client:
            client.list_workers()
