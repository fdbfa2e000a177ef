"""The plain HTTP profile: `toolreplay.adapters.http.instrument(client, name=...)` (RFC 0006 §B).

A fake REST API (issues, a search, a file upload, an avatar, an event stream) is served
over real HTTP on loopback (`served`), and reached by real httpx/httpx2 clients, sync
and async. Recording goes through the capture core exactly as the OpenAI adapter does;
replay points the client at a server that counts connections, with the network guard
open, so a request that leaked would be counted.
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import toolreplay
from tests.adapters.http_api import Dropped, served
from tests.support.counting_server import CountingServer
from toolreplay.adapters.http import AdapterOptionError, edit, instrument, reply, route_template


def _libraries() -> list[ModuleType]:
    found: list[ModuleType] = []
    for name in ("httpx", "httpx2"):
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            continue
    return found


ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = _libraries()
assert LIBRARIES, "httpx2 (openai 3.x) or httpx (openai 2.x, the groq SDK) is installed"

CANARIES = {
    "bearer": "CANARY-bearer-91f0",
    "cookie": "CANARY-cookie-4ad1",
    "x_api_key": "CANARY-xapikey-77c3",
    "api_key": "CANARY-apikey-0b5e",
    "vendor": "CANARY-vendor-e2d8",
    "query": "CANARY-query-5c19",
    "set_cookie": "CANARY-setcookie-a604",
    "excluded": "CANARY-excluded-3f7b",
}
ISSUE = {"id": 12, "title": "Crash on start", "state": "open", "labels": [{"name": "bug"}]}
EVENTS = [{"delta": "Look"}, {"delta": "ing into"}, {"delta": " it."}]
AVATAR = bytes(range(256))


def _forms(value: str) -> list[bytes]:
    raw = value.encode()
    return [raw, base64.b64encode(raw), raw.hex().encode()]


FORBIDDEN = [form for value in CANARIES.values() for form in _forms(value)]


class IssuesAPI:
    """A REST API for one repository's issues, counting what it receives."""

    def __init__(self, library: ModuleType) -> None:
        self.library = library
        self.requests: list[Any] = []
        self.issues = {12: dict(ISSUE)}

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        http = self.library
        path = request.url.path.removeprefix("/v1")
        headers = {
            "x-request-id": f"req-{len(self.requests)}",
            "set-cookie": f"session={CANARIES['set_cookie']}; HttpOnly",
            "x-internal-trace": CANARIES["excluded"],
            "etag": '"v1"',
        }
        if path == "/repos/octo/hello/events":
            stream = "".join(f"event: note\ndata: {json.dumps(event)}\n\n" for event in EVENTS)
            return http.Response(
                200,
                content=stream.encode(),
                headers={**headers, "content-type": "text/event-stream"},
            )
        if path == "/users/octo/avatar":
            return http.Response(
                200, content=AVATAR, headers={**headers, "content-type": "image/png"}
            )
        if path == "/uploads":
            return http.Response(201, json={"size": len(request.content)}, headers=headers)
        if path == "/search/issues":
            found = [i for i in self.issues.values() if request.url.params["q"] in i["title"]]
            return http.Response(200, json={"items": found}, headers=headers)
        number = int(path.rsplit("/", 1)[1]) if path.startswith("/repos/octo/hello/issues/") else 0
        issue = self.issues.get(number)
        if issue is None:
            return http.Response(404, json={"message": "Not Found"}, headers=headers)
        if request.method == "PATCH":
            issue.update(json.loads(request.content))
        return http.Response(200, json=issue, headers=headers)


def sync_app(client: Any) -> dict[str, Any]:
    """What an application reads of the API through one client."""
    issue = client.get("/repos/octo/hello/issues/12").json()
    closed = client.patch("/repos/octo/hello/issues/12", json={"state": "closed"}).json()
    found = client.get("/search/issues", params={"q": "Crash", "access_token": CANARIES["query"]})
    missing = client.get("/repos/octo/hello/issues/99")
    upload = client.post(
        "/uploads", content=b"\x00binary report", headers={"content-type": "application/pdf"}
    )
    avatar = client.get("/users/octo/avatar").content
    with client.stream("GET", "/repos/octo/hello/events") as stream:
        events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    return {
        "issue": issue,
        "closed": closed,
        "found": found.json(),
        "missing": (missing.status_code, missing.json()),
        "upload": (upload.status_code, upload.json()),
        "avatar": avatar,
        "events": events,
        "etag": found.headers.get("etag"),
    }


async def async_app(client: Any) -> dict[str, Any]:
    issue = (await client.get("/repos/octo/hello/issues/12")).json()
    closed = (await client.patch("/repos/octo/hello/issues/12", json={"state": "closed"})).json()
    found = await client.get(
        "/search/issues", params={"q": "Crash", "access_token": CANARIES["query"]}
    )
    missing = await client.get("/repos/octo/hello/issues/99")
    upload = await client.post(
        "/uploads", content=b"\x00binary report", headers={"content-type": "application/pdf"}
    )
    avatar = (await client.get("/users/octo/avatar")).content
    async with client.stream("GET", "/repos/octo/hello/events") as stream:
        events = [
            json.loads(line[5:]) async for line in stream.aiter_lines() if line.startswith("data:")
        ]
    return {
        "issue": issue,
        "closed": closed,
        "found": found.json(),
        "missing": (missing.status_code, missing.json()),
        "upload": (upload.status_code, upload.json()),
        "avatar": avatar,
        "events": events,
        "etag": found.headers.get("etag"),
    }


def plain_client(library: ModuleType, base_url: str, *, use_async: bool) -> Any:
    """A client as an application configures one: credentials in headers and cookies."""
    client_class = library.AsyncClient if use_async else library.Client
    return client_class(
        base_url=base_url,
        headers={
            "Authorization": f"Bearer {CANARIES['bearer']}",
            "x-api-key": CANARIES["x_api_key"],
            "api-key": CANARIES["api_key"],
            "X-Vendor-Token": CANARIES["vendor"],
        },
        cookies={"session": CANARIES["cookie"]},
    )


def run(app_mode: str, client: Any) -> dict[str, Any]:
    if app_mode == "async":

        async def main() -> dict[str, Any]:
            async with client:
                return await async_app(client)

        return asyncio.run(main())
    with client:
        return sync_app(client)


def instrumented(library: ModuleType, base_url: str, mode: str) -> Any:
    return instrument(
        plain_client(library, base_url, use_async=mode == "async"),
        name="issues",
        exclude_headers=["X-Internal-Trace"],
    )


CASES = [(library, mode) for library in LIBRARIES for mode in ("sync", "async")]
IDS = [f"{library.__name__}-{mode}" for library, mode in CASES]


@pytest.fixture
def counting() -> Iterator[CountingServer]:
    server = CountingServer()
    yield server
    server.close()


def record(tmp_path: Path, library: ModuleType, mode: str) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / f"{library.__name__}-{mode}.trp"
    api = IssuesAPI(library)
    with served(api) as url, toolreplay.record(path):
        seen = run(mode, instrumented(library, url, mode))
    assert len(api.requests) == 7
    return path, seen


@pytest.mark.parametrize(("library", "mode"), CASES, ids=IDS)
def test_recorded_calls_replay_strictly_with_no_request(
    library: ModuleType, mode: str, tmp_path: Path, counting: CountingServer
) -> None:
    path, recorded = record(tmp_path, library, mode)
    assert recorded["closed"]["state"] == "closed"
    assert recorded["missing"] == (404, {"message": "Not Found"})
    assert recorded["avatar"] == AVATAR
    assert recorded["events"] == EVENTS  # the JSON data (replay re-encodes it compactly)

    operations = toolreplay.read_trace(path).operations
    assert [op.effect for op in operations] == [
        "issues.GET /repos/octo/hello/issues/{id}",
        "issues.PATCH /repos/octo/hello/issues/{id}",
        "issues.GET /search/issues",
        "issues.GET /repos/octo/hello/issues/{id}",
        "issues.POST /uploads",
        "issues.GET /users/octo/avatar",
        "issues.GET /repos/octo/hello/events",
    ]
    patch, search, upload = operations[1], operations[2], operations[4]
    assert patch.inputs == {
        "method": "PATCH",
        "path": "/repos/octo/hello/issues/12",
        "query": {},
        "body": {"state": "closed"},
    }
    assert search.inputs["query"] == {"q": "Crash", "access_token": "<redacted>"}
    digest = upload.inputs["body_digest"]
    assert isinstance(digest, dict)
    assert (digest["content_type"], digest["size"]) == ("application/pdf", 14)
    outputs: list[Any] = [
        op.outcome.value for op in operations if isinstance(op.outcome, toolreplay.Returned)
    ]
    assert outputs[0]["body"] == ISSUE  # JSON as JSON (the server sent it gzipped)
    assert outputs[0]["headers"] == {
        "server": outputs[0]["headers"]["server"],
        "x-request-id": "req-1",
        "etag": '"v1"',
        "content-type": "application/json",
    }
    assert "base64" in outputs[5]
    assert [event["data"] for event in outputs[6]["events"]] == EVENTS

    # Replay, pointed at a server that counts connections, with the network guard open:
    # a request the adapter let through would reach it and be counted.
    with toolreplay.replay(path, network="allow"):
        replayed = run(mode, instrumented(library, counting.url, mode))
    assert counting.accepted == 0
    assert replayed == recorded


@pytest.mark.parametrize(("library", "mode"), CASES, ids=IDS)
def test_credentials_and_cookies_never_reach_a_trace(
    library: ModuleType, mode: str, tmp_path: Path
) -> None:
    path, _ = record(tmp_path, library, mode)
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(
        path,
        branch,
        patches=[toolreplay.replace_output(at=0, value=edit({"$.title": "Crash on exit"}))],
    ):
        run(mode, instrumented(library, "http://127.0.0.1:9/v1", mode))
    for written in (path, branch):
        content = written.read_bytes()
        leaked = [form for form in FORBIDDEN if form in content]
        assert leaked == [], f"{written.name} holds {leaked}"
        assert b"set-cookie" not in content.lower()
        assert b"authorization" not in content.lower()


@pytest.mark.parametrize("library", LIBRARIES, ids=[lib.__name__ for lib in LIBRARIES])
def test_a_fork_edits_answers_by_json_path_and_replies_to_a_new_call(
    library: ModuleType, tmp_path: Path
) -> None:
    path, _ = record(tmp_path, library, "sync")
    branch = tmp_path / "branch.trp"
    patches = [
        toolreplay.replace_output(
            at=0, value=edit({"$.state": "closed", "$.labels[0].name": "p1"})
        ),
        toolreplay.replace_output(at=6, value=edit({"$[1].delta": "ing into the crash"})),
        toolreplay.supply_output(
            effect="issues.GET /repos/octo/hello/issues/{id}",
            value=reply({"id": 13, "title": "New", "state": "open"}, headers={"etag": '"v9"'}),
        ),
    ]
    # Through a patch file, as the command line takes them: its document names routes.
    patches = toolreplay.read_patches(toolreplay.write_patches(tmp_path / "patches.json", patches))

    def app(client: Any) -> dict[str, Any]:
        seen = sync_app(client)
        extra = client.get("/repos/octo/hello/issues/13")
        seen["extra"] = (extra.json(), extra.headers["etag"], extra.headers["x-request-id"])
        return seen

    with toolreplay.fork(path, branch, patches=patches):
        client = instrumented(library, "http://127.0.0.1:9/v1", "sync")
        with client:
            seen = app(client)
    assert seen["issue"] == {**ISSUE, "state": "closed", "labels": [{"name": "p1"}]}
    assert [event["delta"] for event in seen["events"]] == [
        "Look",
        "ing into the crash",
        " it.",
    ]
    # The reply takes the headers of the recorded answer of its endpoint nearest the call
    # (operation 3, the 404, which came after operation 0), with its own added.
    assert seen["extra"] == ({"id": 13, "title": "New", "state": "open"}, '"v9"', "req-4")
    report = toolreplay.diff(path, branch)
    assert [d.patch_id for d in report.differences][:2] == [p.patch_id for p in patches[:2]]

    # What the branch keeps replays as any recording does, with no server.
    with toolreplay.replay(branch):
        client = instrumented(library, "http://127.0.0.1:9/v1", "sync")
        with client:
            assert app(client) == seen


@pytest.mark.parametrize("library", LIBRARIES, ids=[lib.__name__ for lib in LIBRARIES])
def test_a_fork_sends_a_call_the_source_lacks_live_when_asked(
    library: ModuleType, tmp_path: Path
) -> None:
    path, _ = record(tmp_path, library, "sync")
    branch = tmp_path / "branch.trp"
    api = IssuesAPI(library)
    with served(api) as url:
        with toolreplay.fork(path, branch, live=["issues.*"]):
            client = instrumented(library, url, "sync")
            with client:
                seen = sync_app(client)
                again = client.get("/search/issues", params={"q": "start"}).json()
        # Only the call the source does not hold reached the API.
        assert [request.url.path for request in api.requests] == ["/v1/search/issues"]
    assert again == {"items": [ISSUE]}
    assert seen["issue"] == ISSUE
    kept = toolreplay.read_trace(branch).operations[-1]
    assert (kept.effect, kept.origin) == ("issues.GET /search/issues", "live")


def test_request_headers_named_by_the_application_are_inputs(tmp_path: Path) -> None:
    library = LIBRARIES[0]
    path = tmp_path / "headers.trp"
    with served(IssuesAPI(library)) as url, toolreplay.record(path):
        client = instrument(
            plain_client(library, url, use_async=False),
            name="issues",
            routes=["/repos/{owner}/{repo}/issues/{number}"],
            request_headers=["Accept"],
            exclude_headers=["X-Internal-Trace"],
        )
        client.get("/repos/octo/hello/issues/12", headers={"accept": "application/vnd.v3+json"})
    operation = toolreplay.read_trace(path).operations[0]
    assert operation.effect == "issues.GET /repos/{owner}/{repo}/issues/{number}"
    assert operation.inputs["headers"] == {"accept": "application/vnd.v3+json"}


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/repos/octo/hello/issues/8812", "/repos/octo/hello/issues/{id}"),
        ("/v1/chat/completions", "/v1/chat/completions"),
        ("/v1/models/gpt-4o", "/v1/models/gpt-4o"),
        ("/v1/responses/resp_68c1f0a2b3", "/v1/responses/{id}"),
        ("/items/3f2b9c1e-8a4d-4e21-9f3b-2c7d8e9f0a1b", "/items/{id}"),
        ("/customers/cus_NffrFeUfNV2Hib", "/customers/{id}"),
        ("/users/someone@example.com", "/users/{id}"),
        ("/reports/2024-05-01", "/reports/{id}"),
        (
            "/v1beta/models/gemini-2.0-flash:generateContent",
            "/v1beta/models/gemini-2.0-flash:generateContent",
        ),
        ("/v1/operations/op-58122911:cancel", "/v1/operations/{id}:cancel"),
        ("/", "/"),
    ],
)
def test_paths_become_templates(path: str, template: str) -> None:
    assert route_template(path) == template


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "open ai"}, "the name is the namespace"),
        ({"name": "openai"}, "another Tool Replay adapter's"),
        ({"name": "x", "request_headers": ["Authorization"]}, "carry credentials"),
        ({"name": "x", "request_headers": "accept"}, "takes a list of header names"),
        ({"name": "x", "routes": ["/users/<user>"]}, "neither a word"),
        ({"name": "x", "routes": "/users/{user}"}, "takes a list of path templates"),
    ],
)
def test_options_that_cannot_work_are_refused(options: dict[str, Any], message: str) -> None:
    library = LIBRARIES[0]
    with pytest.raises(AdapterOptionError, match=message):
        instrument(library.Client(), **options)


def test_a_client_is_instrumented_once() -> None:
    library = LIBRARIES[0]
    twice: Callable[[], Any] = lambda: instrument(instrument(library.Client(), name="a"), name="a")  # noqa: E731
    with pytest.raises(TypeError, match="already instrumented"):
        twice()
    with pytest.raises(TypeError, match="httpx or httpx2 client"):
        instrument(object(), name="a")


# Run in a child process, with `import openai` made to fail ("blocked") or with the SDK
# installed and importable ("installed", so that even an optional import would show): the
# core and this profile record and replay a request there, and no module of the openai SDK
# or of the OpenAI adapter is loaded.
_WITHOUT_OPENAI = """
import sys
if sys.argv[3] == "blocked":
    sys.modules["openai"] = None  # `import openai` now raises ImportError
import {library}
import toolreplay
from toolreplay.adapters.http import instrument
import toolreplay.adapters.capture

url, trace = sys.argv[1], sys.argv[2]
with toolreplay.record(trace):
    with instrument({library}.Client(base_url=url), name="issues") as client:
        recorded = client.get("/repos/octo/hello/issues/12").json()
with toolreplay.replay(trace):
    with instrument({library}.Client(base_url="http://127.0.0.1:9/v1"), name="issues") as client:
        assert client.get("/repos/octo/hello/issues/12").json() == recorded
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] == "openai" and sys.modules[name] is not None
    or name.startswith("toolreplay.adapters.openai")
)
print(loaded[:5])  # the first few are enough to say what went wrong
"""


@pytest.mark.parametrize("openai", ["blocked", "installed"])
def test_the_capture_core_and_the_http_profile_need_no_openai_sdk(
    openai: str, tmp_path: Path
) -> None:
    library = LIBRARIES[0]
    code = _WITHOUT_OPENAI.format(library=library.__name__)
    with served(IssuesAPI(library)) as url:
        result = subprocess.run(
            [sys.executable, "-c", code, url, str(tmp_path / "no-openai.trp"), openai],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n", result.stdout


@pytest.mark.parametrize("library", LIBRARIES, ids=[lib.__name__ for lib in LIBRARIES])
def test_transport_failures_replay_as_the_same_exception(
    library: ModuleType, tmp_path: Path
) -> None:
    def app(client: Any) -> list[Any]:
        seen: list[Any] = []
        try:
            with client.stream("GET", "/repos/octo/hello/events") as stream:
                seen.extend(line for line in stream.iter_lines() if line.startswith("data:"))
        except library.TransportError as error:
            seen.append(type(error).__name__)
        try:
            client.get("/repos/octo/hello/issues/12")
        except library.TransportError as error:
            seen.append(type(error).__name__)
        return seen

    api = IssuesAPI(library)

    def dropping(request: Any) -> Any:
        return Dropped(api(request), events=1)  # one event, then the connection is cut

    path = tmp_path / "failures.trp"
    with served(dropping) as url, toolreplay.record(path):
        with instrumented(library, url, "sync") as client:
            first = app(client)
    assert first[0] == 'data: {"delta": "Look"}'
    assert first[1:] == ["RemoteProtocolError", "RemoteProtocolError"]
    failure = toolreplay.read_trace(path).operations[0].outcome
    assert isinstance(failure, toolreplay.Raised)
    assert failure.error_type == "httpx.RemoteProtocolError"
    envelope: Any = (failure.args or [None])[0]
    assert envelope["envelope"] == "http.transport_error"
    assert [event["data"] for event in envelope["response"]["events"]] == EVENTS[:1]

    with toolreplay.replay(path), instrumented(library, "http://127.0.0.1:9/v1", "sync") as client:
        again = app(client)
    assert again == ['data: {"delta":"Look"}', "RemoteProtocolError", "RemoteProtocolError"]
