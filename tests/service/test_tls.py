"""The TLS of a client of the service: the bundle for https, a context trusting nothing for http.

A plain-http client (the sandbox on loopback) is made without loading the certificate bundle,
and no TLS connection made through it can go unverified: a real TLS server on loopback, with a
certificate made for the test, is refused through it and accepted by a context that trusts
that certificate.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.service.tls import verification


def test_https_keeps_httpx_default_verification() -> None:
    assert verification("https://api.example.com") is True
    assert verification("https://127.0.0.1:8443") is True  # https to loopback too


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://localhost", "HTTP://[::1]:1"])
def test_plain_http_gets_a_context_that_trusts_nothing(url: str) -> None:
    context = verification(url)
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0  # no bundle was loaded


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


def test_no_tls_connection_through_the_plain_http_context_goes_unverified(tls_server) -> None:
    port, cert = tls_server
    context = verification("http://127.0.0.1:1")
    assert isinstance(context, ssl.SSLContext)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        context.wrap_socket(raw, server_hostname="127.0.0.1")
    trusting = ssl.create_default_context(cafile=str(cert))  # the same server, trusted: fine
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        trusting.wrap_socket(raw, server_hostname="127.0.0.1").close()
