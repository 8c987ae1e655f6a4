"""Spring Data paging with one-indexed `page` (0 and 1 both the first page; 0-based with
`--zero-based-pages`), `size` default 20 clamped to 200, and the envelope counting from 0."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconciler.sandbox.jsontext import RawJSON
from reconciler.sandbox.params import query_integer
from reconciler.sandbox.problems import FieldError, validation_problem

DEFAULT_SIZE = 20
MAX_SIZE = 200


@dataclass(frozen=True, slots=True)
class Paging:
    """A requested page: `page` is 0-based, `size` already clamped."""

    page: int
    size: int

    @property
    def offset(self) -> int:
        return self.page * self.size

    @classmethod
    def from_query(cls, params: Mapping[str, str], *, one_based: bool = True) -> Paging:
        """The page asked for: with `one_based`, `page` 0 and 1 are the first, n the n-th."""
        page = query_integer(params, "page")
        size = query_integer(params, "size")
        errors = []
        if page is not None and page < 0:
            counted = "1 (0 is the first page too)" if one_based else "0"
            errors.append(
                FieldError(f"must be 0 or more (pages count from {counted})", field="page")
            )
        if size is not None and size < 1:
            errors.append(FieldError("must be 1 or more", field="size"))
        if errors:
            raise validation_problem(errors, what="the query")
        index = max((page or 0) - 1, 0) if one_based else page or 0
        return cls(page=index, size=min(size or DEFAULT_SIZE, MAX_SIZE))


def _sort(sorted_: bool) -> dict[str, bool]:
    return {"empty": not sorted_, "sorted": sorted_, "unsorted": not sorted_}


def spring_page(
    content: Sequence[object] | RawJSON,
    paging: Paging,
    total: int,
    *,
    sorted_: bool = True,
    count: int | None = None,
) -> dict[str, object]:
    """The full page envelope of interface §2.8 around `content`: items, or a JSON array's
    text holding `count` of them."""
    total_pages = -(-total // paging.size)
    if isinstance(content, RawJSON):
        assert count is not None, "the number of items in a JSON array's text"
    else:
        content, count = list(content), len(content)
    return {
        "content": content,
        "pageable": {
            "sort": _sort(sorted_),
            "offset": paging.offset,
            "pageNumber": paging.page,
            "pageSize": paging.size,
            "paged": True,
            "unpaged": False,
        },
        "last": paging.page + 1 >= total_pages,
        "totalPages": total_pages,
        "totalElements": total,
        "first": paging.page == 0,
        "size": paging.size,
        "number": paging.page,
        "sort": _sort(sorted_),
        "numberOfElements": count,
        "empty": not count,
    }
