"""Nothing an instrumented `genai.Client` does reaches the network during replay, for any
resource method, sync or under `.aio`.

The walk finds every resource the installed SDK exposes on the client (`models`, `files`,
`caches`, `batches`, `tunings`, `operations`, `file_search_stores`, `auth_tokens`,
`live`, chats, and the generated resources of 3.x: `interactions`, `agents`, ...,
recursively), calls each public method under replay of an empty trace with arguments
made from its signature, and counts the connections a loopback server the client points
at receives (the network guard open, and the plain client's own transports, aiohttp
included, left in place): zero. Each call ends in a refusal by Tool Replay, or in the SDK
refusing the made-up arguments before building a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import _api_module, types  # the SDK's resource base
from google.genai.client import AsyncClient

import toolreplay
from tests.support.counting_server import CountingServer
from toolreplay.adapters.google_genai import instrument

WRAPPERS = ("with_raw_response", "with_streaming_response")


def _is_container(value: object) -> bool:
    return (
        isinstance(value, _api_module.BaseModule | AsyncClient)
        or hasattr(value, "sdk_configuration")  # a generated (3.x) resource
        or type(value).__name__ in ("Chats", "AsyncChats", "Chat", "AsyncChat")
        or type(value).__name__.endswith(("RawResponse", "StreamingResponse", "AccessorProxy"))
    )


def _members(container: object) -> Iterator[tuple[str, Any]]:
    names = set(dir(type(container)) + list(vars(container)))
    for name in sorted(names):
        if name.startswith("_") or name in ("vertexai", "parent_ref", "sdk_configuration"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # experimental resources announce themselves
                yield name, getattr(container, name)
        except Exception:  # a resource needing an optional dependency: nothing to call
            continue


def endpoints(root: object, path: str = "client", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every public method of the SDK's resources under `root`, by dotted path."""
    for name, value in _members(root):
        where = f"{path}.{name}"
        if _is_container(value) and depth < 5:
            yield from endpoints(value, where, depth + 1)
            if name == "chats":  # a chat's own methods send too
                yield from endpoints(
                    value.create(model="gemini-2.5-flash"), f"{where}.chat", depth + 1
                )
        elif (
            callable(value)
            and not isinstance(value, type)
            and _is_container(root)
            and not name.startswith("do_request")  # the generated client's plumbing
            and name not in ("close", "aclose")  # the rest of the walk needs the client open
        ):
            yield where, value


def made_up(parameter: inspect.Parameter) -> object:
    """A value of roughly the right shape for a required parameter."""
    annotation = str(parameter.annotation).lower()
    name = parameter.name
    if name in ("contents", "message", "input", "text", "prompt"):
        return "hi"
    if name == "model":
        return "gemini-2.5-flash"
    if "int" in annotation and "str" not in annotation:
        return 1
    if "bool" in annotation:
        return True
    if annotation.startswith(("list", "sequence", "iterable")):
        return []
    return "x_1"


def _signature(function: Any) -> inspect.Signature | None:
    """The method's signature; for an override that passes `*args, **kwargs` on (the 3.x
    generated resources' wrappers), the signature of the method it overrides."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    kinds = {parameter.kind for parameter in signature.parameters.values()}
    owner = getattr(function, "__self__", None)
    if owner is not None and kinds <= {
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.VAR_KEYWORD,
    }:
        for base in type(owner).__mro__[1:]:
            overridden = vars(base).get(function.__name__)
            if overridden is not None:
                return _signature(overridden.__get__(owner))
    return signature


def arguments(function: Any) -> dict[str, object]:
    signature = _signature(function)
    if signature is None:
        return {}
    return {
        name: made_up(parameter)
        for name, parameter in signature.parameters.items()
        if (parameter.default is inspect.Parameter.empty or name in ("model", "input"))
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


_MISSING = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: (.+)$")


def _run(function: Any, given: dict[str, object]) -> None:
    result = function(**given)
    if inspect.isawaitable(result) or hasattr(result, "__aenter__"):
        result = asyncio.run(_finish_async(result))
    elif hasattr(result, "__enter__"):
        with result as entered:
            result = entered
    if isinstance(result, Iterator):
        next(result, None)


def call(function: Any) -> str:
    """Call an endpoint with made-up arguments: `refused`, `sdk` (the SDK refused the
    arguments, or raised), or `returned`."""
    given = arguments(function)
    try:
        try:
            _run(function, given)
        except TypeError as error:
            # A wrapper whose signature says nothing (`*args, **kwargs`): the arguments
            # it turned out to need, made up in turn.
            missing = _MISSING.search(str(error))
            if missing is None:
                raise
            names = re.findall(r"'(\w+)'", missing.group(1))
            _run(function, {**given, **dict.fromkeys(names, "x_1")})
    except toolreplay.ToolReplayError:
        return "refused"
    except Exception as error:
        if isinstance(error.__cause__ or error.__context__, toolreplay.ToolReplayError):
            return "refused"  # the SDK's own wrapping of a refusal
        return "sdk"
    return "returned"


class _Replay:
    """One replay of the empty trace per endpoint; the violation it ends with is expected."""

    def __init__(self, trace: Path) -> None:
        self._session = toolreplay.replay(trace, network="allow")

    def __enter__(self) -> None:
        self._session.__enter__()

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(toolreplay.ToolReplayError):
            self._session.__exit__(None, None, None)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK's experimental resources
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # coroutines of refused async calls
@pytest.mark.parametrize("vertex", [False, True], ids=["gemini-api", "vertex-ai"])
def test_every_resource_method_is_refused_under_replay_and_sends_nothing(
    vertex: bool, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.trp"
    with toolreplay.record(empty):
        pass
    server = CountingServer()
    options = types.HttpOptions(base_url=server.url)
    if vertex:
        plain = genai.Client(vertexai=True, api_key="walk-key", http_options=options)
    else:
        plain = genai.Client(api_key="walk-key", http_options=options)
    client = instrument(plain)
    outcomes: dict[str, list[str]] = {"refused": [], "sdk": [], "returned": []}
    try:
        for where, function in endpoints(client):
            with _Replay(empty):
                outcomes[call(function)].append(where)
    finally:
        server.close()
    total = sum(len(names) for names in outcomes.values())
    assert server.accepted == 0, outcomes
    assert total > 80, outcomes  # the walk found the SDK's surface, sync and async
    assert {"client.models.generate_content", "client.aio.models.generate_content"} <= set(
        outcomes["refused"]
    )
    # A few methods need no request for made-up arguments (a chat's history).
    assert len(outcomes["returned"]) <= 0.1 * total, outcomes["returned"]
    # Most methods get as far as a request, which Tool Replay refuses (Vertex AI refuses
    # more of the made-up arguments itself: methods the Gemini API alone has).
    assert len(outcomes["refused"]) > 0.5 * total, outcomes["sdk"]
    print({kind: len(names) for kind, names in outcomes.items()}, outcomes["returned"])
