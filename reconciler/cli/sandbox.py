# LOCAL SHIM, NEVER COMMITTED: the sandbox branch provides the real module.
import click


@click.group()
def sandbox() -> None:
    """shim"""
