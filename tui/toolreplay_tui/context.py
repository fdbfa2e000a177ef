"""Typed access to the running debugger from any screen or widget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from toolreplay_tui.app import ToolReplayApp

__all__ = ["blink_cursors", "debugger"]


def _app(node: DOMNode) -> Any:
    return node.app  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def debugger(node: DOMNode) -> ToolReplayApp:
    """The `ToolReplayApp` that `node` belongs to."""
    return cast("ToolReplayApp", _app(node))


def blink_cursors(node: DOMNode) -> bool:
    """Whether text cursors blink (tests turn it off for stable screenshots)."""
    return bool(getattr(_app(node), "blink_cursors", True))
