"""Typed access to the running debugger from any screen or widget: `debugger(self)`.

Screens and widgets read the session's state through it; they change it only by
posting the messages of `toolreplay_tui.messages`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from toolreplay_tui.app import ToolReplayApp

__all__ = ["debugger"]


def debugger(node: DOMNode) -> ToolReplayApp:
    """The `ToolReplayApp` that `node` belongs to."""
    app = node.app  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return cast("ToolReplayApp", app)
