"""Semantic search: off (no extra, or no model) or on with the model id; one line either way.
Off is not a problem: capy searches lexically exactly as without the layer."""

from __future__ import annotations

from capy.doctor.context import DoctorContext
from capy.doctor.report import Check, Status

GROUP = "Environment"
NAME = "semantic search"


def semantic_search(ctx: DoctorContext) -> list[Check]:
    from capy.rules import load_rules
    from capy.semantic.service import doctor_line

    _, detail = doctor_line(ctx.ruleset or load_rules())
    return [Check(GROUP, NAME, Status.OK, detail)]
