"""Walking every endpoint an SDK client exposes, under replay of an empty trace.

For the endpoint-walk tests of each Stainless-generated SDK (OpenAI's, Anthropic's):
`endpoints` finds every resource method by introspection (resources recursively, and
their `with_raw_response` and `with_streaming_response` forms), so a method a new SDK
release adds is walked without a list; `walk` calls each with arguments made from its
signature under its own replay of an empty trace, and says how each call ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import toolreplay

__all__ = ["Outcome", "call", "endpoints", "walk"]

WRAPPERS = ("with_raw_response", "with_streaming_response")

Outcome = Literal["refused", "sdk", "returned"]
"""How a call ended: a Tool Replay refusal, an SDK exception before any request (made-up
arguments it rejects), or a value (nothing to send)."""


def _members(container: object) -> Iterator[tuple[str, Any]]:
    for name in dir(type(container)) + list(vars(container)):
        if name.startswith("_") or name in WRAPPERS:
            continue
        try:
            yield name, getattr(container, name)
        except Exception:  # a resource needing an optional dependency: nothing to call
            continue


def _is_container(value: object, resources: tuple[type, ...]) -> bool:
    return isinstance(value, resources) or type(value).__name__.endswith(
        ("WithRawResponse", "WithStreamingResponse")
    )


def endpoints(
    root: object, resources: tuple[type, ...], path: str = "client"
) -> Iterator[tuple[str, Any]]:
    """Every callable the SDK exposes under `root`'s resources, by dotted path.
    `resources` are the SDK's resource base classes (sync and async)."""
    seen: set[str] = set()
    for name, value in sorted(_members(root), key=lambda item: item[0]):
        where = f"{path}.{name}"
        if _is_container(value, resources):
            yield from endpoints(value, resources, where)
            for wrapper in WRAPPERS:
                wrapped = getattr(value, wrapper, None)
                if wrapped is not None:
                    yield from endpoints(wrapped, resources, f"{where}.{wrapper}")
        elif (
            callable(value)
            and not isinstance(value, type)
            and _is_container(root, resources)
            and where not in seen
        ):
            seen.add(where)
            yield where, value


def made_up(parameter: inspect.Parameter) -> object:
    """A value of roughly the right shape for a required parameter."""
    annotation = str(parameter.annotation)
    if parameter.name == "model":  # a name, whatever its annotation (`ModelParam`)
        return "model-walk-1"
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
    if hasattr(result, "__aiter__"):  # an async iterable (a poller, a tool runner)
        async for item in result:
            return item
    return result


def call(function: Any) -> tuple[Outcome, BaseException | None]:
    """Call an endpoint with made-up arguments, and use what it returns as an application
    would (await it, enter it, take its first item); how that ended, and the exception."""
    try:
        result = function(**arguments(function))
        if (
            inspect.isawaitable(result)
            or hasattr(result, "__aenter__")
            or hasattr(result, "__aiter__")
        ):
            result = asyncio.run(_finish_async(result))
        elif hasattr(result, "__enter__"):
            with result as entered:
                result = entered
        if isinstance(result, Iterator):
            next(result, None)
    except toolreplay.ToolReplayError as error:
        return "refused", error
    except Exception as error:
        # A helper running requests in a task group reports the refusal inside a group.
        if isinstance(error, ExceptionGroup):
            refused = error.subgroup(toolreplay.ToolReplayError)
            if refused is not None:
                return "refused", refused.exceptions[0]
        return "sdk", error
    return "returned", None


@dataclass(frozen=True)
class Walked:
    """One endpoint's call: where it is, how it ended, and the exception if any."""

    where: str
    outcome: Outcome
    error: BaseException | None


def walk(
    client: object, tmp_path: Path, resources: tuple[type, ...], **replay: Any
) -> list[Walked]:
    """Every endpoint of `client`, each called under its own replay of an empty trace
    (`toolreplay.replay(trace, **replay)`)."""
    empty = tmp_path / "empty.trp"
    if not empty.exists():
        with toolreplay.record(empty):
            pass
    walked: list[Walked] = []
    for where, function in endpoints(client, resources):
        with _Replay(empty, replay):
            outcome, error = call(function)
        walked.append(Walked(where, outcome, error))
    return walked


class _Replay:
    """One replay of the empty trace per endpoint; the violation it ends with is expected."""

    def __init__(self, trace: Path, options: dict[str, Any]) -> None:
        self._session = toolreplay.replay(trace, **options)

    def __enter__(self) -> None:
        self._session.__enter__()

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(toolreplay.ToolReplayError):
            self._session.__exit__(None, None, None)
