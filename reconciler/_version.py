"""The reconciler's version: the one place it is written (pyproject.toml reads it from here).

A constant, not the installed package's metadata: `importlib.metadata` costs every command that
sends a User-Agent about 40 ms of its start, before its first request.
"""

VERSION = "0.1.0"
