"""`capy_doctor`: the doctor's report as a tool reply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.api.reply import ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace


def doctor_reply(workspace: Workspace) -> ToolReply:
    from capy.doctor import run_doctor

    report = run_doctor(workspace.project_dir)
    return ToolReply(report.to_markdown(), data=report.to_dict())
