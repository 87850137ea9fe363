"""Whatever an overlay holds, building the rule set reports diagnostics; it never raises."""

from __future__ import annotations

from io import StringIO

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from capy.rules import build_ruleset

PACKS = sorted(build_ruleset().packs)
scalars = st.one_of(
    st.integers(-5, 10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, width=32),
    st.sampled_from(["(unclosed", "ok", "chunking.detect-diff", ".*", "", "active", "0.1.0"]),
    st.text(max_size=12),
)
keys = st.one_of(
    st.sampled_from(
        [
            "id",
            "status",
            "since",
            "kind",
            "pattern",
            "examples",
            "match",
            "no_match",
            "max_chunk_bytes",
            "rules",
            "detectors",
            "keywords",
            "ref",
            "description",
        ]
    ),
    st.text(min_size=1, max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=15,
)
overlays = st.fixed_dictionaries(
    {
        "pack": st.sampled_from(["fuzz", "fuzz-b", *PACKS]),
        "schema": st.sampled_from(["overlay.v1", "secrets.v1", "nope.v1"]),
        "version": st.sampled_from(["1.0.0", "1.0", 1]),
        "description": st.just("A fuzzed overlay that may be broken in any way."),
        "requires": st.sampled_from([">=0.1", ">=99", "not a spec", 3]),
        "extends": st.sampled_from([*PACKS, "fuzz", "missing"]),
    },
    optional={"patch": st.dictionaries(keys, values, max_size=4), "disable": values},
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents=st.lists(overlays, min_size=1, max_size=3))
def test_arbitrary_overlays_never_crash_the_engine(tmp_path_factory, documents):
    folder = tmp_path_factory.mktemp("fuzz")
    paths = []
    for index, document in enumerate(documents):
        buffer = StringIO()
        YAML(typ="safe", pure=True).dump(document, buffer)
        path = folder / f"{index}.yaml"
        path.write_text(buffer.getvalue(), encoding="utf-8")
        paths.append((path, "path"))
    ruleset = build_ruleset(paths, examples=True)
    for item in ruleset.diagnostics:
        assert item.line >= 1 and item.column >= 1 and item.message
        item.render()
