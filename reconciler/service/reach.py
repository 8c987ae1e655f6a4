"""How a client reaches the service: its TLS and its proxies, decided by the base URL's scheme.

Plain http is allowed to loopback hosts only (`config.check_base_url`): the sandbox, or a
tunnel. Such a service is reached directly, never through a proxy named by the environment
(`HTTP_PROXY`, `ALL_PROXY`): httpx exempts no loopback host by itself, so the bearer token would
otherwise travel in clear text to the proxy's host. And no TLS is spoken to it, so its client
gets a TLS context that trusts no certificate instead of the bundle httpx loads for every client
whatever its URL (about 18 ms a client: every command opens one, a test suite thousands); its
verification stays on, so a TLS connection made through it fails its handshake instead of going
unverified. An https service is reached as httpx reaches any: the certificate bundle
(`SSL_CERT_FILE` and `SSL_CERT_DIR` honoured) and the environment's proxies.
"""

from __future__ import annotations

import functools
import ssl
from typing import Literal, TypedDict
from urllib.parse import urlsplit


class Reach(TypedDict):
    """httpx.Client's keywords for reaching a service: `verify` and `trust_env`."""

    verify: ssl.SSLContext | Literal[True]
    trust_env: bool


def reach(base_url: str) -> Reach:
    """How a client reaches `base_url`, as httpx.Client's keywords (`**reach(url)`): for https,
    httpx's defaults (the bundle, the environment's proxies); for plain http, a context that
    trusts nothing and no proxy or netrc from the environment."""
    if urlsplit(base_url.strip()).scheme == "http":
        return Reach(verify=_trusting_nothing(), trust_env=False)
    return Reach(verify=True, trust_env=True)


@functools.cache
def _trusting_nothing() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostnames checked
    if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
        raise RuntimeError("a TLS client context must verify certificates and hostnames")
    return context
