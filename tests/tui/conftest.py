from __future__ import annotations

from pathlib import Path

import pytest
import pytest_textual_snapshot

from tests.tui.agent_project import AgentProject, copy_agent, record_agent
from tests.tui.support import Project, copy_project, record_incident


@pytest.fixture(scope="session")
def recorded_incident(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return record_incident(tmp_path_factory.mktemp("incident"))


@pytest.fixture
def project(recorded_incident: Project, tmp_path: Path) -> Project:
    """The incident application and its trace, in this test's own folder."""
    return copy_project(recorded_incident, tmp_path)


@pytest.fixture(scope="session")
def recorded_agent(tmp_path_factory: pytest.TempPathFactory) -> AgentProject:
    return record_agent(tmp_path_factory.mktemp("agent"))


@pytest.fixture
def agent(recorded_agent: AgentProject, tmp_path: Path) -> AgentProject:
    """The bundled Agents SDK example's trace, in this test's own folder."""
    return copy_agent(recorded_agent, tmp_path)


# pytest-textual-snapshot 1.0 names its extension with `_file_extension`, which
# syrupy 7 no longer reads (it would store `.raw` files): keep the pictures `.svg`.
pytest_textual_snapshot.SVGImageExtension.file_extension = "svg"  # type: ignore[attr-defined]
