"""An answer deep inside a record of a key-value report is shown with the line naming the record
(issue #17, failure class 1: the record that ranked lost its identifying field).

`openssl x509 -text` prints certificate after certificate; "which certificate has an elliptic
curve key" is answered by `NIST CURVE: P-384`, a dozen lines below the `Subject:` line that
says which certificate it is, past any context the reply shows. A real captured output of the
niah-real set's dev half, asked through `capy_execute`'s library call.
"""

from __future__ import annotations

import re

import pytest

from capy.api.record_identity import record_identities
from capy.rules import load_rules
from tests.niah_real_helpers import ask, dev_intent


def _identity() -> tuple[re.Pattern[str], int]:
    reply = load_rules().view("executor").limits.output.intent_reply
    assert reply.record_identity is not None
    return re.compile(reply.record_identity), reply.record_identity_reach


@pytest.mark.parametrize(
    "intent_id",
    [
        "openssl-ca-certs-02",  # the curve, a dozen lines under the certificate's Subject:
        # The same `Signature Algorithm: sha1WithRSAEncryption` line in two certificates:
        # the second is another answer, not a repeat of the first.
        "openssl-ca-certs-03",
    ],
)
def test_the_certificate_holding_the_answer_is_named_in_the_reply(project_dir, intent_id):
    text, intent = ask(project_dir, intent_id, "positive")
    assert all(needle in text for needle in intent.needles), text


def test_each_indented_line_of_a_certificate_is_named_by_its_own_subject():
    output, _ = dev_intent("openssl-ca-certs-02")
    lines = output.path.read_text(encoding="utf-8").split("\n")
    pattern, reach = _identity()
    curve = next(n for n, line in enumerate(lines) if "NIST CURVE" in line)
    named = record_identities(lines, curve - 30, curve, pattern, reach)
    assert "CN=AC RAIZ FNMT-RCM SERVIDORES SEGUROS" in lines[named[curve]]
    assert lines[named[curve]].strip().startswith("Subject:")
    # The lines of the certificate above it are named by that one's subject, not this one's.
    before = next(n for n in range(curve - 30, curve) if n in named)
    assert named[before] < named[curve]


def test_records_at_the_margin_end_at_a_blank_line():
    lines = ["Package: zlib1g", "Status: install ok", "", "Package: tar", "Version: 1.34"]
    pattern, reach = _identity()
    assert record_identities(lines, 0, len(lines) - 1, pattern, reach) == {1: 0, 4: 3}
