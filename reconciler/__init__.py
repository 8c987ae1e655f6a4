"""A declarative reconciler for a workforce contracting and payments account."""


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed package's metadata on first use.

    `importlib.metadata` costs `validate` more start-up than all its own code: a command that
    never shows the version never loads it.
    """
    if name != "__version__":
        raise AttributeError(f"module 'reconciler' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("reconciler")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0+source"
    globals()["__version__"] = found
    return found


__all__ = ["__version__"]  # defined on first use, by __getattr__
