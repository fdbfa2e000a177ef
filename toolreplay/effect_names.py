"""What an effect's name may be: a namespace and a dotted name (`crm.customer.get`), or a
namespace and an HTTP route (`github.GET /repos/{id}/issues`, as the plain HTTP adapter
names a request: RFC 0006 §B).

Its own module because `toolreplay find` checks `--effect` against the rule without
loading the trace model.
"""

from __future__ import annotations

import re

__all__ = ["EFFECT_NAME_PATTERN", "EFFECT_NAME_RULE", "effect_name_problem"]

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
