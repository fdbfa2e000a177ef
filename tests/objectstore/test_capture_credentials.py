"""Credentials in the environment or a profile never reach a trace, the spool, the
bucket, or anything the process prints or logs, outage included."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.capture_service import (
    Service,
    capture_log_lines,
    name_of,
    service_environment,
    wait_for,
)
from tests.support.s3_server import running_s3_server

BUCKET = "traces"
SECRET = "canarySecretKey0000000000000000000000000"
TOKEN = "canarySessionToken1111111111111111111111"
PROFILE_SECRET = "canaryProfileSecret222222222222222222222"
CANARIES = (SECRET, TOKEN, PROFILE_SECRET)


def from_environment(tmp_path: Path) -> dict[str, str]:
    return {"AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": TOKEN}


def from_profile(tmp_path: Path) -> dict[str, str]:
    credentials = tmp_path / "credentials"
    credentials.write_text(
        "[canary]\naws_access_key_id = canary-profile-key\n"
        f"aws_secret_access_key = {PROFILE_SECRET}\n"
    )
    return {"AWS_SHARED_CREDENTIALS_FILE": str(credentials), "AWS_PROFILE": "canary"}


@pytest.mark.parametrize("credentials", [from_environment, from_profile], ids=["env", "profile"])
def test_no_canary_reaches_the_bucket_the_spool_or_the_output(
    tmp_path: Path, credentials: Callable[[Path], dict[str, str]]
) -> None:
    spool = tmp_path / "spool"
    with running_s3_server() as server:
        server.create_bucket(BUCKET)
        # Room for the first ten traces (about 0.9 KB each) before any is uploaded, so
        # the uploader's pace decides nothing; the forty of the outage fill it.
        env = service_environment(
            server, f"s3://{BUCKET}/canary", spool, TOOLREPLAY_CAPTURE_SPOOL_BYTES="16K"
        )
        if credentials is from_profile:
            del env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
        env.update(credentials(tmp_path))
        service = Service(env, threads=4)
        service.run(10)
        wait_for(lambda: len(server.objects(BUCKET)) == len(service.kept), "the uploads")
        server.stop()  # an outage, so that the failure is logged too
        service.run(40)
        stdout, stderr = service.exit()  # the exit drain fails too
        server.start()
        objects = server.objects(BUCKET)

    assert {name_of(key) for key in objects} <= service.kept
    assert len(objects) >= 10
    assert len(capture_log_lines(stderr)) == 1  # the outage was logged: its text is checked
    spool_bytes = [path.read_bytes() for path in spool.rglob("*") if path.is_file()]
    assert len(spool_bytes) > 1
    for canary in CANARIES:
        needle = canary.encode()
        assert needle not in stdout.encode()
        assert needle not in stderr.encode()
        assert all(needle not in data for data in objects.values())
        assert all(needle not in data for data in spool_bytes)
        assert all(needle not in key.encode() for key in objects)
