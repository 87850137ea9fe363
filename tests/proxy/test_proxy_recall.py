"""`capy proxy --inject-recall BUDGET`: the upstream gets a recall brief from the project's
capsules just before the user's last message, within the budget, only when something is
relevant; the brief is never recorded."""

from __future__ import annotations

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.recall.brief import estimate_tokens
from tests.proxy.conftest import client

DECISION = (
    "We pinned sqlcipher3-binary below 0.6 because 0.6 dropped the wheels for musl; "
    "the Alpine CI image failed to build without them."
)


def _remember(project) -> None:
    from capy.capsules.pipeline.worker import Worker

    with open_capsules(project_dir=project) as store:
        store.write([CapsuleDraft(kind="decision", content=DECISION, source="cli")])
        Worker(store).drain()


def test_a_relevant_brief_goes_before_the_last_user_message(upstream, start_proxy, warm_project):
    _remember(warm_project)
    url, seen = upstream
    proxy = start_proxy(url, "--inject-recall", "300")
    messages = [
        {"role": "system", "content": "You help with packaging."},
        {"role": "user", "content": "Why is sqlcipher3-binary pinned below 0.6 for musl?"},
    ]
    client(proxy).chat.completions.create(model="json", messages=messages)
    sent = seen[0]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "user"]
    assert sent[0] == messages[0] and sent[2] == messages[1]
    brief = sent[1]["content"]
    assert brief.startswith("## Recalled for") and "musl" in brief
    assert estimate_tokens(brief, 3.5) <= 300
    assert proxy.stop()
    with open_capsules(project_dir=warm_project) as store:
        recorded = [c.content for _, c in store.backend.scan() if c.source == "proxy"]
    assert not any("Recalled for" in text for text in recorded)
    assert messages[1]["content"] in recorded


def test_nothing_relevant_leaves_the_request_as_it_came(upstream, start_proxy, warm_project):
    _remember(warm_project)
    url, seen = upstream
    proxy = start_proxy(url, "--inject-recall", "300")
    messages = [{"role": "user", "content": "Translate 'good morning' into Welsh."}]
    client(proxy).chat.completions.create(model="json", messages=messages)
    assert seen[0]["body"] == {"model": "json", "messages": messages}
