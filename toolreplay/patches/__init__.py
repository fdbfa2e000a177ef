"""Patches: the recorded facts a fork changes, and the patch files that hold them.

A patch names its target in one of three ways: the exact identity a recording
gives a call (effect, inputs, occurrence); the number of a source operation
(`at=N`, a `replace_*` patch); or, for a `supply_*` patch that names no inputs,
the next call of its effect that the source does not hold. What it sets is a
value, an error, or an `OutputRecipe` (an adapter's `reply(...)` or `edit(...)`)
that the fork resolves against the call it answers. Its `patch_id` is derived
from its content, so the same change always has the same id, in a file, a
branch trace's lineage and a diff report alike.

One concept per module: `model` (the patch types and their checks),
`constructors` (`replace_output()` and the other three, as an application
writes a patch) and `files` (patch files, read and written).
"""

from toolreplay.patches.constructors import (
    replace_error,
    replace_output,
    supply_error,
    supply_output,
)
from toolreplay.patches.files import (
    PATCH_FILE_FORMAT,
    PATCH_FILE_FORMAT_VERSION,
    read_patches,
    write_patches,
)
from toolreplay.patches.model import (
    PATCH_KINDS,
    RECIPE_KINDS,
    ErrorPatch,
    OutputPatch,
    OutputRecipe,
    Patch,
    PatchKind,
    RecipeKind,
    TargetForm,
)

__all__ = [
    "PATCH_FILE_FORMAT",
    "PATCH_FILE_FORMAT_VERSION",
    "PATCH_KINDS",
    "RECIPE_KINDS",
    "ErrorPatch",
    "OutputPatch",
    "OutputRecipe",
    "Patch",
    "PatchKind",
    "RecipeKind",
    "TargetForm",
    "read_patches",
    "replace_error",
    "replace_output",
    "supply_error",
    "supply_output",
    "write_patches",
]
