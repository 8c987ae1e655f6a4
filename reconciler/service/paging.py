"""Walking a paged list: every item once, whatever page numbering the service uses.

The engine knows nothing of HTTP: it gets a `fetch(page_number) -> Page` and a way to run
fetches concurrently. After the first page, the rest are fetched concurrently (a bounded
number in flight, handed out in order) when the envelope says how many there are, and one after
another until a short page when it does not.

A service may number pages from 1 while answering `number` 0 for its first page (Spring with
one-indexed parameters, as the real service; there `page=0` and `page=1` both answer the first
page). Page 1 tells them apart: if it answers `number` 0 or repeats the first page's ids, the
service is one-indexed and its last page is `totalPages`, not `totalPages - 1`. What page 1
told is kept in a `Numbering` shared by the client's walks, so only the first walk that reaches
a second page asks a page twice; later walks start at the service's first page and ask each
page once. Items are keyed, and an id already yielded is never yielded again.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from reconciler.service.decode import DecodeError

Item = Mapping[str, Any]


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

    start = numbering.first or 0
    first = fetch(start)
    first_keys = {key(item) for item in first.items}
    yield from fresh(first)
    if _is_final(first, size):
        return
    walker = _Walker(fetch, fresh, key, first_keys, size, numbering)
    total = _total_pages(first, size)
    if total is None:
        yield from walker.unknown(start)
        return
    yield from walker.known(seen, first, start, total, submit, window)


@dataclass
class _Walker:
    """The pages after the first: how many are known, or not."""

    fetch: Callable[[int], Page]
    fresh: Callable[[Page], list[Item]]
    key: Callable[[Item], Hashable]
    first_keys: set[Hashable]
    size: int
    numbering: Numbering

    def learn(self, page: Page) -> bool:
        """What page 1 tells of the numbering (True: one-indexed), noted for later walks."""
        if _answers_first_page(page, self.first_keys, self.key):
            self.numbering.first = 1
            return True
        if page.number == 1 or page.items:  # page 1 went on past the first page
            self.numbering.first = 0
        return False

    def known(
        self,
        seen: set[Hashable],
        first: Page,
        start: int,
        total: int,
        submit: Callable[[Callable[[int], Page], int], Future[Page]],
        window: int,
    ) -> Iterator[Item]:
        probing = self.numbering.first is None
        last_number = start + total - 1  # zero-indexed until page 1 says otherwise
        next_number = start + 1
        in_flight: deque[tuple[int, Future[Page]]] = deque()
        final = first
        try:
            while True:
                while next_number <= last_number and len(in_flight) < window:
                    in_flight.append((next_number, submit(self.fetch, next_number)))
                    next_number += 1
                if not in_flight:
                    break
                number, future = in_flight.popleft()
                page = future.result()
                if probing and number == 1 and self.learn(page):
                    last_number = total  # one-indexed: pages 1..totalPages
                yield from self.fresh(page)
                final = page
        finally:
            for _, future in in_flight:
                future.cancel()
        # The list may have grown since the first page: go on while the service says there is
        # more.
        while _more_after(final, self.size, len(seen)):
            page = self.fetch(next_number)
            new = self.fresh(page)
            if not new:
                return
            yield from new
            final, next_number = page, next_number + 1

    def unknown(self, start: int) -> Iterator[Item]:
        probing = self.numbering.first is None
        number = start + 1
        while True:
            page = self.fetch(number)
            new = self.fresh(page)
            repeats_first = probing and number == 1 and self.learn(page)
            # On a one-indexed service page 1 repeats page 0: nothing new, yet not the end.
            if not new and not repeats_first:
                return
            yield from new
            if _is_final(page, self.size):
                return
            number += 1


def _answers_first_page(
    page: Page, first_keys: set[Hashable], key: Callable[[Item], Hashable]
) -> bool:
    # On a zero-indexed service page 1 answers number 1 and never starts with a page-0 id.
    return page.number == 0 or (bool(page.items) and key(page.items[0]) in first_keys)


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
