"""Generated files are committed and byte-stable; a drift fails with the command to regenerate."""

from __future__ import annotations

import json
from pathlib import Path

from capy.cli import main
from capy.rules import build_ruleset
from capy.rules.docs import render_rules_doc
from capy.rules.generate import common_schema_path, common_schema_text
from capy.rules.matchers import MATCHERS

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_rules_doc_is_up_to_date():
    committed = (REPO_ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_rules_doc(build_ruleset()), "run `capy rules docs` and commit"


def test_rules_doc_is_byte_stable():
    assert render_rules_doc(build_ruleset()) == render_rules_doc(build_ruleset())


def test_matcher_kind_enum_follows_the_registry():
    assert common_schema_path().read_text(encoding="utf-8") == common_schema_text()
    schema = json.loads(common_schema_text())
    assert schema["$defs"]["matcher_kind"]["enum"] == sorted(MATCHERS)


def test_docs_check_fails_on_drift_with_the_command_to_run(project_dir, capsys):
    stale = project_dir / "rules.md"
    stale.write_text("# out of date\n", encoding="utf-8")
    assert main(["rules", "docs", "--check", "--output", str(stale)]) == 1
    assert "run `capy rules docs`" in capsys.readouterr().err
    assert main(["rules", "docs", "--output", str(stale)]) == 0
    assert main(["rules", "docs", "--check", "--output", str(stale)]) == 0


def test_the_general_english_word_list_follows_its_tokenizer():
    # Shipped so that no process stems the vocabulary on its first intent; `capy rules gen`
    # writes it, and a changed tokenizer or stemmer must be followed by a regenerated list.
    from capy.api.intent_specific import general_words_path, general_words_text

    model = build_ruleset().view("search").intents.specific.vocabulary_model
    assert general_words_path(model).read_text(encoding="utf-8") == general_words_text(model)
