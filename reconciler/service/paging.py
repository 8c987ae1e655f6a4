"""Walking a paged list: every item once, whatever page numbering the service uses.

The engine knows nothing of HTTP: it gets a `fetch(page_number) -> Page` and a way to run
fetches concurrently. After the opening, the rest are fetched concurrently (a bounded number
in flight, handed out in order) when the envelope says how many there are, and one after
another until a short page when it does not.

A service may number pages from 1 while answering `number` 0 for its first page (Spring with
one-indexed parameters, as the real service; there `page=0` and `page=1` both answer the first
page), or from 0. A walk opens with `page=1`: a one-indexed service answers its first page,
`number` 0, and nothing is asked twice; a zero-indexed one answers `number` 1, and page 0 is
asked next. Without `number` (a content-only envelope) page 0 is asked too, and page 1
repeating its ids means one-indexed. What the opening learns is kept in a `Numbering` shared by
the client's walks, so later walks ask the service's first page and each page once. Items are
keyed, and an id already yielded is never yielded again.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from reconciler.service.decode import DecodeError

Item = Mapping[str, Any]
T = TypeVar("T")


@dataclass(slots=True)
class Numbering:
    """How the service numbers `page`, once a walk has seen: `first` is 0 or 1, None unknown."""

    first: int | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One page as the service answered it; envelope fields are None when absent."""

    items: list[Item]
    number: int | None = None
    size: int | None = None
    total_pages: int | None = None
    total_elements: int | None = None
    last: bool | None = None


def parse_page(body: object) -> Page:
    """A Page from a Spring-style envelope, a content-only envelope or a bare array."""
    if isinstance(body, list):
        return Page(items=_items(body))
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise DecodeError("a page answer must be an object with a `content` array")
    pageable = body.get("pageable")
    if not isinstance(pageable, dict):
        pageable = {}
    return Page(
        items=_items(body["content"]),
        number=_first_int(body.get("number"), pageable.get("pageNumber")),
        size=_first_int(body.get("size"), pageable.get("pageSize")),
        total_pages=_first_int(body.get("totalPages")),
        total_elements=_first_int(body.get("totalElements")),
        last=body["last"] if isinstance(body.get("last"), bool) else None,
    )


def walk(
    fetch: Callable[[int], Page],
    *,
    size: int,
    key: Callable[[Item], Hashable],
    submit: Callable[[Callable[[int], Page], int], Future[Page]],
    window: int,
    numbering: Numbering | None = None,
) -> Iterator[Item]:
    """Every item of a paged list, in order, each once.

    `fetch(n)` asks for `page=n`; `size` is the page size asked for; `submit(fetch, n)` runs
    `fetch(n)` concurrently; at most `window` pages are in flight. `numbering` is what earlier
    walks learned of the service (and learns what this one does). A page that fails fails the
    whole walk.
    """
    numbering = Numbering() if numbering is None else numbering
    seen: set[Hashable] = set()

    def fresh(page: Page) -> list[Item]:
        new = []
        for item in page.items:
            item_key = key(item)
            if item_key not in seen:
                seen.add(item_key)
                new.append(item)
        return new

    known = numbering.first
    opening = _open(fetch, key, numbering) if known is None else [fetch(known)]
    # Past the opening the numbering is known: a page 1 that went on past page 0 tells it.
    first_index = numbering.first or 0
    next_number = first_index + len(opening)
    latest = opening[-1]
    total = _total_pages(latest, size)
    ended = any(_is_final(page, size) for page in opening)
    if ended or total is None:
        for page in opening:
            yield from fresh(page)
        if not ended:
            yield from _walk_unknown(fetch, fresh, size, next_number)
        return
    last_number = first_index + total - 1
    yield from _walk_known(
        fetch, fresh, seen, opening, next_number, last_number, size, submit, window
    )


def _open(
    fetch: Callable[[int], Page], key: Callable[[Item], Hashable], numbering: Numbering
) -> list[Page]:
    """The first pages of a service whose numbering is not known yet, in order; learns it."""
    second = fetch(1)
    if second.number == 0:  # one-indexed: page 1 is the first page
        numbering.first = 1
        return [second]
    if second.number == 1 and 0 in (second.total_elements, second.total_pages):
        numbering.first = 0  # zero-indexed, and the list is empty: page 0 would be too
        return [second]
    first = fetch(0)
    first_keys = {key(item) for item in first.items}
    if second.number is None and second.items and key(second.items[0]) in first_keys:
        numbering.first = 1  # page 1 repeats page 0: both are the first page
        return [second]
    if second.number == 1 or first.items:
        numbering.first = 0
    return [first, second]


def _walk_known(
    fetch: Callable[[int], Page],
    fresh: Callable[[Page], list[Item]],
    seen: set[Hashable],
    opening: list[Page],
    next_number: int,
    last_number: int,
    size: int,
    submit: Callable[[Callable[[int], Page], int], Future[Page]],
    window: int,
) -> Iterator[Item]:
    """The pages after the opening, `window` in flight; the next ones are asked before the
    opening's items are handed on, so that the caller's work on them (decoding the first
    page, its first use of what it needs for that) is done while they are awaited."""
    in_flight: deque[tuple[int, Future[Page]]] = deque()
    read = deque(opening)  # handed on first, once the window is asked
    final = opening[-1]
    try:
        while True:
            while next_number <= last_number and len(in_flight) < window:
                in_flight.append((next_number, submit(fetch, next_number)))
                next_number += 1
            if read:
                page = read.popleft()
            elif in_flight:
                page = in_flight.popleft()[1].result()
            else:
                break
            yield from fresh(page)
            final = page
    finally:
        for _, future in in_flight:
            future.cancel()
    # The list may have grown since the opening: go on while the service says there is more.
    while _more_after(final, size, len(seen)):
        page = fetch(next_number)
        new = fresh(page)
        if not new:
            return
        yield from new
        final, next_number = page, next_number + 1


def _walk_unknown(
    fetch: Callable[[int], Page],
    fresh: Callable[[Page], list[Item]],
    size: int,
    number: int,
) -> Iterator[Item]:
    while True:
        page = fetch(number)
        new = fresh(page)
        if not new:
            return
        yield from new
        if _is_final(page, size):
            return
        number += 1


def _more_after(final: Page, size: int, yielded: int) -> bool:
    """Whether a page may follow the last planned one.

    The envelope's `last` decides; without it, a full page does while fewer items were seen
    than the latest count says there are.
    """
    if final.last is not None:
        return not final.last
    full = len(final.items) >= (final.size or size)
    return full and (final.total_elements is None or yielded < final.total_elements)


def _is_final(page: Page, size: int) -> bool:
    return page.last is True or not page.items or len(page.items) < (page.size or size)


def _total_pages(page: Page, size: int) -> int | None:
    if page.total_pages is not None:
        return page.total_pages
    if page.total_elements is not None:
        return math.ceil(page.total_elements / (page.size or size))
    return None


def _items(content: list[object]) -> list[Item]:
    if not all(isinstance(item, dict) for item in content):
        raise DecodeError("every item of a page's `content` must be an object")
    return content  # type: ignore[return-value]


def _first_int(*values: object) -> int | None:
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def walk_from(
    page: Callable[[int], list[T]],
    *,
    size: int,
    before: Callable[[T], bool],
    submit: Callable[[Callable[[int], list[T]], int], Future[list[T]]],
    ahead: int,
) -> Iterator[T]:
    """The items of an oldest-first list that says nothing of its length (the journal), from
    the first one not `before` the start, reading only the pages that may hold them.

    `page(n)` is the n-th page counted from 0 (the caller keeps what it read). The first page
    that matters is found by doubling the page number, then halving the gap: a few requests
    however long the history. From there the next `ahead` pages are asked at once through
    `submit` and read in order until one is not full, so the wait is not one round trip a page.
    """

    def all_before(number: int) -> bool:  # full, and its newest item is before the start
        items = page(number)
        return len(items) >= size and before(items[-1])

    older, step = -1, 1
    while all_before(older + step):
        older, step = older + step, step * 2
    newer = older + step  # the first page that matters is in (older, newer]
    while newer - older > 1:
        middle = (older + newer) // 2
        older, newer = (middle, newer) if all_before(middle) else (older, middle)
    in_flight: deque[Future[list[T]]] = deque()
    number = newer
    try:
        while True:
            while len(in_flight) < ahead:
                in_flight.append(submit(page, number))
                number += 1
            items = in_flight.popleft().result()
            yield from (item for item in items if not before(item))
            if len(items) < size:
                return
    finally:
        for future in in_flight:
            future.cancel()
