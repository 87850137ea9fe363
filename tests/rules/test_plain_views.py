"""Plain views (no pydantic, for warm CLI starts) hold the same values as pydantic's, for every
shipped pack: a fresh process builds them from the cached packs and prints every field; this
process builds the pydantic ones and compares."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from enum import Enum
from typing import Any

import pytest

from capy.rules import build_ruleset
from capy.rules.views import plain
from capy.rules.views.base import BaseModel

# A fresh interpreter: plain models must be chosen before any view module is imported. It runs
# `dump` below (its source), so both sides are dumped by the same code.
PLAIN_PRELUDE = """
import json
from enum import Enum
from typing import Any
from capy.rules.views import plain
assert plain.enable()
from capy.rules import build_ruleset
"""
PLAIN_BODY = """
ruleset = build_ruleset()
print(json.dumps({name: dump(ruleset.view(name)) for name in sorted(ruleset.packs)}))
"""


def dump(value: Any) -> Any:
    """Every field, recursively, with its Python type: 2 and 2.0 or a tuple and a list differ."""
    kind = type(value)
    if hasattr(kind, "model_validate"):
        plain_fields = getattr(kind, "_plain_fields", None)
        names = [spec.name for spec in plain_fields()] if plain_fields else list(kind.model_fields)
        return {"@": kind.__name__, **{n: dump(getattr(value, n)) for n in names}}
    if isinstance(value, Enum):
        return ["enum", type(value).__name__, value.value]
    if isinstance(value, dict):
        return ["dict", [[dump(k), dump(v)] for k, v in value.items()]]
    if isinstance(value, tuple | list):
        return [type(value).__name__, [dump(item) for item in value]]
    if isinstance(value, frozenset | set):
        return [type(value).__name__, sorted(json.dumps(dump(item)) for item in value)]
    return [type(value).__name__, value]


def test_pydantic_is_the_default_here():
    assert not plain.enabled()
    assert BaseModel.__module__.startswith("pydantic")


def test_every_shipped_view_is_the_same_without_pydantic():
    ruleset = build_ruleset()
    expected = {name: dump(ruleset.view(name)) for name in sorted(ruleset.packs)}
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_PRELUDE + inspect.getsource(dump) + PLAIN_BODY],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(done.stdout)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], name


def test_enabling_after_a_view_was_imported_is_refused():
    # This process imported the pydantic views already: mixing the two kinds is never allowed.
    assert plain.enable() is False
    assert not plain.enabled()


def test_a_failing_view_validator_still_fails():
    class Band(plain.BaseModel):
        low: int
        high: int

        @plain.model_validator(mode="after")
        def _ordered(self) -> Band:
            if self.low > self.high:
                raise ValueError("low above high")
            return self

    assert Band.model_validate({"low": 1, "high": 2}).high == 2
    with pytest.raises(ValueError, match="low above high"):
        Band.model_validate({"low": 3, "high": 2})
    with pytest.raises(TypeError, match="frozen"):
        Band.model_validate({"low": 1, "high": 2}).low = 5  # type: ignore[misc]


@pytest.mark.parametrize("text", sorted(plain._BUILTIN_SCALARS))
def test_a_converter_known_from_its_text_is_the_evaluated_ones(text: str) -> None:
    """The converters taken from an annotation's text convert as those built from the
    evaluated annotation do."""
    from_text = plain._BUILTIN_SCALARS[text]
    evaluated = plain._build_converter(eval(text))  # builtins only: nothing else to resolve
    samples = [None, 0, 3, 2.5, True, "x", ("a", "b"), ["a", "a"], frozenset({"a"})]
    for sample in samples:
        expected = _outcome(evaluated, sample)
        assert _outcome(from_text, sample) == expected, (text, sample)


def _outcome(convert: Any, value: Any) -> tuple[str, Any]:
    try:
        result = convert(value)
    except TypeError as error:
        return "error", type(error).__name__
    return type(result).__name__, result
