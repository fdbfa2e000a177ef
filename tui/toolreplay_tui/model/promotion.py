"""What the promote form starts from: a case name, its folder, the runner, the expected value."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolreplay import Patch
from toolreplay.portable import JsonValue
from toolreplay_tui.model.jsontext import format_json

__all__ = ["CASES_FOLDER", "PromoteDefaults", "case_folder", "case_name", "promote_defaults"]

CASES_FOLDER = Path("tests") / "cases"
_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
_MAX_NAME = 128


def _slug(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_").lower()


def case_name(trace_path: Path, patches: Sequence[Patch]) -> str:
    """`refund_llm_refund_decide_3cf5fb`: the trace's name, the patched effect, the patch.

    Several patches give `refund_3_patches_<first id>`; none gives `refund_fork`.
    The result is a valid case name (letters, digits and `_`, at most 128).
    """
    stem = _slug(trace_path.stem) or "trace"
    if not patches:
        name = f"{stem}_fork"
    elif len(patches) == 1:
        patch = patches[0]
        name = f"{stem}_{_slug(patch.effect)}_{patch.patch_id.removeprefix('p-')[:6]}"
    else:
        name = f"{stem}_{len(patches)}_patches_{patches[0].patch_id.removeprefix('p-')[:6]}"
    if not name[0].isalnum():
        name = "case_" + name
    return name[:_MAX_NAME].rstrip("_")


def case_folder(name: str) -> Path:
    """`tests/cases/<name>`, relative to the working directory."""
    return CASES_FOLDER / name


@dataclass(frozen=True, slots=True)
class PromoteDefaults:
    """The promote form's initial fields."""

    name: str
    folder: str
    runner: str
    expected: str


def promote_defaults(
    trace_path: Path,
    patches: Sequence[Patch],
    runner: str,
    return_value: JsonValue,
    *,
    portable: bool = True,
) -> PromoteDefaults:
    """Prefill from the source trace, the patches the fork applied and its return value.

    A return value the protocol reported as not portable (its `repr`) is given
    as a JSON string, for the user to replace with the value they expect.
    """
    name = case_name(trace_path, patches)
    expected = format_json(return_value if portable else str(return_value))
    return PromoteDefaults(name, str(case_folder(name)), runner, expected)
