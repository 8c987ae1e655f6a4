"""A declarative reconciler for a workforce contracting and payments account."""

from reconciler._version import VERSION as __version__

__all__ = ["__version__"]
