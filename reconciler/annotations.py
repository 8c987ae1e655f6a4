"""GitHub workflow commands (`::error::...`), each one line whatever its text holds.

The runner reads every line of a job's log that starts with `::` as a command. A message that
quotes text with a line break (a pull request's reconciler.yaml, an ignore rule's reason, git's
stderr, an error's hint) would end its annotation there, and the next line could be a command
of the text's own (`::add-mask::`, `::stop-commands::`, a fake `::notice::`). GitHub's escapes
keep it one line: in the message `%`, CR and LF; in a property (`file=`) also `:` and `,`.
"""

from __future__ import annotations


def workflow_command(command: str, message: str, **properties: object) -> str:
    """`::command prop=value,...::message`, its message and properties escaped."""
    said = ",".join(f"{name}={_escape(str(value), True)}" for name, value in properties.items())
    return f"::{command}{' ' + said if said else ''}::{_escape(message, False)}"


def _escape(text: str, in_property: bool) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text
