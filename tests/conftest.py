from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support import crm
from tests.support.case_app import App


@pytest.fixture(autouse=True)
def _reset_body_calls() -> Iterator[None]:
    crm.BODY_CALLS.clear()
    yield
    crm.BODY_CALLS.clear()


# Hypothesis keeps no example database: tests write nowhere but their tmp_path.
settings.register_profile("toolreplay", database=None, deadline=None)
settings.load_profile("toolreplay")

# tests/cases/ is where the README's walk (and `toolreplay promote`) put the cases a
# user promotes in this checkout: theirs, not this suite's, so a plain run leaves them
# out. `uv run pytest tests/cases/<name>` runs one by name (git ignores the folder too).
collect_ignore = ["cases"]


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> App:
    """A throwaway application module for promoted-case tests (`tests/support/case_app.py`)."""
    folder = tmp_path / "app"
    folder.mkdir()
    return App(folder, monkeypatch)
