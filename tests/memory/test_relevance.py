"""Which records a prompt brings back: enough stems shared with what a record says, or the task
it was learned in asked for again; one weak word of each is not enough."""

from __future__ import annotations

import os

from memory_helpers import prompt

from capy.memory import learn
from capy.memory.digest import PROMPT, read_digest
from capy.memory.inject import part_records, relevant
from capy.memory.prompt_index import prompt_part

NOW = 1_777_939_200.0  # 2026-05-05


def _digest(store, project) -> dict:
    """The digest's prompt part, as UserPromptSubmit reads it."""
    [path] = learn(store, now=NOW).digests
    return read_digest(os.path.dirname(os.path.dirname(path)), str(project), PROMPT)


def _asked_then_said(session: str, task: str, sentence: str) -> list:
    """A task asked for on May 2nd, then the user's sentence about how to do it."""
    return [
        prompt(session, task, "2026-05-02T10:00:00Z"),
        prompt(session, sentence, "2026-05-02T10:00:01Z"),
    ]


def _failed_then_fixed(session: str, task: str, failed: tuple[str, str], fixed: tuple[str, str]):
    """A task asked for on May 1st, a command that failed and the one that worked after it."""
    from memory_helpers import call

    return [
        prompt(session, task, "2026-05-01T10:00:00Z"),
        call(session, *failed, "2026-05-01T10:00:01Z", failed=True),
        call(session, *fixed, "2026-05-01T10:00:02Z"),
    ]


def _texts(digest: dict, said: str) -> list[str]:
    return [record["text"] for record in relevant(digest, said)]


def test_a_record_needs_its_own_stems_or_its_task_again(store, project):
    store.write(
        [
            prompt("s1", "the users table needs the new column", "2026-05-01T10:00:00Z"),
            prompt(
                "s1",
                "Don't run migrations on main, create a branch database with `make db-branch`.",
                "2026-05-01T10:00:01Z",
            ),
            prompt("s2", "release the parser crate", "2026-05-02T10:00:00Z"),
            prompt(
                "s2",
                "I told you to always do `cargo publish --dry-run` first, let me publish myself.",
                "2026-05-02T10:00:01Z",
            ),
        ]
    )
    digest = _digest(store, project)
    migrations, publish = (
        "Don't run migrations on main, create a branch database with `make db-branch`.",
        "I told you to always do `cargo publish --dry-run` first, let me publish myself.",
    )
    assert _texts(digest, "run the migrations on main") == [migrations]
    # The same task again: two of the task's three stems, none of the record's own words.
    assert _texts(digest, "release the lexer crate") == [publish]
    # "make" (the record's own `make`) and "table" (its task's): one weak hint of each.
    assert _texts(digest, "make the table rows clickable") == []


def test_the_prompt_part_holds_the_gated_records_and_their_idf(store, project):
    import math

    from memory_helpers import push_episode

    store.write(push_episode("s1", 1))
    publish = "I told you to always do `cargo publish --dry-run` first, let me publish myself."
    store.write(_asked_then_said("s2", "release the parser crate", publish))
    [path] = learn(store, now=NOW).digests
    data_dir = os.path.dirname(os.path.dirname(path))
    full = read_digest(data_dir, str(project))
    part = read_digest(data_dir, str(project), PROMPT)
    made = prompt_part(full)
    assert part_records(part) == part_records(made) and "wrappers" not in part
    assert {**part, "records": None} == {**made, "records": None}
    gated = [
        item for item in full["records"] if item["confidence"] >= full["prompt"]["min_confidence"]
    ]
    assert [item["id"] for item in part_records(part)] == [item["id"] for item in gated]
    for line in part["postings"].strip("\n").split("\n"):
        term, *ids = line.split()
        holders = [str(i) for i, item in enumerate(gated) if term in item["terms"]]
        assert ids == holders
        count = len(ids)
        idf = math.log(1 + (len(gated) - count + 0.5) / (count + 0.5))
        assert part["idf_by_count"][count] == idf
    assert [item["text"] for item in relevant(part, "publish the parser crate")] == [
        "I told you to always do `cargo publish --dry-run` first, let me publish myself."
    ]


def test_a_principle_and_its_central_member_take_one_slot(store, project):
    from capy.memory.inject import prompt_text

    said = [
        "Always run the pytest suite with -x before you commit.",
        "Please always run the pytest suite with -x -q when checking a pull request.",
        "From now on, run the pytest suite with -x first.",
    ]
    store.write(
        [prompt(f"s{day}", text, f"2026-05-0{day}T10:00:00Z") for day, text in enumerate(said, 1)]
    )
    part = _digest(store, project)
    ranked = relevant(part, "run the pytest suite")
    texts = [record["text"] for record in ranked]
    assert len(texts) > len(set(texts))  # the principle repeats a member's sentence
    _text, shown = prompt_text(part, "run the pytest suite")
    shown_texts = [next(r["text"] for r in ranked if r["id"] == item) for item in shown]
    assert len(shown_texts) == len(set(shown_texts)) == 3
    assert next(r["type"] for r in ranked if r["id"] == shown[0]) == "principle"


def _standing_digest(store, project) -> dict:
    from memory_helpers import push_episode

    store.write(push_episode("s1", 1))
    signing = "From now on, sign every git commit with -S, release checks reject unsigned ones."
    store.write(_asked_then_said("s2", "tidy up the history", signing))
    return _digest(store, project)


def test_a_standing_instruction_applies_where_the_prompt_names_its_program(store, project):
    digest = _standing_digest(store, project)
    signed = [record for record in part_records(digest) if record["type"] == "preference"]
    assert [record["programs"] for record in signed] == [frozenset({"git"})]
    # git (a program a learned rule ran) and "commit" from what the preference says: relevant,
    # however much else the prompt asks.
    wanted = "amend the last git commit: its message must name the ticket, reviewer and customer"
    assert signed[0]["text"] in _texts(digest, wanted)
    # The program alone is not enough.
    assert signed[0]["text"] not in _texts(digest, "show the git log of the parser")


def test_words_no_record_holds_dilute_what_a_prompt_shares(store, project):
    from memory_helpers import push_episode

    store.write(push_episode("s1", 1))
    digest = _digest(store, project)
    assert _texts(digest, "push the login-form branch")
    # Two known words in a prompt mostly about other things: its README, badges, guide, site.
    said = "rename the branch we push to in the README badges, the contributing guide and the site"
    assert _texts(digest, said) == []


def test_a_correction_applies_wherever_the_prompt_names_the_program_it_corrected(store, project):
    from memory_helpers import call

    said = "No, use pnpm here, this repo has a pnpm-lock.yaml and npm breaks it."
    store.write(
        [
            prompt("s1", "install zod for the form validation", "2026-05-01T10:00:00Z"),
            call("s1", "npm install zod", "added 1 package in 2s", "2026-05-01T10:00:01Z"),
            prompt("s1", said, "2026-05-01T10:00:02Z"),
        ]
    )
    digest = _digest(store, project)
    [correction] = [item for item in part_records(digest) if item["text"] == said]
    assert correction["corrected"] == frozenset({"npm"})
    assert said in _texts(digest, "add lodash-es as a dependency with npm")
    assert said not in _texts(digest, "add lodash-es as a dependency")


def test_a_standing_instruction_applies_where_the_prompt_implies_its_program(store, project):
    diff_first = "From now on, run kubectl diff before any kubectl apply so I can see the change."
    never_delete = "Do not run `kubectl delete namespace` on any cluster, it takes everything down."
    store.write(
        [
            *_failed_then_fixed(
                "s1",
                "deploy the search image to staging",
                ("kubectl rollout status deploy/search", "error: exceeded its progress deadline"),
                ("kubectl rollout restart deploy/search", "deployment.apps/search restarted"),
            ),
            *_asked_then_said("s2", "clean up the old preview", never_delete),
            prompt("s3", diff_first, "2026-05-03T10:00:00Z"),
        ]
    )
    digest = _digest(store, project)
    # "cluster" was learned beside kubectl by another record, and the preference pairs "apply"
    # with kubectl: the prompt asks for `kubectl apply` without naming it.
    assert diff_first in _texts(digest, "apply the updated configmap to the cluster")
    # The program implied, but not the action the preference is about.
    assert diff_first not in _texts(digest, "list the pods in the cluster")
    # The action without the program: "apply" is also a theme, a patch, a discount.
    assert diff_first not in _texts(digest, "apply the dark theme to the settings page")


def test_a_prompt_s_synonym_of_the_action_counts_as_the_record_s_word(store, project):
    always = "Always run pytest with -x so it stops at the first failure; the suite is slow."
    store.write(
        [
            *_failed_then_fixed(
                "s1",
                "run the repository tests",
                ("pytest tests/repository", "E   KeyError: 'DATABASE_URL'"),
                ("DATABASE_URL=sqlite:///test.db pytest tests/repository", "12 passed"),
            ),
            prompt("s2", always, "2026-05-02T10:00:00Z"),
        ]
    )
    digest = _digest(store, project)
    # "rerun" and "kick off" are "run" (memory pack `synonyms`), a word of what it says.
    assert always in _texts(digest, "rerun pytest on the integration folder")
    assert always in _texts(digest, "kick off pytest for the billing module")
    # The program alone is still not enough.
    assert always not in _texts(digest, "explain the pytest fixture in conftest.py")


def test_a_task_asked_again_shares_more_than_the_program_it_used(store, project):
    lint = "lint the go code"
    store.write(
        [
            *_failed_then_fixed(
                "s1",
                lint,
                ("golangci-lint run ./...", 'level=error msg="Timeout exceeded"'),
                ("golangci-lint run --timeout 5m ./...", "0 issues."),
            ),
            # A rule that ran `go` itself: go is a program memory knows.
            *_failed_then_fixed(
                "s2",
                "build the ingest service",
                ("go build ./cmd/ingest", "missing go.sum entry for module"),
                ("go mod tidy && go build ./cmd/ingest", ""),
            ),
        ]
    )
    digest = _digest(store, project)
    [golangci] = [text for text in _texts(digest, "lint the go code again") if "golangci" in text]
    # "go" names the tool, "code" is one word of the task: not the task asked for again.
    assert golangci not in _texts(digest, "count the lines of Go code in the repo")


def test_two_stems_make_a_record_relevant_unless_one_is_in_most_records(store, project):
    prefer = "I prefer uv over pip for everything in this project: uv add, uv sync, uv run."
    episodes = [
        ("build the web bundle", "npm run build", "npm ci && npm run build"),
        ("start the api binary", "cargo run --bin api", "cargo run --locked --bin api"),
        ("start the exporter", "go run ./exporter", "go mod download && go run ./exporter"),
        ("serve the site", "poetry run mkdocs serve", "poetry run mkdocs serve -a :8001"),
        ("start the worker image", "docker run worker", "docker run --platform amd64 worker"),
        ("push the login branch", "git push origin login", "git pull --rebase && git push"),
        ("lint the sources", "make lint", "make deps && make lint"),
        ("plan the network", "terraform plan", "terraform init && terraform plan"),
        ("apply the ingress", "kubectl apply -f in.yaml", "kubectl apply --server-side -f in.yaml"),
    ]
    store.write(
        [
            *(
                capsule
                for number, (task, failed, fixed) in enumerate(episodes)
                for capsule in _failed_then_fixed(
                    f"s{number}", task, (failed, "error: exit status 1"), (fixed, "done")
                )
            ),
            prompt("s-prefer", prefer, "2026-05-03T10:00:00Z"),
        ]
    )
    digest = _digest(store, project)
    records = part_records(digest)
    assert len(records) == 10
    # "run" is in six of the ten records (every command above but four ran something with it).
    assert sum("run" in record["terms"] for record in records) == 6
    assert prefer in _texts(digest, "uv sync everything in this project")
    # "over" and "run": one word of what the preference says, and the verb of most records.
    assert prefer not in _texts(digest, "run a spell check over the docs")
    # Nor do three with "run" among them: "web" is a word of the npm rule's task, and npm its
    # program.
    bundle = "When `npm run build` fails"
    assert any(text.startswith(bundle) for text in _texts(digest, "npm run build for the web"))
    assert not any(text.startswith(bundle) for text in _texts(digest, "run the web report in npm"))
