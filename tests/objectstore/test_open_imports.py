"""A command given a local trace imports no object-store code; given a URL, it does."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli_imports import FIXTURE, imported


def test_a_local_trace_imports_no_object_store_code(tmp_path: Path) -> None:
    for argv in (["show", str(FIXTURE)], ["diff", str(FIXTURE), str(FIXTURE)]):
        loaded = imported(*argv, tmp_path=tmp_path)
        assert "obstore" not in {name.partition(".")[0] for name in loaded}
        assert sorted(name for name in loaded if name.startswith("toolreplay.objectstore")) == []


def test_a_trace_url_imports_it(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    loaded = imported("show", f"file://{FIXTURE}", env=env, tmp_path=tmp_path)
    assert {"obstore", "toolreplay.objectstore.cache"} <= loaded
