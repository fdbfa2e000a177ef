"""The one document-validation layer: strict pydantic models, and their errors as sentences.

Every model of a document derives from `DocumentModel`: strict types (`"12"` is not
an integer, `true` is not 1), no NaN or infinity, no keys the document does not
define. `validate_document` checks a parsed document against its model and raises
the reader's own error (`CaseIntegrityError`, `PatchFileError`, `ProtocolError`)
with the first problem as `documents.problem` words it: the JSON path (the
project's grammar, `toolreplay.jsonpath`), what was expected, the value found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, cast, get_args, get_origin

from annotated_types import GroupedMetadata
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
)
from pydantic_core import ErrorDetails

from toolreplay.documents import problem, shown
from toolreplay.effect_names import EFFECT_NAME_PATTERN, EFFECT_NAME_RULE
from toolreplay.jsonpath import format_path

__all__ = [
    "DocumentModel",
    "DocumentProblem",
    "EffectName",
    "Expect",
    "Matching",
    "NonNegative",
    "NotNull",
    "absent",
    "describe_failure",
    "validate_document",
]

_Model = TypeVar("_Model", bound=BaseModel)
_Error = TypeVar("_Error", bound=Exception)


class DocumentModel(BaseModel):
    """A JSON document, or an object in one: strict, finite, closed, immutable."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        use_attribute_docstrings=True,
    )


class DocumentProblem(ValueError):
    """What a model's own check raises: the expectation, and optionally the value found
    and the key (below the object checked) the problem is at."""

    def __init__(self, expected: str, *, found: str | None = None, key: str | None = None) -> None:
        super().__init__(expected)
        self.expected = expected
        self.found = found
        self.key = key


class Expect(str):
    """`Annotated` metadata: what a value of this type is, in words, for messages."""

    __slots__ = ()


class Matching(GroupedMetadata):
    """`Annotated[str, Matching(PATTERN, "module:callable")]`: a string the project's own
    compiled `pattern` matches whole (so each rule is written once), described as
    `expected` in messages and in the schema (with the pattern, for editors)."""

    def __init__(self, pattern: re.Pattern[str], expected: str) -> None:
        self.pattern = pattern
        self.expected = expected

    def __iter__(self) -> Iterator[object]:
        yield Expect(self.expected)
        yield AfterValidator(self._check)
        yield Field(
            description=self.expected,
            json_schema_extra={"pattern": f"^(?:{self.pattern.pattern})$"},
        )

    def _check(self, value: str) -> str:
        if self.pattern.fullmatch(value) is None:
            raise DocumentProblem(self.expected)
        return value


def _refuse_null(value: object) -> object:
    if value is None:
        raise DocumentProblem("a value, not null (leave the key out to give none)")
    return value


NotNull = BeforeValidator(_refuse_null)
"""`Annotated[X | None, NotNull] = absent()`: a key that may be left out, never null."""


def _without_null(schema: dict[str, Any]) -> None:
    options = [option for option in schema.pop("anyOf", []) if option.get("type") != "null"]
    if len(options) == 1:
        schema.update(options[0])
    elif options:
        schema["anyOf"] = options
    schema.pop("default", None)


def absent() -> Any:
    """The default of a key that may be left out (with `NotNull`): None in Python, and in
    the schema a key that is not required and not nullable."""
    return Field(default=None, json_schema_extra=_without_null)


NonNegative = Annotated[int, Field(ge=0)]
"""An integer from 0 up (a count, an index, an occurrence)."""

EffectName = Annotated[str, Matching(EFFECT_NAME_PATTERN, f"an effect name ({EFFECT_NAME_RULE})")]
"""A dotted effect name, `crm.customer.get` (`toolreplay.effect_names`)."""


def validate_document(
    model: type[_Model],
    data: object,
    *,
    where: str,
    error: Callable[[str], _Error],
    context: Mapping[str, object] | None = None,
) -> _Model:
    """`data` (parsed JSON) as `model`, or `error(message)` naming the first problem."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as failure:
        raise error(describe_failure(model, failure, where)) from None


def describe_failure(model: type[BaseModel], failure: ValidationError, where: str) -> str:
    """The first problem of `failure` in the one message style, and how many more."""
    details = failure.errors(include_url=False)
    message = _describe(model, details[0], where)
    more = len(details) - 1
    return message + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


# --- from pydantic's location to a JSON path and an expectation ---------------------------


def _describe(model: type[BaseModel], detail: ErrorDetails, where: str) -> str:
    path, annotation, keys = _walk(model, detail["loc"])
    kind = detail["type"]
    context: dict[str, Any] = dict(detail.get("ctx") or {})
    value = detail["input"]
    found = shown(value)
    if kind == "missing":
        return problem(where, format_path(path), _expected(annotation), "nothing (no such key)")
    if kind == "extra_forbidden":
        key = path.pop()
        known = ", ".join(keys) or "none"
        return problem(where, format_path(path), f"only the keys {known}", f"the key {shown(key)}")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        discriminator = str(context.get("discriminator", "")).strip("'\"")
        tags = ", ".join(shown(tag) for tag in _tags(annotation, discriminator))
        present = kind == "union_tag_invalid"
        return problem(
            where,
            format_path([*path, discriminator]),
            f"one of {tags}",
            shown(context.get("tag")) if present else "nothing (no such key)",
        )
    error = context.get("error")
    if isinstance(error, DocumentProblem):
        if error.key is not None:
            path.append(error.key)
        return problem(where, format_path(path), error.expected, error.found or found)
    if kind == "value_error":
        return problem(where, format_path(path), str(error), found)
    bounds = {
        "greater_than_equal": ">=",
        "greater_than": ">",
        "less_than_equal": "<=",
        "less_than": "<",
    }
    if kind in bounds:
        bound = next(iter(context.values()), "?")
        return problem(
            where, format_path(path), f"{_expected(annotation)} {bounds[kind]} {bound}", found
        )
    if kind == "finite_number":
        return problem(where, format_path(path), "a finite number", found)
    return problem(where, format_path(path), _expected(annotation), found)


def _walk(
    model: type[BaseModel], loc: tuple[str | int, ...]
) -> tuple[list[str | int], Any, list[str]]:
    """The JSON path pydantic's `loc` stands for, the annotation found there (None when it
    is not known), and the keys of the innermost object on the way (for an unknown key).

    `loc` holds more than keys and indices: the tag of the branch a discriminated union
    took, and inside a `JsonValue` the JSON type of each level (`dict`, `list`, `float`).
    """
    path: list[str | int] = []
    current: Any = model
    keys: list[str] = []
    position = 0
    while position < len(loc):
        step = loc[position]
        current = _bare(current)
        if current is JsonValue:
            # tag, key, tag, key, ..., tag: every other step is a key or an index.
            path.extend(loc[position + 1 :: 2])
            return path, None, keys
        origin = get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = current.model_fields
            keys = [info.alias or name for name, info in fields.items()]
            path.append(step)
            info = fields.get(str(step))
            current = None if info is None else _with_metadata(info.annotation, info.metadata)
        elif origin in (Union, UnionType):
            branch = _branch(get_args(current), step)
            if branch is None:
                path.extend(loc[position:])
                return path, None, keys
            current = branch
        elif origin in (list, tuple) and isinstance(step, int):
            path.append(step)
            current = get_args(current)[0]
        elif origin is dict and isinstance(step, str):
            path.append(step)
            current = get_args(current)[1]
        else:
            path.append(step)
            current = None
        position += 1
    return path, current, keys


def _bare(annotation: Any) -> Any:
    """`annotation` without `Annotated[...]` and without `| None` (the walk is the same)."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
            continue
        if get_origin(annotation) in (Union, UnionType):
            others = [arg for arg in get_args(annotation) if arg is not NoneType]
            if len(others) == 1:
                annotation = others[0]
                continue
        return annotation


def _with_metadata(annotation: Any, metadata: list[Any]) -> Any:
    return Annotated[(annotation, *metadata)] if metadata else annotation


def _branch(members: tuple[Any, ...], tag: str | int) -> Any:
    """The member of a tagged union whose tag (a `Literal` value of any of its fields, or
    its class name) is `tag`."""
    for member in members:
        bare = _bare(member)
        if not (isinstance(bare, type) and issubclass(bare, BaseModel)):
            continue
        if bare.__name__ == tag:
            return bare
        for info in bare.model_fields.values():
            if get_origin(info.annotation) is Literal and tag in get_args(info.annotation):
                return bare
    return None


def _tags(annotation: Any, discriminator: str) -> list[object]:
    """The values `discriminator` takes across the members of a tagged union."""
    tags: list[object] = []
    for member in get_args(_bare(annotation)):
        bare = _bare(member)
        if isinstance(bare, type) and issubclass(bare, BaseModel):
            info = bare.model_fields.get(discriminator)
            if info is not None and get_origin(info.annotation) is Literal:
                tags.extend(get_args(info.annotation))
    return tags


def _expected(annotation: Any) -> str:
    """What a value of `annotation` is, in words: `an integer`, `"sync" or "async"`."""
    if annotation is None:
        return "a valid value"
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        for item in metadata:
            if isinstance(item, Expect | Matching):
                return item if isinstance(item, Expect) else item.expected
        if NotNull in metadata:  # may be left out, never null: say what it is when given
            base = _bare(base)
        return _expected(base)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, UnionType):
        others = [arg for arg in args if arg is not NoneType]
        words = " or ".join(_expected(arg) for arg in others)
        return words + (" or null" if len(others) < len(args) else "")
    if origin is Literal:
        choices = [shown(arg) for arg in args]
        return choices[0] if len(choices) == 1 else "one of " + ", ".join(choices)
    if origin in (list, tuple):
        item = _bare(args[0]) if args else None
        return f"a list of {_plural(item)}" if item is not None else "a list"
    if origin is dict:
        return f"an object of {_plural(args[1])}"
    if annotation is JsonValue:
        return "a JSON value"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "an object"
    return _SINGULAR.get(annotation, "a valid value")


_SINGULAR: dict[Any, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
}


def _plural(annotation: Any) -> str:
    annotation = get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation
    if get_origin(annotation) in (Union, UnionType):
        return " or ".join(_plural(arg) for arg in get_args(annotation))
    if annotation is NoneType:
        return "nulls"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "objects"
    if annotation is JsonValue:
        return "JSON values"
    return _PLURAL.get(cast(object, annotation), "values")


_PLURAL: dict[object, str] = {str: "strings", int: "integers", float: "numbers", bool: "booleans"}
