"""Every adapter's check of its SDK: installed, and a release in the supported range.

Its own module, importing nothing of an adapter, so an adapter checks the SDK's version
(`require_sdk`) before it imports anything built on the SDK.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

__all__ = ["release", "require_sdk"]


def require_sdk(
    module: str,
    *,
    distribution: str,
    adapter: str,
    supported: str,
    minimum: tuple[int, ...],
    below: tuple[int, ...],
    extra: str,
    error: type[ImportError],
) -> None:
    """Raise `error` unless `module` imports and its `distribution` is a release from
    `minimum` up to (not including) `below` (`supported`, their PEP 440 specifier).

    The message names the `adapter`, the range, the release found and the command that
    installs the project's `extra`.
    """
    install = f'uv sync --extra {extra} (or: pip install "toolreplay[{extra}]")'
    try:
        imported = import_module(module)  # installed and importable, not only its metadata
        # The module's own version where it has one: it is what will run.
        found = str(getattr(imported, "__version__", "") or version(distribution))
    except (ImportError, PackageNotFoundError) as missing:
        raise error(
            f"the Tool Replay {adapter} adapter needs the {distribution} package ({supported}), "
            f"which is not installed. Install it with: {install}"
        ) from missing
    if not (minimum <= release(found) < below):
        raise error(
            f"the Tool Replay {adapter} adapter supports {distribution} {supported}, but "
            f"{distribution} {found} is installed. Install a supported version with: {install}"
        )


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version string: `2.20.0` is (2, 20, 0), `1.3.0rc1` is
    (1, 3, 0), and the numbers stop at the first part that is not one."""
    parts: list[int] = []
    for part in version.split("."):
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
        if not part.isdigit():
            break
    return tuple(parts)
