"""`toolreplay.capture`: one trace per request or job, in production, never in the way.

    capture = toolreplay.capture("/var/lib/myapp/traces", keep="error", retain=1000)

    @capture
    def handle(request): ...            # or: async def, or run in a thread pool

    with capture as request:            # or around any block: one request per `with`
        request.result = answer(...)

Each request is a record session (RFC 0001) of its own, writing to a
`CaptureSession` in the capture folder (names: `toolreplay.capturing.names`;
temporary siblings and retention: `toolreplay.capturing.store`). What is decided where:

- at the start: the environment (`toolreplay.capturing.settings`), whether a
  session is already open here (then capture steps aside: the open session sees
  the effects, see below), sampling, the metadata for the header;
- during: a capture that cannot record faithfully gives up (`CaptureSession`);
- at the end: keep (rename into place, then apply retention) or discard.

**Inside an open session** (a test recording or replaying the handler, a fork,
another capture) a capture does nothing: sessions do not nest, and the open
session is the one the developer asked for. So replaying a captured trace
through the decorated handler works as with any other trace.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import random
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, cast, overload

from toolreplay.capturing.names import METADATA_KEY, PART_SUFFIX, TRACE_SUFFIX, new_trace_name
from toolreplay.capturing.session import CaptureSession
from toolreplay.capturing.settings import (
    DEFAULT_SPOOL_BYTES,
    CaptureSettings,
    KeepRule,
    Retention,
    SampleRule,
    check_destination,
    check_keep,
    check_max_bytes,
    check_retention,
    check_sample,
    check_spool_bytes,
)
from toolreplay.capturing.spool import Outbox
from toolreplay.capturing.store import log_once, storage_recovered, swept_after_keep
from toolreplay.capturing.upload import outbox_for, require_store
from toolreplay.errors import (
    CaptureConfigError,
    NonPortableValueError,
    ObjectStoreError,
    ToolReplayError,
    TraceError,
)
from toolreplay.objectstore.locations import ObjectLocation, is_object_url
from toolreplay.portable import JsonValue, ensure_portable
from toolreplay.redaction import RedactionPolicy, SecretMode, SecretScanner
from toolreplay.redaction.secret_mode import resolve_secret_mode
from toolreplay.runtime.context import session_var

__all__ = ["Capture", "CapturedRequest", "capture"]

P = ParamSpec("P")
R = TypeVar("R")

Metadata = Mapping[str, JsonValue] | Callable[..., Mapping[str, JsonValue]] | None

# Sampling must not draw from the application's `random` (a seeded sequence
# would change under capture).
_sampler = random.Random()
# The requests open in this context through `with`, innermost first.
_open_requests: contextvars.ContextVar[tuple[CapturedRequest, ...]] = contextvars.ContextVar(
    "toolreplay_capture_requests", default=()
)


def _reason(error: BaseException) -> str:
    """An error named without its message (which may carry a recorded value).

    The operating system's reason is kept (`reason` of a `TraceWriteError`, the
    `strerror` of an `OSError`); a `TraceError` about creating a file says only
    that, about a path, so its message is kept too.
    """
    if type(error) is TraceError:
        return f"{type(error).__name__}: {error}"
    detail = getattr(error, "reason", None) or getattr(error, "strerror", None)
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def checked_metadata(metadata: object, where: str) -> dict[str, JsonValue]:
    """`metadata` as a header's metadata dict; `CaptureConfigError` if it cannot be one."""
    if not isinstance(metadata, Mapping):
        raise CaptureConfigError(f"{where}: metadata must be a mapping; got {metadata!r}")
    items = cast(Mapping[object, object], metadata)
    checked = cast(dict[str, JsonValue], ensure_portable(dict(items), what=where))
    if METADATA_KEY in checked:
        raise CaptureConfigError(
            f"{where}: the metadata key {METADATA_KEY!r} is reserved for the capture's "
            "own name and start time; use another key"
        )
    return checked


class CapturedRequest:
    """One request under a capture: whether it is recorded, and where its trace went."""

    def __init__(self) -> None:
        self.name: str | None = None
        """The trace's name (no suffix), when the request is recorded."""
        self.path: Path | None = None
        """Where the trace was kept, once the request ended and it was kept."""
        self.result: object = None
        """The request's result, for a `keep` predicate: set it inside a `with` block
        (the decorator sets it from the return value)."""
        self.skipped: str | None = None
        """Why the request is not recorded (`disabled`, `not sampled`, `session open`,
        `storage`, ...), or None."""
        self._session: CaptureSession | None = None
        self._directory = Path()
        self._keep: KeepRule = "always"
        self._retention: Retention | None = None
        self._outbox: Outbox | None = None
        self._started = datetime.now(UTC)

    @property
    def recording(self) -> bool:
        """Whether this request's effects are being recorded right now."""
        session = self._session
        return session is not None and not session.given_up

    def _skip(self, why: str) -> CapturedRequest:
        self.skipped = why
        return self

    def _gave_up(self, kind: str, reason: str, error: BaseException | None) -> None:
        self.skipped = kind
        detail = f" ({_reason(error)})" if error is not None and kind == "storage" else ""
        log_once(self._directory, kind, f"{reason}{detail}")

    # --- the start of a request (called by Capture) ---------------------------------

    @classmethod
    def start(
        cls, capture: Capture, args: tuple[object, ...], kwargs: dict[str, object]
    ) -> CapturedRequest:
        """A request of `capture`, recording if it is to be recorded. Never raises."""
        request = cls()
        try:
            return request._open(capture, args, kwargs)
        except Exception as failure:  # a defect of capture must not reach the application
            log_once(request._directory, "internal", f"capture failed ({_reason(failure)})")
            return request._skip("internal")

    def _open(
        self, capture: Capture, args: tuple[object, ...], kwargs: dict[str, object]
    ) -> CapturedRequest:
        request = self
        try:
            settings = capture.settings.from_environment()
        except CaptureConfigError as error:
            log_once(None, "config", str(error))
            return request._skip("config")
        destination = settings.destination
        if settings.disabled or (settings.directory is None and destination is None):
            return request._skip("disabled")
        if session_var.get() is not None:
            return request._skip("session open")
        if destination is None:
            assert settings.directory is not None
            directory = request._directory = settings.directory
        else:
            outbox = self._outbox_of(settings, destination)
            if outbox is None:
                return request._skip(request.skipped or "config")
            directory = request._directory = outbox.folder
            if not outbox.admits():  # logs once when the spool fills (an outage)
                return request._skip("spool full")
            request._outbox = outbox
        if not self._sampled(settings.sample, directory):
            return request._skip("not sampled")
        metadata = self._request_metadata(capture.metadata, args, kwargs, directory)
        if metadata is None:
            return request._skip("metadata")
        request.name = new_trace_name(request._started)
        metadata[METADATA_KEY] = {
            "name": request.name,
            "started_at": request._started.isoformat().replace("+00:00", "Z"),
        }
        try:
            session = CaptureSession(
                directory / (request.name + PART_SUFFIX),
                metadata=metadata,
                max_bytes=settings.max_bytes,
                on_give_up=request._gave_up,
                redaction=capture.redaction,
                secrets=resolve_secret_mode(capture.secrets, use="capture"),
                scanner=capture.scanner,
            )
        except ToolReplayError as error:  # the metadata itself is refused (RFC 0007)
            log_once(directory, "metadata", f"unusable metadata ({type(error).__name__})")
            return request._skip("metadata")
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            session.__enter__()
        except (TraceError, OSError) as error:
            log_once(directory, "storage", f"cannot create a trace ({_reason(error)})")
            return request._skip("storage")
        except ToolReplayError as error:  # a redaction policy without its key, say
            log_once(directory, "redaction", f"cannot record ({type(error).__name__}: {error})")
            return request._skip("redaction")
        request._session = session
        request._keep = settings.keep
        request._retention = settings.retention if destination is None else None
        return request

    def _outbox_of(self, settings: CaptureSettings, destination: ObjectLocation) -> Outbox | None:
        """The outbox of an object-storage destination; None (logged) when unusable."""
        if settings.retention is not None:
            log_once(
                None,
                "retain",
                f"retention is not applied to {destination.url}: in a bucket, retention "
                "is its lifecycle rule on age (README, 'Capturing across many machines'); "
                "the retain setting is ignored",
            )
        try:
            return outbox_for(destination, settings.spool, settings.instance, settings.spool_bytes)
        except (CaptureConfigError, ObjectStoreError) as error:
            log_once(None, "config", str(error))
            self.skipped = "config"
        except OSError as error:
            log_once(settings.spool, "storage", f"cannot create the spool ({_reason(error)})")
            self.skipped = "storage"
        return None

    @staticmethod
    def _sampled(sample: SampleRule, directory: Path) -> bool:
        if not callable(sample):
            return sample >= 1.0 or _sampler.random() < sample
        try:
            return bool(sample())
        except Exception as failure:
            log_once(directory, "sample", f"the sample callable raised {_reason(failure)}")
            return False

    @staticmethod
    def _request_metadata(
        metadata: Metadata, args: tuple[object, ...], kwargs: dict[str, object], directory: Path
    ) -> dict[str, JsonValue] | None:
        if metadata is None:
            return {}
        if not callable(metadata):
            return dict(metadata)
        try:
            return checked_metadata(metadata(*args, **kwargs), "the metadata callable")
        except (CaptureConfigError, NonPortableValueError) as error:
            log_once(directory, "metadata", f"unusable metadata ({type(error).__name__})")
        except Exception as failure:
            log_once(directory, "metadata", f"the metadata callable raised {_reason(failure)}")
        return None

    # --- the end of a request ---

    def end(self, error: BaseException | None) -> None:
        """End the request (`error`: what it raised): keep or discard its trace. Never raises.

        The decorator and the `with` block call it; call it yourself only for a
        request started with `CapturedRequest.start`.
        """
        session, self._session = self._session, None
        if session is None:
            return
        try:
            session.__exit__(
                None if error is None else type(error),
                error,
                None if error is None else error.__traceback__,
            )
            keep = not session.given_up and self._wanted(error)
        except Exception as failure:  # a defect of capture must not reach the application
            log_once(self._directory, "internal", f"capture failed ({_reason(failure)})")
            keep = False
        part = session.path
        try:
            if not keep:
                part.unlink(missing_ok=True)
                return
            final = part.with_name(part.name.removesuffix(PART_SUFFIX) + TRACE_SUFFIX)
            if self._outbox is not None:
                self._outbox.keeping(final.name, part.stat().st_size)
            part.rename(final)
            self.path = final
            if self._outbox is not None:
                self._outbox.wake.set()
            storage_recovered(self._directory)
            if self._retention is not None:
                swept_after_keep(self._directory, self._retention, datetime.now(UTC))
        except OSError as failure:
            self.skipped = self.skipped or "storage"
            log_once(
                self._directory,
                "storage",
                f"cannot {'keep' if keep else 'discard'} {part.name} ({_reason(failure)})",
            )

    def _wanted(self, error: BaseException | None) -> bool:
        keep = self._keep
        if keep == "always" or error is not None:
            return True
        if keep == "error":
            self.skipped = "not kept"
            return False
        assert callable(keep)
        try:
            wanted = bool(keep(self.result))
        except Exception as failure:  # the predicate is application code: keep the evidence
            log_once(self._directory, "keep", f"the keep predicate raised {_reason(failure)}")
            return True
        if not wanted:
            self.skipped = "not kept"
        return wanted


class Capture:
    """Per-request capture into a folder; a decorator and a context manager. See `capture()`."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None,
        *,
        metadata: Metadata,
        sample: SampleRule,
        keep: KeepRule,
        max_bytes: int | None,
        retain: int | timedelta | Retention | None,
        redaction: RedactionPolicy | None = None,
        secrets: SecretMode | None = None,
        scanner: SecretScanner | None = None,
        spool: str | os.PathLike[str] | None = None,
        spool_bytes: int = DEFAULT_SPOOL_BYTES,
    ) -> None:
        if secrets not in (None, "abandon", "warn", "off"):
            raise CaptureConfigError(
                f"capture(secrets={secrets!r}): a capture never fails the application's "
                "calls, so a secret about to be written abandons that request's trace "
                "('abandon', the default); 'warn' and 'off' write it on purpose (RFC 0007)"
            )
        self.redaction = redaction
        """The redaction policy passed to each request's recording (RFC 0007)."""
        self.secrets: SecretMode | None = secrets
        """The secret mode given in code (None: `TOOLREPLAY_SECRETS`, else "abandon")."""
        self.scanner = scanner
        """The secret scanner passed to each request's recording (None: the built-in rules)."""
        if metadata is not None and not callable(metadata):
            metadata = checked_metadata(metadata, "capture(metadata=...)")
        self.metadata: Metadata = metadata
        """The header metadata given in code: a mapping, a callable, or None."""
        destination: ObjectLocation | None = None
        if isinstance(directory, str) and is_object_url(directory):
            destination = check_destination(directory, "capture(directory)")
            require_store(destination)
            if retain is not None:
                raise CaptureConfigError(
                    f"capture(retain=...): traces uploaded to {destination.url} are not "
                    "deleted by capture; retention in a bucket is its lifecycle rule on age "
                    "(README, 'Capturing across many machines', shows one). Leave retain out"
                )
        self.settings = CaptureSettings(
            directory=None if directory is None or destination else Path(directory),
            sample=check_sample(sample, "capture(sample=...)"),
            keep=check_keep(keep, "capture(keep=...)"),
            max_bytes=check_max_bytes(max_bytes, "capture(max_bytes=...)"),
            retention=check_retention(retain, "capture(retain=...)"),
            destination=destination,
            spool=None if spool is None else Path(spool),
            spool_bytes=check_spool_bytes(spool_bytes, "capture(spool_bytes=...)"),
        )
        """The settings given in code (the environment may override them per request)."""

    # --- as a context manager -------------------------------------------------------

    def __enter__(self) -> CapturedRequest:
        request = CapturedRequest.start(self, (), {})
        _open_requests.set((request, *_open_requests.get()))
        return request

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        open_requests = _open_requests.get()
        if not open_requests:
            return
        _open_requests.set(open_requests[1:])
        open_requests[0].end(exc)

    # --- as a decorator -------------------------------------------------------------

    @overload
    def __call__(self, function: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]: ...
    @overload
    def __call__(self, function: Callable[P, R]) -> Callable[P, R]: ...
    def __call__(self, function: Callable[P, Any]) -> Callable[P, Any]:
        """Capture every call of `function` (sync or async) as one request."""
        if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
            raise CaptureConfigError(
                f"capture cannot decorate the generator {function.__qualname__}: its work "
                "happens after it returns. Capture the code that consumes it instead."
            )
        if inspect.iscoroutinefunction(function):
            return self._decorate_async(function)
        start = functools.partial(CapturedRequest.start, self)

        @functools.wraps(function)
        def captured(*args: P.args, **kwargs: P.kwargs) -> Any:
            request = start(args, kwargs)
            try:
                result = function(*args, **kwargs)
            except BaseException as error:
                request.end(error)
                raise
            request.result = result
            request.end(None)
            return result

        return captured

    def _decorate_async(self, function: Callable[P, Awaitable[Any]]) -> Callable[P, Any]:
        start = functools.partial(CapturedRequest.start, self)

        @functools.wraps(function)
        async def captured(*args: P.args, **kwargs: P.kwargs) -> Any:
            request = start(args, kwargs)
            try:
                result = await function(*args, **kwargs)
            except BaseException as error:
                request.end(error)
                raise
            request.result = result
            request.end(None)
            return result

        return captured


def capture(
    directory: str | os.PathLike[str] | None = None,
    *,
    metadata: Metadata = None,
    sample: SampleRule = 1.0,
    keep: KeepRule = "always",
    max_bytes: int | None = None,
    retain: int | timedelta | Retention | None = None,
    redaction: RedactionPolicy | None = None,
    secrets: SecretMode | None = None,
    scanner: SecretScanner | None = None,
    spool: str | os.PathLike[str] | None = None,
    spool_bytes: int = DEFAULT_SPOOL_BYTES,
) -> Capture:
    """Capture each request (or job) into its own trace in `directory`, safely in production.

    Use the result as a decorator (sync or async functions, handlers run in
    thread pools) or as a context manager (one request per `with`; set
    `request.result` for a `keep` predicate):

        capture = toolreplay.capture("traces/", metadata=lambda req: {"request_id": req.id},
                                     sample=0.1, keep="error", retain=1000)

        @capture
        def handle(req): ...

    - `metadata`: stored in the header (request ids, labels): a mapping, or a
      callable given the decorated function's arguments (none for `with`).
    - `sample`: the share of requests recorded (0 to 1), or a callable deciding each.
    - `keep`: `"always"`, `"error"` (only requests that raised), or a predicate on
      the result (requests that raised are kept too).
    - `max_bytes`: a trace growing past it is discarded.
    - `retain`: a count, an age (`timedelta`), or `Retention(count, age)`:
      older captured traces in the folder are deleted (not with a URL: there, a
      bucket lifecycle rule does it).
    - `directory` may be an object-storage URL (`s3://bucket/prefix`, `gs://`,
      `az://`, `file:///folder`): each kept trace is written to a local `spool`
      folder as above, then uploaded in the background by a thread of this
      process (credentials from the store's standard places: environment,
      profile, role). `spool` defaults to a per-user folder under
      `~/.cache/toolreplay/spool/`; `spool_bytes` (default 256 MiB) bounds it:
      while the store is unreachable and the spool is full, new requests are
      not captured (one log line), and capture resumes when uploads catch up.
    - `redaction`, `scanner`: passed to each request's recording (RFC 0007): values
      are redacted before anything is fingerprinted or written.
    - `secrets`: `"abandon"` (the default, also when `TOOLREPLAY_SECRETS` says
      "error"): a secret about to be written removes that request's trace and the
      request carries on unrecorded; `"warn"` or `"off"` write it on purpose.

    Every setting can be overridden by a `TOOLREPLAY_CAPTURE_*` environment
    variable (`DIR`, `RATE`, `KEEP`, `MAX_BYTES`, `RETAIN`, `DISABLED`); with no
    directory in code or environment, capture is off. Capture never changes what
    the application does: a problem (a full disk, an unwritable folder, a value
    it cannot record) is logged once through the `toolreplay.capture` logger and
    that request is simply not captured. Inside an open session (a test recording
    or replaying the handler) capture steps aside. Bad settings in code raise
    `CaptureConfigError` here.
    """
    return Capture(
        directory,
        metadata=metadata,
        sample=sample,
        keep=keep,
        max_bytes=max_bytes,
        retain=retain,
        redaction=redaction,
        secrets=secrets,
        scanner=scanner,
        spool=spool,
        spool_bytes=spool_bytes,
    )
