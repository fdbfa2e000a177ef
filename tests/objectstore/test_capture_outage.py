"""The store goes away mid-run and comes back: nothing acknowledged is lost, the
application's answers do not change, and the outage is one log line."""

from __future__ import annotations

from pathlib import Path

from tests.support.capture_service import (
    Service,
    capture_log_lines,
    name_of,
    service_environment,
    spooled,
    wait_for,
)
from tests.support.s3_server import running_s3_server

BUCKET = "traces"


def answers(lines: list[dict[str, object]]) -> dict[object, object]:
    return {line["id"]: line.get("result", line.get("error")) for line in lines}


def test_a_store_outage_loses_nothing_acknowledged_and_logs_one_line(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    with running_s3_server() as server:
        server.create_bucket(BUCKET)
        env = service_environment(
            server, f"s3://{BUCKET}/outage", spool, TOOLREPLAY_CAPTURE_SPOOL_BYTES="24K"
        )
        service = Service(env, threads=4)

        def in_bucket() -> set[str]:
            return {name_of(key) for key in server.objects(BUCKET)}

        service.run(20)
        wait_for(lambda: in_bucket() == service.kept, "the uploads before the outage")

        server.stop()
        during = service.run(80)
        spool_full = [line for line in during if line["skipped"] == "spool full"]
        assert spool_full  # the spool filled to its bound, then capture stepped aside
        assert any(line["kept"] for line in during)  # until then, traces were acknowledged
        sizes = [path.stat().st_size for path in spooled(spool)]
        # The bound, plus the requests already admitted when it was reached (4 threads).
        assert 24 * 1024 <= sum(sizes) <= 24 * 1024 + 4 * max(sizes)

        server.start()
        wait_for(lambda: in_bucket() == service.kept, "the uploads after the outage")
        after = service.run(20)
        assert all(line["kept"] for line in after)  # capture resumed by itself
        wait_for(lambda: in_bucket() == service.kept, "the uploads after resuming")

        # A second outage is a new one: one more line, and again nothing lost.
        server.stop()
        again = service.run(80)
        assert any(line["skipped"] == "spool full" for line in again)
        server.start()
        wait_for(lambda: in_bucket() == service.kept, "the uploads after the second outage")
        _, stderr = service.exit()

    assert not spooled(spool)
    logged = capture_log_lines(stderr)
    assert len(logged) == 2, logged  # one per outage, none on resuming
    for line in logged:
        assert "is full" in line
        assert f"s3://{BUCKET}/outage" in line
        assert "the last upload failed: s3://traces/outage: cannot upload the captured" in line

    # The same requests without capture give the same answers and the same errors.
    plain = Service(
        service_environment(
            None, f"s3://{BUCKET}/outage", tmp_path / "unused", TOOLREPLAY_CAPTURE_DISABLED="1"
        ),
        threads=4,
    )
    plain.run(200)
    _, plain_stderr = plain.exit()
    assert answers(plain.lines) == answers(service.lines)
    assert any("approval" in str(answer) for answer in answers(service.lines).values())
    assert not capture_log_lines(plain_stderr)
