"""What every `toolreplay NAME` command is built on: Typer, with values converted here.

Each command module declares its command as a function whose parameters are Typer
`Argument`s and `Option`s (`Annotated`); `toolreplay.cli.app` names the commands and
builds a command from its function only when it runs. The function returns the exit
status.

Typer 0.29 converts every value that is not a flag through a pydantic `TypeAdapter`,
and importing pydantic and building the adapters takes about 0.2 s of CPU: more than
the rest of `toolreplay find`'s start-up. The command line declares only a few kinds
of value, so `ToolReplayCommand` converts them itself (`_converter`); parsing, help,
completion and usage errors stay Typer's. The seam is the object a Typer parameter
converts its value with (`_runtime_param`, built on first use), which is why `typer` is
pinned to 0.29.x; `tests/test_cli_imports.py` fails if a command imports pydantic again.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

# Typer vendors click and names these classes only there.
from typer._click import (  # pyright: ignore[reportPrivateUsage]
    Command as ClickCommand,
)
from typer._click import (  # pyright: ignore[reportPrivateUsage]
    Context,
    HelpFormatter,
    Parameter,
)
from typer._click.exceptions import UsageError  # pyright: ignore[reportPrivateUsage]
from typer.core import TyperArgument, TyperCommand, TyperOption

from toolreplay.cli.output import OutputFormat, drawn_by_the_ui, rich_terminal

__all__ = [
    "SKIPPED_EXIT_CODE",
    "Command",
    "FormatOption",
    "ToolReplayCommand",
    "convert_values_here",
    "help_markup",
]

SKIPPED_EXIT_CODE = 3
"""`find` and `scan`: nothing was found, but some files were skipped (they could not be
read), so "nothing" is not certain."""

Convert = Callable[[Any], Any]

FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="text for people and logs, json for programs."),
]
"""The `--format/-f` option of every command (parameter `output_format`, default text)."""


def help_markup() -> typing.Literal["rich"] | None:
    """How help is drawn: Rich panels on a terminal, plain text in a pipe or a file
    (`toolreplay.cli.output`'s rule for everything the command line prints)."""
    return "rich" if rich_terminal() else None


def _draw_help(draw: Callable[[], None]) -> None:
    """Draw help with `draw`: Rich writes its own styles, so on a terminal it writes to
    the raw stream (the help is the command line's own text, nothing from a trace)."""
    if help_markup() is None:
        draw()
        return
    with drawn_by_the_ui():
        draw()


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not text")
    return value


def _path(value: Any) -> Path:
    return value if isinstance(value, Path) else Path(_text(value))


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not a flag's value")
    return value


def _whole_number(minimum: float | None, maximum: float | None) -> Convert:
    def convert(value: Any) -> int:
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


def _choice(choices: type[Enum]) -> Convert:
    def convert(value: Any) -> Enum:
        try:
            return choices(value)
        except ValueError:
            allowed = ", ".join(repr(choice.value) for choice in choices)
            raise ValueError(f"invalid choice: {value!r} (choose from {allowed})") from None

    return convert


def _parsed_by(parser: Callable[[str], Any]) -> Convert:
    """A parameter's own `parser=`, given the text (or the value already parsed, for a
    default)."""
    return lambda value: parser(value) if isinstance(value, str) else value


def _converter(annotation: Any, info: Any) -> Convert:
    """How a value of `annotation` (with Typer's `ParameterInfo` `info`) is converted."""
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        convert_item = _converter(item, info)
        return lambda values: [convert_item(value) for value in values]
    if info.parser is not None:
        return _parsed_by(info.parser)
    if annotation is str:
        return _text
    if annotation is Path:
        return _path
    if annotation is bool:
        return _flag
    if annotation is int:
        return _whole_number(info.min, info.max)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(annotation)
    raise TypeError(
        f"the command line converts text, paths, flags, whole numbers, choices (an Enum) "
        f"and values with a parser=, not {annotation!r}: declare one of those"
    )


@dataclass(frozen=True, slots=True)
class _Conversion:
    """What a Typer parameter converts its value with (Typer's `RuntimeParam.coerce`)."""

    convert: Convert

    def coerce(self, value: Any, param: TyperArgument | TyperOption, ctx: Context) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:  # not given: as Typer, an empty tuple for a list
            return () if many else None
        try:
            return self.convert(value)
        except ValueError as error:
            raise typer.BadParameter(str(error), ctx=ctx, param=param) from None


def convert_values_here(params: Iterable[Parameter]) -> None:
    """Give Typer's parameters this module's conversion of their values (idempotent)."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", None) is not None:
            continue
        param._runtime_param = _Conversion(  # pyright: ignore[reportAttributeAccessIssue]
            _converter(descriptor.annotation, descriptor.parameter_info)
        )


class ToolReplayCommand(ClickCommand):
    """What `toolreplay` and each of its commands share: values converted here, help
    drawn Rich on a terminal only, and a usage line with every usage error."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        params = super().get_params(ctx)  # `--help` too, which is made on first use
        convert_values_here(params)
        return params

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except UsageError as error:
            if error.ctx is None:  # the parser's own errors (an option without its value)
                error.ctx, error.cmd = ctx, self
            raise

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        _draw_help(lambda: super(ToolReplayCommand, self).format_help(ctx, formatter))


class Command(ToolReplayCommand, TyperCommand):
    """One `toolreplay NAME` command."""
