"""The picker of `toolreplay tui s3://bucket/prefix`: the search's rows over a bucket
(a real S3 API on loopback), and the chosen trace fetched into the local cache."""

from __future__ import annotations

from pathlib import Path

import obstore
import pytest
from obstore.store import from_url
from toolreplay_tui.screens.picker import TracePickerApp, TracePickerScreen

import toolreplay
from tests.support.s3_server import running_s3_server, s3_environment
from tests.tui.pilot import SIZE, pilot_test, wait_for
from tests.tui.test_picker import capture_folder, picker, table_rows
from toolreplay.objectstore.cache import fetched_trace


@pilot_test
async def test_the_picker_lists_a_bucket_prefix_and_opens_the_chosen_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = capture_folder(tmp_path / "traces")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with running_s3_server() as server:
        server.create_bucket("traces")
        for name, value in s3_environment(server).items():
            monkeypatch.setenv(name, value)
        store = from_url("s3://traces")
        for path in folder.rglob("*.trp"):
            obstore.put(store, f"refunds/{path.relative_to(folder).as_posix()}", path.read_bytes())
        app = TracePickerApp("s3://traces/refunds")
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(
                pilot, lambda: isinstance(app.screen, TracePickerScreen) and app.screen.rows
            )
            screen = picker(pilot)
            rows = table_rows(screen)
            assert [row[1] for row in rows] == [
                "request_id=r-3 route=/refund",
                "request_id=r-2 route=/refund",
                "request_id=r-1 route=/refund",
            ]
            assert "Traces in s3://traces/refunds: 3 traces" in str(screen.header.render())
            await pilot.press("down", "enter")
        chosen = app.return_value
        assert isinstance(chosen, str)
        assert chosen.startswith("s3://traces/refunds/")
        local = fetched_trace(chosen)
    assert local.is_relative_to(tmp_path / "cache" / "toolreplay" / "objects")
    assert toolreplay.read_trace(local).header.metadata["request_id"] == "r-2"
