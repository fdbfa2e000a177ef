"""Capture settings: what the code passes, what the environment overrides.

The code states the developer's defaults; an operator changes them per
deployment with environment variables, which win when set:

| variable | value | overrides |
|---|---|---|
| `TOOLREPLAY_CAPTURE_DISABLED` | `1`, `true`, `yes`, `on` (any case) | turns capture off |
| `TOOLREPLAY_CAPTURE_DIR` | a folder, or `s3://`, `gs://`, `az://`, `file://` URL | `directory` |
| `TOOLREPLAY_CAPTURE_RATE` | a number from 0 to 1 | `sample` |
| `TOOLREPLAY_CAPTURE_KEEP` | `always` or `error` | `keep` |
| `TOOLREPLAY_CAPTURE_MAX_BYTES` | bytes, or with `K`, `M`, `G` (powers of 1024) | `max_bytes` |
| `TOOLREPLAY_CAPTURE_RETAIN` | a count (`500`), an age (`7d`, `12h`), both (`500,7d`) | `retain` |
| `TOOLREPLAY_CAPTURE_SPOOL` | a folder (with a URL directory) | `spool` |
| `TOOLREPLAY_CAPTURE_SPOOL_BYTES` | bytes, or with `K`, `M`, `G` | `spool_bytes` |
| `TOOLREPLAY_CAPTURE_INSTANCE` | 1-63 letters, digits, `.`, `-`, `_` | the instance id |

The variables are read at the start of every request (a few dictionary
lookups; parsing is cached), so a test or a reloaded configuration takes
effect at once.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from toolreplay.documents import problem, shown
from toolreplay.durations import AGE_EXAMPLES, parse_age
from toolreplay.errors import CaptureConfigError, ObjectStoreError
from toolreplay.objectstore.locations import (
    ObjectLocation,
    check_instance,
    is_object_url,
    object_location,
)

__all__ = [
    "ENVIRONMENT_VARIABLES",
    "CaptureSettings",
    "KeepRule",
    "Retention",
    "SampleRule",
    "check_destination",
    "check_spool_bytes",
    "parse_retention",
    "parse_size",
]

KeepRule = Literal["always", "error"] | Callable[[Any], object]
"""Which captured requests are kept: all, those that raised, or those that raised or
whose result the predicate holds for."""

SampleRule = float | Callable[[], object]
"""Which requests are captured at all: a rate from 0 to 1, or a callable deciding each."""

ENVIRONMENT_VARIABLES = (
    "TOOLREPLAY_CAPTURE_DISABLED",
    "TOOLREPLAY_CAPTURE_DIR",
    "TOOLREPLAY_CAPTURE_RATE",
    "TOOLREPLAY_CAPTURE_KEEP",
    "TOOLREPLAY_CAPTURE_MAX_BYTES",
    "TOOLREPLAY_CAPTURE_RETAIN",
    "TOOLREPLAY_CAPTURE_SPOOL",
    "TOOLREPLAY_CAPTURE_SPOOL_BYTES",
    "TOOLREPLAY_CAPTURE_INSTANCE",
)

DEFAULT_SPOOL_BYTES = 256 * 1024**2
"""How many bytes of kept traces a process holds in its spool, waiting for upload."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})
_SIZE = re.compile(r"(?P<number>[0-9]+)\s*(?P<unit>[KMG]?)(?:i?B)?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Retention:
    """How many captured traces a folder keeps: at most `count`, none older than `age`.

    Either may be None (no limit of that kind). Only files named as captures
    name them are ever deleted.
    """

    count: int | None = None
    age: timedelta | None = None

    def __post_init__(self) -> None:
        if self.count is not None and (isinstance(self.count, bool) or self.count < 1):
            raise CaptureConfigError(
                f"retain: keep at least 1 trace (got count={self.count!r}); "
                "leave the count out for no count limit"
            )
        if self.age is not None and self.age <= timedelta(0):
            raise CaptureConfigError(f"retain: the age must be positive (got {self.age})")


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    """The settings one request is captured with (code, then the environment).

    With a `destination` (an object-storage URL) `directory` is None: traces are
    written to the `spool` (None: the default spool of the destination) and uploaded.
    """

    directory: Path | None
    sample: SampleRule
    keep: KeepRule
    max_bytes: int | None
    retention: Retention | None
    disabled: bool = False
    destination: ObjectLocation | None = None
    spool: Path | None = None
    spool_bytes: int = DEFAULT_SPOOL_BYTES
    instance: str | None = None
    """The instance id in the uploaded keys (None: the host name and the process id)."""

    def from_environment(self, environ: Mapping[str, str] = os.environ) -> CaptureSettings:
        """These settings with every `TOOLREPLAY_CAPTURE_*` variable that is set applied.

        Raises `CaptureConfigError` naming the variable whose value is unusable.
        """
        values = tuple(environ.get(name) for name in ENVIRONMENT_VARIABLES)
        if not any(value is not None for value in values):
            return self
        return _apply(self, values)


def check_sample(sample: object, where: str) -> SampleRule:
    if callable(sample):
        return sample  # pyright: ignore[reportUnknownVariableType]
    if (
        isinstance(sample, bool)
        or not isinstance(sample, int | float)
        or not math.isfinite(sample)
        or not 0 <= sample <= 1
    ):
        raise CaptureConfigError(
            f"{where}: give a sampling rate from 0 to 1 (0.05 captures one request in "
            f"twenty) or a callable that decides; got {sample!r}"
        )
    return float(sample)


def check_keep(keep: object, where: str) -> KeepRule:
    if keep in ("always", "error"):
        return keep  # pyright: ignore[reportReturnType]
    if callable(keep) and not isinstance(keep, str):
        return keep  # pyright: ignore[reportUnknownVariableType]
    raise CaptureConfigError(
        f"{where}: keep must be 'always', 'error' (only requests that raised), or a "
        f"predicate called with the request's result; got {keep!r}"
    )


def check_max_bytes(max_bytes: object, where: str) -> int | None:
    if max_bytes is None:
        return None
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise CaptureConfigError(
            f"{where}: max_bytes must be a positive number of bytes or None; got {max_bytes!r}"
        )
    return max_bytes


def check_retention(retain: object, where: str) -> Retention | None:
    if retain is None or isinstance(retain, Retention):
        return retain
    if isinstance(retain, int) and not isinstance(retain, bool):
        return Retention(count=retain)
    if isinstance(retain, timedelta):
        return Retention(age=retain)
    raise CaptureConfigError(
        f"{where}: retain takes a count of traces (500), an age (timedelta(days=7)) or "
        f"Retention(count=500, age=timedelta(days=7)); got {retain!r}"
    )


def check_destination(url: str, where: str) -> ObjectLocation:
    """`url` as an upload destination; `CaptureConfigError` naming what does not read."""
    try:
        return object_location(url)
    except ObjectStoreError as error:
        raise CaptureConfigError(f"{where}: {error}") from None


def check_spool_bytes(spool_bytes: object, where: str) -> int:
    if isinstance(spool_bytes, bool) or not isinstance(spool_bytes, int) or spool_bytes < 1:
        raise CaptureConfigError(
            f"{where}: spool_bytes must be a positive number of bytes (the spool's bound); "
            f"got {spool_bytes!r}"
        )
    return spool_bytes


def parse_size(text: str) -> int:
    """`"1048576"`, `"512K"`, `"10M"`, `"1G"` (powers of 1024) as a number of bytes."""
    match = _SIZE.fullmatch(text.strip())
    if match is None or int(match["number"]) < 1:
        raise ValueError(f"{text!r} is not a positive size such as 1048576, 512K or 10M")
    power = " KMG".index(match["unit"].upper() or " ")
    return int(match["number"]) * 1024**power


def parse_retention(text: str) -> Retention:
    """`"500"`, `"7d"` or `"500,7d"` as a `Retention`."""
    count: int | None = None
    age: timedelta | None = None
    for part in (piece.strip() for piece in text.split(",")):
        if part.isdigit() and count is None:
            count = int(part)
            continue
        part_age = parse_age(part)
        if part_age is None or age is not None:
            raise ValueError(
                f"{text!r} is not a retention such as 500 (traces), 7d (an age: "
                f"{AGE_EXAMPLES}) or 500,7d (both)"
            )
        age = part_age
    try:
        return Retention(count, age)
    except CaptureConfigError as error:
        raise ValueError(str(error).removeprefix("retain: ")) from None


_EXPECTED = {
    "TOOLREPLAY_CAPTURE_DISABLED": "1, true, yes or on, or 0, false, no or off",
    "TOOLREPLAY_CAPTURE_DIR": (
        "a folder or s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX, "
        "file:///ABSOLUTE/FOLDER"
    ),
    "TOOLREPLAY_CAPTURE_RATE": "a rate from 0 to 1",
    "TOOLREPLAY_CAPTURE_KEEP": "always or error",
    "TOOLREPLAY_CAPTURE_MAX_BYTES": "a positive size such as 1048576, 512K or 10M",
    "TOOLREPLAY_CAPTURE_RETAIN": (
        f"a retention such as 500 (traces), 7d (an age: {AGE_EXAMPLES}) or 500,7d (both)"
    ),
    "TOOLREPLAY_CAPTURE_SPOOL": "a folder",
    "TOOLREPLAY_CAPTURE_SPOOL_BYTES": "a positive size such as 268435456, 512M or 1G",
    "TOOLREPLAY_CAPTURE_INSTANCE": (
        "an instance id: 1 to 63 letters, digits, '.', '-' or '_', starting with a letter or digit"
    ),
}
"""What each variable takes, in the words of every document error (`documents.problem`)."""


@functools.lru_cache(maxsize=16)
def _apply(settings: CaptureSettings, values: tuple[str | None, ...]) -> CaptureSettings:
    disabled, directory, rate, keep, max_bytes, retain, spool, spool_bytes, instance = values
    changes: dict[str, Any] = {}
    variable, value = "", ""
    detail = ""
    try:
        variable, value = "TOOLREPLAY_CAPTURE_DISABLED", disabled
        if disabled is not None:
            flag = disabled.strip().lower()
            if flag not in _TRUE | _FALSE:
                raise ValueError(disabled)
            changes["disabled"] = flag in _TRUE
        variable, value = "TOOLREPLAY_CAPTURE_DIR", directory
        if directory and is_object_url(directory):
            try:
                changes["destination"] = object_location(directory)
            except ObjectStoreError as error:
                detail = f" ({error})"
                raise ValueError(directory) from None
            changes["directory"] = None
        elif directory:
            changes["directory"] = Path(directory)
            changes["destination"] = None
        variable, value = "TOOLREPLAY_CAPTURE_RATE", rate
        if rate is not None:
            try:
                changes["sample"] = check_sample(float(rate), variable)
            except CaptureConfigError:
                raise ValueError(rate) from None
        variable, value = "TOOLREPLAY_CAPTURE_KEEP", keep
        if keep is not None:
            if keep.strip() not in ("always", "error"):
                raise ValueError(keep)
            changes["keep"] = keep.strip()
        variable, value = "TOOLREPLAY_CAPTURE_MAX_BYTES", max_bytes
        if max_bytes is not None:
            changes["max_bytes"] = parse_size(max_bytes)
        variable, value = "TOOLREPLAY_CAPTURE_RETAIN", retain
        if retain is not None:
            changes["retention"] = parse_retention(retain)
        variable, value = "TOOLREPLAY_CAPTURE_SPOOL", spool
        if spool is not None:
            if not spool.strip():
                raise ValueError(spool)
            changes["spool"] = Path(spool)
        variable, value = "TOOLREPLAY_CAPTURE_SPOOL_BYTES", spool_bytes
        if spool_bytes is not None:
            changes["spool_bytes"] = parse_size(spool_bytes)
        variable, value = "TOOLREPLAY_CAPTURE_INSTANCE", instance
        if instance is not None:
            try:
                changes["instance"] = check_instance(instance)
            except ObjectStoreError:
                raise ValueError(instance) from None
    except ValueError:
        raise CaptureConfigError(
            problem("the environment", variable, _EXPECTED[variable], shown(value)) + detail
        ) from None
    return replace(settings, **changes)
