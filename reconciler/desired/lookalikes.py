"""ExternalIds that read as one: each refused at its line, naming the other.

`ABC-1` in Latin and `АВС-1` in Cyrillic are two ids to the service and one to a reviewer:
two agreements whose plan lines read the same. Each id passes on its own (one script each),
so the files' ids are compared by their confusable skeleton (Unicode TS #39, ICU's, as a
payment's description is: `identity.look_alike_key`), and two different ids with one
skeleton are both refused. Files of ASCII only skip this: among them only `0`/`O` and `1`/`l`
kinds of look-alikes meet, which every font tells apart and the ids of a fleet use freely.
"""

from __future__ import annotations

from reconciler.desired.problems import PathProblem, YamlPath
from reconciler.desired.values import FileValues
from reconciler.identity import look_alike_key, text_key

#: One externalId of the files: the file's name, the worker's index, the id as written.
_Id = tuple[str, int, str]


def look_alike_problems(files: list[FileValues]) -> list[tuple[str, PathProblem]]:
    """A problem at each externalId whose skeleton another, different id shares, when any of
    them holds a character beyond ASCII."""
    if all(values.ascii_text for values in files):
        return []
    ids = list(_external_ids(files))
    if all(external_id.isascii() for _, _, external_id in ids):
        return []
    groups: dict[str, list[_Id]] = {}
    for found in ids:
        groups.setdefault(look_alike_key(found[2]), []).append(found)
    problems: list[tuple[str, PathProblem]] = []
    for group in groups.values():
        if len({text_key(external_id) for _, _, external_id in group}) < 2:
            continue  # the same id twice: the duplicate check says so
        if all(external_id.isascii() for _, _, external_id in group):
            continue
        for name, index, external_id in group:
            other = next(o for o in group if text_key(o[2]) != text_key(external_id))
            message = (
                f"externalId {external_id!a} reads as {other[2]!a}: Unicode TS #39 "
                "finds them confusable (one skeleton), so a plan would show two workers that "
                "look like one; write the ids apart, each in one script"
            )
            path: YamlPath = ("workers", index, "externalId")
            where: YamlPath = ("workers", other[1], "externalId")
            problems.append((name, PathProblem(path, message, other=(other[0], where))))
    return problems


def _external_ids(files: list[FileValues]) -> list[_Id]:
    found: list[_Id] = []
    for values in files:
        workers = values.data.get("workers")
        for index, worker in enumerate(workers if isinstance(workers, list) else []):
            if isinstance(worker, dict) and isinstance(worker.get("externalId"), str):
                found.append((values.name, index, worker["externalId"]))
    return found
