"""Nothing an instrumented client does reaches a transport during replay, for any endpoint.

The walk finds every resource method the installed SDK exposes on the client
(resources recursively, and their `with_raw_response` and
`with_streaming_response` forms), calls each under replay of an empty trace
with arguments made from its signature, and counts the requests the client's
own transport receives: zero. Each call ends in a refusal by Tool Replay, or in
the SDK refusing the made-up arguments before building a request; none may
return a response.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai._resource import AsyncAPIResource, SyncAPIResource  # the SDK's resource bases

import toolreplay
from examples.local_openai import HTTP, refusing
from tests.adapters.support import async_client, sync_client
from toolreplay.adapters.openai import instrument

WRAPPERS = ("with_raw_response", "with_streaming_response")
ADMIN_KEYS = "admin_api_key" in inspect.signature(openai.OpenAI).parameters


def _members(container: object) -> Iterator[tuple[str, Any]]:
    for name in dir(type(container)) + list(vars(container)):
        if name.startswith("_") or name in WRAPPERS:
            continue
        try:
            yield name, getattr(container, name)
        except Exception:  # a resource needing an optional dependency: nothing to call
            continue


def _is_container(value: object) -> bool:
    return isinstance(value, SyncAPIResource | AsyncAPIResource) or type(value).__name__.endswith(
        ("WithRawResponse", "WithStreamingResponse")
    )


def endpoints(root: object, path: str = "client") -> Iterator[tuple[str, Any]]:
    """Every callable the SDK exposes under `root`'s resources, by dotted path."""
    seen: set[str] = set()
    for name, value in sorted(_members(root), key=lambda item: item[0]):
        where = f"{path}.{name}"
        if _is_container(value):
            yield from endpoints(value, where)
            for wrapper in WRAPPERS:
                wrapped = getattr(value, wrapper, None)
                if wrapped is not None:
                    yield from endpoints(wrapped, f"{where}.{wrapper}")
        elif (
            callable(value)
            and not isinstance(value, type)
            and _is_container(root)
            and where not in seen
        ):
            seen.add(where)
            yield where, value


def made_up(parameter: inspect.Parameter) -> object:
    """A value of roughly the right shape for a required parameter."""
    annotation = str(parameter.annotation)
    if "FileTypes" in annotation or ("file" in parameter.name and "str" not in annotation):
        return ("notes.txt", b"hello", "text/plain")
    if annotation.startswith(("int", "float")) or annotation == "int":
        return 1
    if annotation.startswith("bool"):
        return True
    if annotation.startswith(("Iterable", "SequenceNotStr", "List", "list", "Sequence")):
        return []
    if "Param" in annotation or annotation.startswith(("Dict", "dict", "Mapping")):
        return {}
    return "x_1"


def arguments(function: Any) -> dict[str, object]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return {}
    return {
        name: made_up(parameter)
        for name, parameter in signature.parameters.items()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }


async def _finish_async(result: Any) -> Any:
    if inspect.isawaitable(result):
        result = await result
    if hasattr(result, "__aenter__"):
        async with result as entered:
            return entered
    if hasattr(result, "__anext__"):
        return await result.__anext__()
    return result


def call(function: Any) -> tuple[str, BaseException | None]:
    """Call an endpoint with made-up arguments; what happened, and the exception if any."""
    try:
        result = function(**arguments(function))
        if inspect.isawaitable(result) or hasattr(result, "__aenter__"):
            result = asyncio.run(_finish_async(result))
        elif hasattr(result, "__enter__"):
            with result as entered:
                result = entered
        if isinstance(result, Iterator):
            next(result, None)
    except toolreplay.ToolReplayError as error:
        return "refused", error
    except Exception as error:
        return "sdk", error
    return "returned", None


def _walk(client: Any, tmp_path: Path) -> dict[str, list[str]]:
    empty = tmp_path / "empty.trp"
    if not empty.exists():
        with toolreplay.record(empty):
            pass
    outcomes: dict[str, list[str]] = {"refused": [], "sdk": [], "returned": []}
    for where, function in endpoints(client):
        with _Replay(empty):
            kind, _error = call(function)
        outcomes[kind].append(where)
    return outcomes


class _Replay:
    """One replay of the empty trace per endpoint; the violation it ends with is expected."""

    def __init__(self, trace: Path) -> None:
        self._session = toolreplay.replay(trace)

    def __enter__(self) -> None:
        self._session.__enter__()

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(toolreplay.ToolReplayError):
            self._session.__exit__(None, None, None)


# The walk calls every endpoint the SDK has, its deprecated ones (Assistants, Sora,
# `.content()`...) on purpose: the SDK's deprecation warnings, raised by its own
# modules or at the walk's call, are expected. One our adapter's code triggered would
# name a toolreplay module, and still show.
@pytest.mark.filterwarnings("ignore::DeprecationWarning:openai")
@pytest.mark.filterwarnings(r"ignore::DeprecationWarning:tests\.adapters\.test_endpoint_walk")
@pytest.mark.parametrize("flavour", ["sync", "async", "azure"])
def test_every_endpoint_is_refused_under_replay_and_sends_nothing(
    flavour: str, tmp_path: Path
) -> None:
    sent: list[Any] = []
    # openai 3.x's organisation-admin endpoints need an admin key before any request.
    admin = {"admin_api_key": "sk-admin-walk"} if ADMIN_KEYS else {}
    if flavour == "sync":
        client: Any = instrument(sync_client(refusing(sent), **admin))
    elif flavour == "async":
        client = instrument(async_client(refusing(sent), **admin))
    else:
        client = instrument(
            openai.AzureOpenAI(
                api_key="azure-key",
                api_version="2025-04-01-preview",
                azure_endpoint="https://example-resource.openai.azure.com",
                http_client=HTTP.Client(transport=HTTP.MockTransport(refusing(sent))),
                max_retries=0,
            )
        )
    outcomes = _walk(client, tmp_path)
    total = sum(len(names) for names in outcomes.values())
    assert sent == [], [f"{request.method} {request.url.path}" for request in sent]
    assert total > 200  # the walk found the SDK's surface
    # A few methods need no request for made-up arguments (an empty upload, webhook checks).
    assert len(outcomes["returned"]) <= 0.02 * total, outcomes["returned"]
    # Nearly every endpoint gets as far as a request, which Tool Replay refuses.
    assert len(outcomes["refused"]) > 0.8 * total, outcomes["sdk"]
    print(flavour, {kind: len(names) for kind, names in outcomes.items()})
