"""What instrumenting a Stainless-generated SDK client takes (the OpenAI and Anthropic SDKs).

Such a client keeps its HTTP client in `_client`, copies itself with every setting by
`copy(..., http_client=...)` (aliased `with_options`), and wraps any exception from the
transport as its own `APIConnectionError`. An instrumented client is a copy whose
`_client` is the capture core's client over the original HTTP client's transports
(`capture`), whose `copy` stays instrumented (`copy_instrumented`), and whose requests
surface a Tool Replay refusal or miss as itself, and a replayed body the SDK cannot
parse as `UnsupportedResponseError` naming the operation (`surfacing`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from toolreplay.adapters.capture.profile import ProviderProfile
from toolreplay.adapters.capture.transport import capturing_client, replayed_operation
from toolreplay.errors import ToolReplayError, UnsupportedResponseError

__all__ = ["SdkErrors", "capture", "copy_instrumented"]


def capture(
    client: Any, original_http: Any, *, asynchronous: bool, profile: ProviderProfile
) -> None:
    """Give an SDK client an HTTP client that captures, sending through `original_http`'s
    transports (`capturing_client`), and remember the original for its copies."""
    base_url = client.base_url
    client._client = capturing_client(
        original_http,
        asynchronous=asynchronous,
        base_path=str(base_url.path),
        profile=profile,
        origin=(base_url.scheme, base_url.host, base_url.port),
    )
    client._toolreplay_http = original_http


def copy_instrumented(
    instrumented: Any,
    base: type[Any],
    kwargs: dict[str, Any],
    *,
    asynchronous: bool,
    profile: ProviderProfile,
    before: Callable[[Any, bool], None] | None = None,
) -> Any:
    """The SDK's `copy` of an instrumented client (`base.copy`), instrumented in turn: a
    new `http_client` given to it is captured too. `before(client, copying)` is called
    around the SDK's copy (the OpenAI adapter lets its WebSocket guard through)."""
    http_client = kwargs.pop("http_client", None) or instrumented._toolreplay_http
    if before is not None:
        before(instrumented, True)
    try:
        twin = base.copy(instrumented, http_client=http_client, **kwargs)
    finally:
        if before is not None:
            before(instrumented, False)
    capture(twin, http_client, asynchronous=asynchronous, profile=profile)
    twin.original_client = instrumented.original_client
    return twin


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """An SDK's exception classes, for `surfacing` its requests' errors.

    The SDK wraps any exception from the transport as `connection_error`; every
    exception it raises itself is an `sdk_error`; `sdk` names it and its version.
    """

    connection_error: type[Exception]
    sdk_error: type[Exception]
    sdk: str

    @contextmanager
    def surfacing(self) -> Generator[None]:
        """Around one request of an instrumented client: a Tool Replay refusal or miss
        (which the SDK wrapped as a connection error) surfaces as itself, and an
        exception from parsing a replayed response (an edited body the SDK cannot
        read) as `UnsupportedResponseError` naming the recorded operation."""
        token = replayed_operation.set(None)
        try:
            yield
        except Exception as error:
            found = self._surfaced(error)
            if found is None:
                raise
            raise found from error.__cause__ if found is error.__cause__ else error
        finally:
            replayed_operation.reset(token)

    def _surfaced(self, error: Exception) -> Exception | None:
        if isinstance(error, self.connection_error) and isinstance(
            error.__cause__, ToolReplayError
        ):
            return error.__cause__
        operation = replayed_operation.get()
        if operation is None or isinstance(error, self.sdk_error | ToolReplayError):
            return None
        unparsed = UnsupportedResponseError(
            f"{operation}: {self.sdk} cannot parse the recorded response "
            f"({type(error).__name__}: {error}). The trace was edited, or the body is not "
            "what this endpoint returns; restore the recorded body, or re-record the call"
        )
        unparsed.__cause__ = error
        return unparsed
