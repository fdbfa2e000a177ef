"""What the names a user writes may be: an effect's (`crm.customer.get`, or a method and
a route template after the namespace, `github.GET /repos/{id}/issues`, as the plain HTTP
adapter names a request: RFC 0006 §B), a promoted case's, and a runner's
`module:callable`.

Below everything that checks them: `@effect` and `toolreplay find --effect` check
effect names (without loading the trace model), the documents' models
(`toolreplay.documents`) a case's and a runner's, as do promote and the runners.
"""

from __future__ import annotations

import re

__all__ = [
    "CASE_NAME_PATTERN",
    "EFFECT_NAME_PATTERN",
    "EFFECT_NAME_RULE",
    "RUNNER_PATTERN",
    "effect_name_problem",
]

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")
# A method in capitals, one space, and a path template: no `*`, no query, no space.
_ROUTE = re.compile(r"[A-Z]+ /[A-Za-z0-9_.~:{}/-]*")
EFFECT_NAME_PATTERN = re.compile(rf"{_NAMESPACE.pattern}\.(?:{_NAME.pattern}|{_ROUTE.pattern})")
"""A whole effect name, `namespace.name` or `namespace.METHOD /route` (what a document
holds)."""
EFFECT_NAME_RULE = (
    "use letters, digits, '_' and '-', with dots between the parts of the name "
    "(crm.customer.get: namespace 'crm', name 'customer.get'), or a method and a path "
    "template after the namespace (github.GET /repos/{id})"
)


def effect_name_problem(namespace: str, name: str) -> str | None:
    """What is wrong with an effect's namespace and name, or None if they are valid."""
    if not namespace or not name:
        return "an effect needs both a namespace and a name"
    if not _NAMESPACE.fullmatch(namespace) or not (_NAME.fullmatch(name) or _ROUTE.fullmatch(name)):
        return f"{namespace}.{name} is not a valid effect name: {EFFECT_NAME_RULE}"
    return None


CASE_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
"""What a case name looks like: 1-128 letters, digits, `_`, `-` or `.`, not starting with `_-.`."""

RUNNER_PATTERN = re.compile(
    r"(?P<module>[A-Za-z_][\w.]*):(?P<attribute>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)"
)
"""What a runner spec looks like: `package.module:function` or `module:Class.method`."""
