"""`toolreplay scan` over a folder where some files cannot be read: each file on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECRET = "AKIAIOSFODNN7EXAMPLE"  # the aws-access-key-id rule's documented example


def scan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", "scan", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe (os.mkfifo)")
def test_a_file_that_cannot_be_read_is_skipped_and_the_others_still_scanned(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "leaky.json").write_text(json.dumps({"key": SECRET}))
    # Nested past any JSON decoder: scanned as text, the secret inside still found.
    deep = "[" * 100_000 + json.dumps(SECRET) + "]" * 100_000
    (folder / "deep.json").write_text(deep)
    os.mkfifo(folder / "pipe.json")  # a reader of it would wait forever: refused unread
    reason = "is not a regular file (a pipe or a device?), not a scanned file"

    text = scan(str(folder))
    assert "Traceback" not in text.stderr
    assert text.stderr == f"skipped: {folder / 'pipe.json'}: {reason}\n"
    assert f"{folder / 'deep.json'}:1: text at $: aws-access-key-id" in text.stdout
    assert f"{folder / 'leaky.json'}: value at $.key: aws-access-key-id" in text.stdout
    assert text.returncode == 1
    assert SECRET not in text.stdout + text.stderr

    as_json = scan(str(folder), "--format", "json")
    document = json.loads(as_json.stdout)
    assert document["files_scanned"] == 2
    assert document["skipped"] == [{"path": str(folder / "pipe.json"), "reason": reason}]
    assert len(document["findings"]) == 2

    # No finding, but a file was skipped: "no secrets" is not certain, so not 0.
    (folder / "leaky.json").unlink()
    (folder / "deep.json").unlink()
    nothing = scan(str(folder))
    assert nothing.returncode == 3, nothing.stdout + nothing.stderr
    assert nothing.stdout == "no secrets found in 0 file(s)\n"
    (folder / "pipe.json").unlink()
    clean = scan(str(folder))
    assert (clean.returncode, clean.stderr) == (0, "")


def test_a_path_that_does_not_exist_is_refused_before_anything_is_scanned(
    tmp_path: Path,
) -> None:
    (tmp_path / "leaky.json").write_text(json.dumps({"key": SECRET}))
    refused = scan(str(tmp_path / "leaky.json"), str(tmp_path / "missing.trp"))
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert "missing.trp: no such file or folder to scan" in refused.stderr
