"""The forges' shared REST client (reconciler.gitops.rest), over GitHub's and GitLab's: the same
retries, refusals and paging from one body, each forge saying only its name and its header."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from reconciler.gitops.github import GitHub, GitHubError
from reconciler.gitops.gitlab.client import GitLab, GitLabError
from reconciler.gitops.rest import ForgeError, Rest
from reconciler.lean_httpx import httpx
from reconciler.secrets import Secret

TOKEN = "glpat-rest-" + "k3Y9" * 5
Answer = Callable[[httpx.Request], httpx.Response]


def _github(answer: Answer) -> Rest:
    return GitHub("acme/payroll", Secret(TOKEN), transport=httpx.MockTransport(answer),
                  backoff=0.001)  # fmt: skip


def _gitlab(answer: Answer) -> Rest:
    return GitLab("https://gitlab.example/api/v4", "7", Secret(TOKEN),
                  transport=httpx.MockTransport(answer), backoff=0.001)  # fmt: skip


@dataclass(frozen=True)
class Forge:
    """A forge's client over a fake answer, its name, its error, the header its token is in."""

    client: Callable[[Answer], Rest]
    name: str
    error: type[ForgeError]
    header: str


@pytest.fixture(
    params=[
        Forge(_github, "GitHub", GitHubError, "Authorization"),
        Forge(_gitlab, "GitLab", GitLabError, "PRIVATE-TOKEN"),
    ],
    ids=["github", "gitlab"],
)
def forge(request: pytest.FixtureRequest) -> Forge:
    return request.param  # type: ignore[no-any-return]


def test_a_failure_is_sent_again_only_where_repeating_is_safe(forge: Forge) -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        assert TOKEN in request.headers[forge.header]
        if seen.count(request.method) < 3:
            return httpx.Response(502, json={"message": "Bad Gateway"})
        return httpx.Response(200, json={"id": 1})

    with forge.client(answer) as api:
        assert api.get("/thing") == {"id": 1} and api.put("/thing", {}) == {"id": 1}
        refused = rf"^{forge.name} refused POST /\S+: 502 Bad Gateway$"
        with pytest.raises(forge.error, match=refused):
            api.post("/thing", {"body": "once"})
    assert seen == ["GET"] * 3 + ["PUT"] * 3 + ["POST"]  # a second POST could duplicate


def test_a_refusal_says_the_forge_the_request_and_what_it_said(forge: Forge) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/gone"):
            return httpx.Response(404, json={"message": "404 Not found"})
        return httpx.Response(422, json={"message": {"title": ["is too long"]}})

    with forge.client(answer) as api:
        assert api.download("/gone") is None  # a file the forge has none of
        with pytest.raises(forge.error) as refused:
            api.patch("/thing", {"title": "x" * 300})
    assert refused.value.status == 422
    assert refused.value.message.startswith(f"{forge.name} refused PATCH /")
    assert refused.value.message.endswith(": 422 {'title': ['is too long']}")


def test_a_forge_out_of_reach_is_named_with_what_to_check(forge: Forge) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    said = f"could not reach {forge.name} at "
    with forge.client(answer) as api, pytest.raises(forge.error, match=said) as lost:
        api.get("/thing")
    assert lost.value.hint is not None and "the runner's network" in lost.value.hint
    assert TOKEN not in str(lost.value)


def test_a_list_is_paged_but_never_to_another_host(forge: Forge) -> None:
    hosts: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        page = int(request.url.params.get("page", "1"))
        links = {
            1: f'<{request.url.copy_with(params={"page": "2"})}>; rel="next"',
            2: '<https://elsewhere.example/steal?page=3>; rel="next"',
        }
        return httpx.Response(200, json=[page], headers={"Link": links[page]})

    with forge.client(answer) as api:
        items = api.paginate("/things")
        assert [next(items), next(items)] == [1, 2]
        said = f"{forge.name}'s next-page link points to another host"
        with pytest.raises(forge.error, match=said):
            next(items)
    assert "elsewhere.example" not in hosts
