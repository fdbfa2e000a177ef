"""The layers of rfcs/README.md where `lint-imports` cannot see: it leaves out imports
under `if TYPE_CHECKING:` (they name types, and nothing runs), but `errors.py` is a leaf
even for the type checker, so that any module can raise its errors."""

from __future__ import annotations

import grimp


def test_errors_imports_nothing_of_toolreplay_not_even_for_types() -> None:
    graph = grimp.build_graph("toolreplay", exclude_type_checking_imports=False, cache_dir=None)
    assert graph.find_modules_directly_imported_by("toolreplay.errors") == set()
