"""`capy execute --timeout` takes what the MCP tools' `timeout` takes, and says so otherwise:
a value outside (0, the executor pack's ceiling] used to run with another timeout, silently."""

from __future__ import annotations

import pytest

from capy.cli import main


@pytest.mark.parametrize("timeout", ["-1", "0", "9999"])
def test_a_timeout_outside_the_range_is_one_clear_error(project_dir, capsys, timeout) -> None:
    assert main(["execute", "--timeout", timeout, "sh", "echo ran"]) == 2
    out, err = capsys.readouterr()
    assert "ran" not in out
    assert err.strip() == (
        f"capy: --timeout must be more than 0 and at most 600 seconds, not {float(timeout):g}; "
        "leave it out for the default of 30"
    )


def test_a_timeout_in_the_range_runs(project_dir, capsys) -> None:
    assert main(["execute", "--timeout", "600", "sh", "echo ran"]) == 0
    assert "ran" in capsys.readouterr().out
