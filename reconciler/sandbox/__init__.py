"""A local sandbox of the workforce service: the same endpoints and rules, on SQLite.

It is a service of its own: nothing here imports the rest of `reconciler`, and the reconciler's
core imports nothing from here; only the CLI and the tests join them.
"""

from reconciler.sandbox.server import SandboxServer
from reconciler.sandbox.store import is_sandbox_database

__all__ = ["SandboxServer", "is_sandbox_database"]
