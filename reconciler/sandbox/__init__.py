"""A local sandbox of the workforce service: the same endpoints and rules, on SQLite.

It is a service of its own: nothing here imports the rest of `reconciler`, and the reconciler's
core imports nothing from here; only the CLI and the tests join them. The package imports its
modules only when a name is asked for, so `from reconciler.sandbox import events` inside the
package never runs the server's imports (and no module of the package imports itself round).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.sandbox.server import SandboxServer
    from reconciler.sandbox.store import is_sandbox_database

__all__ = ["SandboxServer", "is_sandbox_database"]


def __getattr__(name: str) -> Any:
    if name == "SandboxServer":
        from reconciler.sandbox.server import SandboxServer

        return SandboxServer
    if name == "is_sandbox_database":
        from reconciler.sandbox.store import is_sandbox_database

        return is_sandbox_database
    raise AttributeError(f"module 'reconciler.sandbox' has no attribute {name!r}")
