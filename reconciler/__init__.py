"""A declarative reconciler for a workforce contracting and payments account."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("reconciler")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
