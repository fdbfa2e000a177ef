"""Patch files: a list of patches as a versioned JSON document (RFC 0004 §2).

`write_patches` writes the oldest version that holds the patches; `read_patches`
reads every version, checking the entries with their model
(`toolreplay.documents.patches`), in the documents' one message style.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from toolreplay.documents import problem, shown
from toolreplay.errors import JsonTextError, NonPortableValueError, PatchFileError
from toolreplay.files import UnreadableFileError, read_regular_file, write_atomically
from toolreplay.patches.model import ErrorPatch, OutputPatch, Patch
from toolreplay.portable import parse_json_text

__all__ = ["PATCH_FILE_FORMAT", "PATCH_FILE_FORMAT_VERSION", "read_patches", "write_patches"]

PATCH_FILE_FORMAT = "toolreplay.patches"
PATCH_FILE_FORMAT_VERSION = 3
# Version 1 held replace_output patches only; version 2 the four kinds on exact calls;
# version 3 adds at=N, next-call supply patches and recipes.
_READABLE_VERSIONS = (1, 2, 3)


def _fits_version_2(patch: Patch) -> bool:
    """Whether a version 2 file can hold `patch`: an exact call, a value or an error."""
    return patch.target_form == "call" and (isinstance(patch, ErrorPatch) or patch.recipe is None)


def write_patches(
    path: str | os.PathLike[str], patches: Iterable[Patch], *, overwrite: bool = False
) -> Path:
    """Save patches to a versioned JSON patch file, atomically; returns its path.

    The file is format version 2 when every patch names an exact call with a value
    or an error, else version 3 (`at=N`, next-call supply patches, recipes).
    """
    target = Path(path)
    patches = list(patches)
    # Version 2 when every patch fits it, so such a file stays readable by releases
    # before version 3.
    version = 2 if all(map(_fits_version_2, patches)) else PATCH_FILE_FORMAT_VERSION
    document = {
        "format": PATCH_FILE_FORMAT,
        "format_version": version,
        "patches": [patch.to_dict() for patch in patches],
    }
    data = (json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()
    try:
        write_atomically(target, data, overwrite=overwrite)
    except FileExistsError:
        raise PatchFileError(
            f"{target}: a file already exists here; choose another path or pass overwrite=True",
            path=target,
        ) from None
    except IsADirectoryError:
        raise PatchFileError(
            f"{target}: is a directory; give the path of a patch file", path=target
        ) from None
    except FileNotFoundError:
        raise PatchFileError(
            f"{target}: the folder {target.parent} does not exist; create it first", path=target
        ) from None
    except OSError as error:
        raise PatchFileError(
            f"{target}: cannot write the patch file: {error.strerror or error}", path=target
        ) from None
    return target


def read_patches(path: str | os.PathLike[str]) -> list[Patch]:
    """Load a patch file written by `write_patches` (or by hand, in the same format).

    Raises `PatchFileError` naming the file, and for a malformed entry the JSON path,
    what was expected and the value found (`toolreplay.documents.patches`).
    """
    source = Path(path)

    def fail(message: str) -> PatchFileError:
        return PatchFileError(message, path=source)

    try:
        loaded = parse_json_text(read_regular_file(source, "patch"), what="the patch file")
    except UnreadableFileError as error:
        raise fail(f"{source}: {error.problem}") from None
    except JsonTextError as error:
        raise fail(f"{source}: {error}") from None
    # The format and its version first: what the entries may hold depends on the version.
    document = cast(dict[str, Any], loaded) if type(loaded) is dict else {}
    if document.get("format") != PATCH_FILE_FORMAT:
        found = shown(document["format"]) if "format" in document else "nothing"
        raise fail(
            problem(str(source), "$.format", f'"{PATCH_FILE_FORMAT}" (a patch file)', found)
            if document
            else problem(str(source), "$", "an object (a patch file)", shown(loaded))
        )
    version = document.get("format_version")
    if type(version) is not int or version not in _READABLE_VERSIONS:
        readable = ", ".join(map(str, _READABLE_VERSIONS[:-1])) + f" or {_READABLE_VERSIONS[-1]}"
        raise fail(
            problem(
                str(source),
                "$.format_version",
                f"{readable}, the versions this toolreplay reads",
                shown(version) if "format_version" in document else "nothing",
            )
        )
    # Imported here: pydantic is loaded when a patch file is read, not with the runtime.
    from toolreplay.documents.patches import OutputEntry, PatchFileModel
    from toolreplay.documents.validation import validate_document

    model = validate_document(
        PatchFileModel, document, where=str(source), error=fail, context={"version": version}
    )
    patches: list[Patch] = []
    for index, entry in enumerate(model.patches):
        where = f"{source}: $.patches[{index}]"
        namespace, _, name = (entry.effect or "").partition(".")
        patch: Patch
        try:
            if isinstance(entry, OutputEntry):
                recipe = entry.recipe
                patch = OutputPatch(
                    namespace,
                    name,
                    entry.inputs,
                    entry.occurrence,
                    getattr(entry, recipe or "value"),
                    entry.kind,
                    recipe,
                    entry.at,
                )
            else:
                patch = ErrorPatch(
                    namespace,
                    name,
                    entry.inputs,
                    entry.occurrence,
                    entry.error.type,
                    entry.error.message,
                    entry.error.args,
                    entry.kind,
                    entry.at,
                )
        except (ValueError, NonPortableValueError) as error:
            raise fail(f"{where}: {error}") from None
        if entry.patch_id is not None and entry.patch_id != patch.patch_id:
            raise fail(
                problem(
                    where.partition(": ")[0],
                    f"$.patches[{index}].patch_id",
                    f'"{patch.patch_id}", the id of its content (the patch was edited: delete '
                    "its patch_id line to accept the edit)",
                    shown(entry.patch_id),
                )
            )
        patches.append(patch)
    return patches
