"""Effect names for plain HTTP requests: `METHOD /path/template`.

A request's name must say which endpoint it is, never which record it touched:
`GET /repos/{id}/issues`, not `GET /repos/8812/issues`, so that calls of one
endpoint share a name (for `find --effect`, `live=`, patches and summaries) while
their paths, with every value, stay in the inputs.

A route the application gives (`routes=["/users/{user}/repos"]`) names the
requests it matches: each `{...}` segment matches any one segment, the others
themselves; the first route that matches wins. Any other path is templated
segment by segment: a segment stays as it is when it is a word (it starts with a
letter and holds only letters, digits, `_`, `-`, `.` and `~`) that does not look
like a value; a segment that looks like a value becomes `{id}`. Values are:
segments with 4 or more digits (`8812`, `2024-05-01`, hashes, `resp_68c1f0...`),
with a digit and both upper- and lowercase letters (`cus_NffrFeUfNV2Hib`), longer
than 40 characters, not starting with a letter (`42`, `0x1f`), or holding any
other character (`%`, `@`, spaces: an e-mail address, an encoded key). A segment
`name:verb` (Google's custom methods, `models/gemini-2.0-flash:generateContent`)
keeps its verb: `{id}:generateContent`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolreplay.errors import AdapterOptionError

__all__ = ["Routes", "route_template"]

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.~-]*")
_VERB = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_DIGIT = re.compile(r"\d")
_MAX_WORD = 40
ID = "{id}"


def _is_word(segment: str) -> bool:
    if len(segment) > _MAX_WORD or not _WORD.fullmatch(segment):
        return False
    digits = len(_DIGIT.findall(segment))
    if digits >= 4:
        return False
    mixed_case = segment.lower() != segment and segment.upper() != segment
    return not (digits and mixed_case)


def _template_segment(segment: str) -> str:
    head, colon, verb = segment.rpartition(":")
    if colon and head and _VERB.fullmatch(verb):
        return f"{_template_segment(head)}:{verb}"
    return segment if _is_word(segment) else ID


def route_template(path: str) -> str:
    """The template of a path by the rules above: `/repos/8812/issues` -> `/repos/{id}/issues`."""
    segments = path.split("/")
    return "/".join(_template_segment(segment) if segment else "" for segment in segments) or "/"


@dataclass(frozen=True, slots=True)
class _Route:
    template: str
    parts: tuple[str | None, ...]  # None: a placeholder, matching any one segment


@dataclass(frozen=True, slots=True)
class Routes:
    """The routes an application gave, and the effect name of a request."""

    routes: tuple[_Route, ...]

    @classmethod
    def of(cls, templates: Sequence[str]) -> Routes:
        """Routes from templates like `/users/{user}/repos`; `AdapterOptionError` for a
        template that is not a path of words and `{name}` placeholders."""
        if isinstance(templates, str):
            raise AdapterOptionError(
                f"routes= takes a list of path templates, got the string {templates!r}; "
                f"write routes=[{templates!r}]"
            )
        parsed: list[_Route] = []
        for template in templates:
            if not isinstance(template, str) or not template.startswith("/"):  # pyright: ignore[reportUnnecessaryIsInstance]  # user input
                raise AdapterOptionError(
                    f"route {template!r} is not a path template: give a path starting with "
                    "'/', with {name} for each segment that holds a value, like "
                    "'/users/{user}/repos'"
                )
            parts: list[str | None] = []
            for segment in template.split("/")[1:]:
                if _PLACEHOLDER.fullmatch(segment):
                    parts.append(None)
                elif _WORD.fullmatch(segment) or segment == "":
                    parts.append(segment)
                else:
                    raise AdapterOptionError(
                        f"route {template!r}: the segment {segment!r} is neither a word "
                        "(letters, digits, '_', '-', '.', '~', starting with a letter) nor a "
                        "placeholder like {user}"
                    )
            parsed.append(_Route(template, tuple(parts)))
        return cls(tuple(parsed))

    def effect_name(self, method: str, path: str) -> str:
        """`METHOD /template` for a request (its path relative to the client's base URL)."""
        return f"{method.upper()} {self.template(path)}"

    def template(self, path: str) -> str:
        """The first given route matching `path`, else `route_template(path)`."""
        if self.routes:
            segments = path.split("/")[1:]
            for route in self.routes:
                if len(route.parts) == len(segments) and all(
                    (part is None and segment) or part == segment
                    for part, segment in zip(route.parts, segments, strict=True)
                ):
                    return route.template
        return route_template(path)
