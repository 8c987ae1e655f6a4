"""Which hosts are this machine: where plain http is allowed (a webhook, the service address).

Pure and dependency-free, so the desired-state checks and the service client share one answer.
"""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1, with or without brackets)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
