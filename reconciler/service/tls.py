"""The TLS a client of the service carries: the certificate bundle for https, none for http.

httpx builds a client's TLS context when the client is made, whatever its URL: loading the
certificate bundle costs about 18 ms a client (every command opens one, a test suite
thousands). Plain http is allowed to loopback hosts only (`config.check_base_url`), and no
TLS is spoken there, so a client of such a service gets a context that trusts no
certificate: verification stays on, nothing is loaded, and a TLS connection made through it
anyway (to an https proxy, say) fails its handshake instead of going unverified.
"""

from __future__ import annotations

import functools
import ssl
from typing import Literal
from urllib.parse import urlsplit


def verification(base_url: str) -> ssl.SSLContext | Literal[True]:
    """httpx's `verify` for a client of `base_url`: True (the bundle httpx loads) for https,
    a context that trusts nothing for plain http."""
    if urlsplit(base_url).scheme == "http":
        return _trusting_nothing()
    return True


@functools.cache
def _trusting_nothing() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostnames checked
    if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
        raise RuntimeError("a TLS client context must verify certificates and hostnames")
    return context
