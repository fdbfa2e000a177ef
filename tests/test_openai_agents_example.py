"""examples/openai_agents_refund.py runs offline and tells the story it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.adapters.real_clients import needs_openai_3
from tests.support.offline import offline_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "openai_agents_refund.py"

pytestmark = needs_openai_3


def test_the_agent_is_captured_replayed_forked_and_promoted_offline(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=tmp_path,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("recorded:  {'order': 8812, 'billing': 'issued'")
    assert lines[0].endswith("(2 model requests)")
    assert [line.strip() for line in lines[1:5]] == [
        "#0 openai.responses.create",
        "#1 shop.order.lookup",
        "#2 openai.responses.create",
        "#3 billing.refund.issue",
    ]
    assert lines[5].endswith("(0 requests sent)")
    assert "'billing': 'issued'" in lines[5]
    assert "'billing': 'held_for_review'" in lines[6]
    assert "'customer_told': 'Your refund is in review.'" in lines[6]
    assert lines[6].endswith("(0 requests sent)")
    assert lines[7].startswith("diff:      output_changed at billing.refund.issue occurrence 0")
    assert lines[8].strip() == '$.output.status: source "issued", target "held_for_review"'
    # The what-if on the lookup's answer: asked live, exactly the one new request...
    assert lines[9].startswith("live:      {'order': 8812, 'billing': 'issued'")
    assert lines[9].endswith("(1 model request sent, 1 kept as live)")
    # ...and answered offline with reply(...), nothing sent.
    assert lines[10].startswith("offline:   {'order': 8812, 'billing': 'issued'")
    assert lines[10].endswith("(0 requests sent)")
    assert lines[11] == "diff:      input_changed at $.inputs.body.input[2].output"
    # Every branch is a case, and pytest passes them (cases replay with the network blocked).
    assert lines[12].startswith(
        "promoted:  cheaper_order_answered_offline, cheaper_order_asked_live, "
        "large_refund_is_held; pytest: 3 passed"
    )
    assert list(tmp_path.iterdir()) == []  # everything went to a temporary folder
