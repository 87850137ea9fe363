"""The doctor's semantic-search line in the state this machine is in: off, with the install
command, where the extra is missing; on, naming the pinned model, where it is installed."""

from __future__ import annotations

from capy.doctor import Status, run_doctor
from capy.rules import load_rules
from capy.semantic import extra_installed


def test_semantic_line_says_on_with_the_model_or_off_with_the_install_command(doctor_home):
    check = next(c for c in run_doctor(doctor_home.project).checks if c.name == "semantic search")
    assert check.status is Status.OK  # off is not a problem: search stays lexical
    if extra_installed():
        model = load_rules().view("semantic").model()
        assert check.detail.startswith((f"on, model {model.model_id}", "off: "))
    else:
        assert check.detail == (
            "off (the semantic extra is not installed: pip install 'capy-mcp[semantic]')"
        )
