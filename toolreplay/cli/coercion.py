"""Option values converted without pydantic: most of a command's start-up otherwise.

Typer 0.29 converts every option value that is not a flag through a pydantic
`TypeAdapter`, and importing pydantic for it took about half of `toolreplay find`'s
start-up (0.15 of 0.3 s). Parsing stays Typer's (and click's); only the conversion
of a parsed string into the parameter's type is done here, for the few kinds the
command line declares: text, flags, paths without checks, whole numbers with bounds,
a choice among a `StrEnum`'s values, and lists of those. Any other parameter keeps
Typer's own conversion. The hook is Typer's (private) `_runtime_param`, the object a
parameter converts its value with, built on first use: with a Typer whose parameters
have no such attribute nothing is replaced, and the commands only start slower.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typer import BadParameter

if TYPE_CHECKING:
    from collections.abc import Iterable

    from typer._click import Context, Parameter  # pyright: ignore[reportPrivateUsage]

__all__ = ["convert_without_pydantic"]

Convert = Callable[[Any], Any]


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not a flag's value")
    return value


def _text(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not text")
    return value


def _path(value: Any) -> Any:
    return value if isinstance(value, Path) else Path(_text(value))


def _whole_number(minimum: float | None, maximum: float | None) -> Convert:
    def convert(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"{value!r} is not a whole number")
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a whole number") from None
        if minimum is not None and number < minimum:
            raise ValueError(f"{number} is less than the minimum, {minimum}")
        if maximum is not None and number > maximum:
            raise ValueError(f"{number} is more than the maximum, {maximum}")
        return number

    return convert


def _choice(choices: type[StrEnum]) -> Convert:
    def convert(value: Any) -> Any:
        try:
            return choices(value)
        except ValueError:
            allowed = ", ".join(repr(choice.value) for choice in choices)
            raise ValueError(f"{value!r} is not one of {allowed}") from None

    return convert


def _converter(annotation: Any, info: Any) -> Convert | None:
    """How to convert a value of `annotation` here, or None to leave it to Typer."""
    if getattr(info, "parser", None) is not None:
        return None
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        convert_item = _converter(item, info)
        if convert_item is None:
            return None
        return lambda values: [convert_item(value) for value in values]
    if annotation is str:
        return _text
    if annotation is bool:
        return _flag
    if annotation is Path:
        checks = ("exists", "resolve_path", "allow_dash", "writable")
        return None if any(getattr(info, check, True) for check in checks) else _path
    if annotation is int and not getattr(info, "clamp", True):
        return _whole_number(getattr(info, "min", None), getattr(info, "max", None))
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return _choice(annotation) if getattr(info, "case_sensitive", False) else None
    return None


@dataclass(frozen=True, slots=True)
class _Conversion:
    """What Typer's parameter calls to convert its value (its `RuntimeParam`'s `coerce`)."""

    convert: Convert

    def coerce(self, value: Any, param: Any, ctx: Context) -> Any:
        if value is None:  # not given: as Typer, an empty tuple for a list
            return () if param.multiple or param.nargs == -1 else None
        if (param.multiple or param.nargs == -1) and isinstance(value, str):
            raise BadParameter("Value must be an iterable.", ctx=ctx, param=param)
        try:
            return self.convert(value)
        except ValueError as error:
            raise BadParameter(str(error), ctx=ctx, param=param) from None


def convert_without_pydantic(params: Iterable[Parameter]) -> None:
    """Give the parameters of the kinds above this module's conversion (idempotent)."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        # Typer builds `_runtime_param` when a value first needs it: None until then.
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            continue
        if descriptor.file_annotation is not None:
            continue
        convert = _converter(descriptor.annotation, descriptor.parameter_info)
        if convert is not None:
            param._runtime_param = _Conversion(convert)  # pyright: ignore[reportAttributeAccessIssue]
