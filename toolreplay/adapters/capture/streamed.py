"""What every profile's model-answer code shares: a text cut into the pieces a model
streams, and a new text cut as an old one was.

Pure functions over portable JSON (no SDK, no HTTP library), used where a profile
writes a stream for `reply(...)` or rewrites one for `edit(...)`.
"""

from __future__ import annotations

import re

__all__ = ["redistribute", "text_pieces"]

_PIECE = re.compile(r"\s*\S+\s*|\s+")


def text_pieces(text: str, size: int = 24) -> list[str]:
    """`text` in the small pieces a model streams: words with their spacing."""
    pieces: list[str] = []
    for match in _PIECE.finditer(text):
        word = match.group()
        pieces.extend(word[start : start + size] for start in range(0, len(word), size))
    return pieces


def redistribute(old: list[str], new: str) -> list[str]:
    """`new` cut into as many pieces as `old`, each as long as its old piece, the last
    taking the rest: an unchanged beginning keeps its pieces."""
    pieces: list[str] = []
    rest = new
    for piece in old[:-1]:
        pieces.append(rest[: len(piece)])
        rest = rest[len(piece) :]
    pieces.append(rest)
    return pieces
