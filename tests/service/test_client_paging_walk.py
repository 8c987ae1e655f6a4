"""The paging walk as a table of services: how each numbers and fills its pages.

Each case is a `fetch(page) -> Page` that behaves like some service; the walk must return every
item once, in order, and stop. (The same walk runs over real HTTP in test_client_paging.py.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from reconciler.service.errors import ServerError
from reconciler.service.paging import Item, Numbering, Page, walk

SIZE = 10


def _items(ids: range | list[int]) -> list[Item]:
    return [{"id": n} for n in ids]


def spring(count: int, *, one_indexed: bool = False, envelope: str = "full") -> Callable:
    """A Spring-style service holding ids 1..count."""

    def fetch(asked: int) -> Page:
        index = max(asked - 1, 0) if one_indexed else asked
        ids = range(index * SIZE + 1, min((index + 1) * SIZE, count) + 1)
        total_pages = math.ceil(count / SIZE)
        if envelope == "content":
            return Page(items=_items(ids))
        if envelope == "total":
            return Page(items=_items(ids), number=index, size=SIZE, total_elements=count)
        return Page(
            items=_items(ids),
            number=index,
            size=SIZE,
            total_pages=total_pages,
            total_elements=count,
            last=index >= total_pages - 1,
        )

    return fetch


def ignores_page(count: int) -> Callable:
    """A service that answers the first page whatever page is asked for."""

    def fetch(asked: int) -> Page:
        return Page(items=_items(range(1, min(SIZE, count) + 1)), total_pages=3, last=False)

    return fetch


def grows_after_first_page(count: int) -> Callable:
    """A list that gains SIZE items once the first page has been read."""
    calls = []

    def fetch(asked: int) -> Page:
        calls.append(asked)
        now = count if len(calls) == 1 else count + SIZE
        ids = range(asked * SIZE + 1, min((asked + 1) * SIZE, now) + 1)
        return Page(items=_items(ids), number=asked, size=SIZE, total_elements=now)

    return fetch


CASES = {
    "zero-indexed, full envelope": (spring(45), list(range(1, 46))),
    "one-indexed, full envelope": (spring(45, one_indexed=True), list(range(1, 46))),
    "zero-indexed, count only": (spring(40, envelope="total"), list(range(1, 41))),
    "one-indexed, count only": (spring(40, one_indexed=True, envelope="total"), list(range(1, 41))),
    "zero-indexed, content only": (spring(30, envelope="content"), list(range(1, 31))),
    "one-indexed, content only": (
        spring(31, one_indexed=True, envelope="content"),
        list(range(1, 32)),
    ),
    "empty": (spring(0), []),
    "exactly one full page, content only": (spring(10, envelope="content"), list(range(1, 11))),
    "a service that ignores the page asked for": (ignores_page(25), list(range(1, 11))),
    "a list that grows while it is read": (grows_after_first_page(30), list(range(1, 41))),
}


def _submit(pool: ThreadPoolExecutor) -> Callable[[Callable[[int], Page], int], Future[Page]]:
    return lambda fetch, number: pool.submit(fetch, number)


@pytest.mark.parametrize("case", list(CASES))
def test_every_item_once_in_order(case: str) -> None:
    fetch, expected = CASES[case]
    with ThreadPoolExecutor(3) as pool:
        ids = [
            item["id"]
            for item in walk(
                fetch, size=SIZE, key=lambda i: i["id"], submit=_submit(pool), window=4
            )
        ]
    assert ids == expected


def test_a_failed_page_fails_the_walk_and_nothing_after_it_is_yielded() -> None:
    healthy = spring(95)

    def fetch(asked: int) -> Page:
        if asked == 5:
            raise ServerError("503 on page 5", status=503)
        return healthy(asked)

    seen: list[int] = []
    with ThreadPoolExecutor(3) as pool, pytest.raises(ServerError):
        for item in walk(fetch, size=SIZE, key=lambda i: i["id"], submit=_submit(pool), window=4):
            seen.append(item["id"])
    assert seen == list(range(1, 51))  # pages 0 to 4, in order; the read as a whole failed


class Recorded:
    """A service that notes each page asked, read by walks that share one `Numbering`."""

    def __init__(self, service: Callable[[int], Page]) -> None:
        self.service = service
        self.asked: list[int] = []
        self.numbering = Numbering()

    def fetch(self, page: int) -> Page:
        self.asked.append(page)
        return self.service(page)

    def read(self) -> list[int]:
        """One walk's ids; `asked` then holds the pages this walk asked for."""
        self.asked.clear()
        with ThreadPoolExecutor(3) as pool:
            return [
                item["id"]
                for item in walk(
                    self.fetch,
                    size=SIZE,
                    key=lambda i: i["id"],
                    submit=_submit(pool),
                    window=4,
                    numbering=self.numbering,
                )
            ]


@pytest.mark.parametrize(
    ("one_indexed", "envelope"),
    [(False, "full"), (True, "full"), (False, "content"), (True, "content")],
)
def test_a_second_walk_starts_at_the_first_page_the_first_walk_found(
    one_indexed: bool, envelope: str
) -> None:
    service = Recorded(spring(45, one_indexed=one_indexed, envelope=envelope))
    assert service.read() == list(range(1, 46))
    assert service.read() == list(range(1, 46))
    first = 1 if one_indexed else 0
    assert service.numbering.first == first
    assert sorted(service.asked) == list(range(first, first + 5))  # five pages, each once


@pytest.mark.parametrize(
    ("one_indexed", "envelope", "asked_pages", "learned"),
    [
        (True, "full", [1], 1),  # page 1 answers number 0: the first page, nothing more
        (False, "full", [1, 0], 0),  # page 1 answers number 1 and nothing: page 0 holds all
        (True, "content", [1, 0], 1),  # page 1 repeats page 0
        (False, "content", [1, 0], 0),  # page 1 is empty, page 0 is not
    ],
)
def test_a_one_page_list_takes_at_most_two_requests_and_teaches_the_numbering(
    one_indexed: bool, envelope: str, asked_pages: list[int], learned: int
) -> None:
    service = Recorded(spring(3, one_indexed=one_indexed, envelope=envelope))
    assert (service.read(), service.asked) == ([1, 2, 3], asked_pages)
    assert service.numbering.first == learned


@pytest.mark.parametrize("one_indexed", [True, False])
def test_an_empty_list_with_a_count_takes_one_request(one_indexed: bool) -> None:
    service = Recorded(spring(0, one_indexed=one_indexed))
    assert (service.read(), service.asked) == ([], [1])
    assert service.numbering.first == (1 if one_indexed else 0)


def test_an_empty_list_on_a_service_without_page_numbers_teaches_nothing() -> None:
    service = Recorded(spring(0, envelope="content"))
    assert (service.read(), service.numbering.first) == ([], None)


def test_the_next_pages_are_asked_before_the_first_page_is_handed_on() -> None:
    """The caller's work on the first page (decoding it, loading what it needs for that the
    first time) is done while the next pages are awaited, not one round trip before them."""
    fetch = spring(95, one_indexed=True)
    asked: list[int] = []

    def submit(function: Callable[[int], Page], number: int) -> Future[Page]:
        asked.append(number)
        future: Future[Page] = Future()
        future.set_result(function(number))
        return future

    items = walk(fetch, size=SIZE, key=lambda item: item["id"], submit=submit, window=4)
    assert next(items) == {"id": 1}
    assert asked == [2, 3, 4, 5]  # asked when the first item comes, the window full
    assert [item["id"] for item in items] == list(range(2, 96))
    assert asked == list(range(2, 11))
