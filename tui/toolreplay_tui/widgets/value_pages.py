"""A value too large to show whole: its size and its first and last pages, as text."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from toolreplay_tui.model.rows import megabytes

__all__ = ["describe_large", "visible_text"]


def visible_text(data: bytes) -> str:
    """Bytes cut from a file, as text a terminal shows as it is: invalid UTF-8 (a page may
    cut a character in two) replaced, and characters that are not printable (control
    and format characters) shown as `\\uXXXX` escapes."""
    text = data.decode("utf-8", errors="replace")
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() or char == "\n" else f"\\u{ord(char):04x}" for char in text
    )


def describe_large(
    title: str, size: int, first: bytes, last: bytes, *, keys: bool = True
) -> RenderableType:
    """A large value by its size and its first and last pages, as its trace line holds it."""
    parts: list[RenderableType] = [
        Text(title, style="bold"),
        Text.assemble(
            (f"{size:,} bytes ({megabytes(size)}) of JSON", "bold yellow"),
            ("  too large to show whole: its first and last pages, as the trace holds them", "dim"),
        ),
    ]
    if keys:
        parts.append(
            Text.assemble(
                ("s", "bold"),
                (" saves it to a file  ·  ", ""),
                ("E", "bold"),
                (" opens it in $EDITOR (a change becomes a pending patch)  ·  ", ""),
                ("escape", "bold"),
                (" closes", ""),
            )
        )
    parts += [Text(""), Text(visible_text(first), overflow="fold")]
    if last:
        hidden = size - len(first) - len(last)
        parts += [
            Text(""),
            Text(f"… {hidden:,} bytes not shown …", style="bold dim"),
            Text(""),
            Text(visible_text(last), overflow="fold"),
        ]
    return Group(*parts)
