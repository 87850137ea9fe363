"""Logs: windows plus one chunk per distinct error line, with context, capped."""

from __future__ import annotations

from capy.chunking import chunk_text


def test_error_chunks_are_titled_by_their_line(chunk, checks, fixture_text, snapshot):
    chunks = chunk("pytest.log")
    checks.lines_kept(fixture_text("pytest.log"), chunks)
    assert [c.title for c in chunks] == snapshot


def test_error_chunk_holds_context_before_and_after(chunk, rules):
    (key_error,) = [c for c in chunk("pytest.log") if c.title == "KeyError: 'KESTREL_JOBS'"]
    lines = key_error.content.splitlines()
    assert lines[rules.log.error_context.before_lines] == "KeyError: 'KESTREL_JOBS'"
    assert 'env.py", line 31, in build_env' in lines[0]


def test_timestamps_are_stripped_and_repeats_get_one_chunk(chunk):
    titles = [c.title for c in chunk("service.log")]
    assert titles.count("ERROR db: connection pool exhausted (size=20, waiting=57)") == 1
    assert "FATAL worker-3: cannot bind port 9091: address already in use" in titles
    assert "WARN cache: hit ratio dropped to 0.41" in titles


def test_error_chunks_are_capped_worst_first(rules):
    lines = [f"2025-06-03 10:00:{n % 60:02d} WARN slow request id={n}" for n in range(80)]
    lines += [f"2025-06-03 10:01:{n % 60:02d} ERROR failed request id={n}" for n in range(80)]
    chunks = chunk_text("\n".join(lines), content_type="log", rules=rules)
    flagged = [c for c in chunks if "(line" not in c.title]
    assert len(flagged) == rules.log.max_error_chunks
    assert all(c.title.startswith("ERROR") for c in flagged)


def test_log_detected_from_content(rules):
    text = "[INFO] Scanning for projects...\n[ERROR] BUILD FAILURE\n[ERROR] see above\n"
    chunks = chunk_text(text, label="mvn package", rules=rules)
    assert "[ERROR] BUILD FAILURE" in [c.title for c in chunks]


def test_a_traceback_behind_buildkit_step_prefixes_gets_its_own_chunk(rules):
    steps = [f"#14 1.{n:03d} Collecting package-{n}" for n in range(60)]
    failure = [
        "#14 2.104 Traceback (most recent call last):",
        '#14 2.105   File "/src/setup.py", line 3, in <module>',
        "#14 2.106     import numpy",
        "#14 2.110 ModuleNotFoundError: No module named 'numpy'",
        "#14 ERROR: process did not complete successfully: exit code: 1",
    ]
    text = "\n".join(["#13 [builder 4/6] COPY . /src", *steps, *failure])
    chunks = chunk_text(text, label="docker build .", rules=rules)
    titles = [chunk.title for chunk in chunks]
    assert "#14 2.104 Traceback (most recent call last):" in titles
    assert "#14 2.110 ModuleNotFoundError: No module named 'numpy'" in titles


def test_a_section_banner_starts_a_chunk_that_its_title_names(rules, checks):
    window = rules.log.window_lines
    banner = "---------- coverage: platform linux, python 3.12.3-final-0 -----------"
    report = ["Name     Stmts   Miss  Cover", "TOTAL     2871    214    93%"]
    lines = [f"tests/test_api.py::test_case_{n} PASSED" for n in range(window - 2)]
    lines += [banner, *report, *(f"harbor/mod_{n}.py  10  0  100%" for n in range(window))]
    text = "\n".join(lines)
    chunks = chunk_text(text, label="pytest --cov", content_type="log", rules=rules)
    checks.lines_kept(text, chunks)
    checks.well_formed(chunks)
    # The first window would have held the banner and the report's header; it ends before
    # the banner, and every window of the report is titled by it.
    (with_banner,) = [c for c in chunks if banner in c.content]
    assert with_banner.content.startswith(banner)
    assert "TOTAL     2871" in with_banner.content
    assert chunks[0].title == f"pytest --cov (lines 1-{window - 2})"
    report_titles = {c.title for c in chunks if "harbor/mod_" in c.content}
    assert report_titles == {"coverage: platform linux, python 3.12.3-final-0"}


def test_each_pytest_failure_is_a_chunk_titled_by_its_test(chunk):
    chunks = chunk("pytest.log")
    (failure,) = [c for c in chunks if c.title == "FAILURES > test_parallel_jobs"]
    assert failure.content.startswith("_" * 34 + " test_parallel_jobs ")
    assert "KeyError: 'KESTREL_JOBS'" in failure.content
    assert "test_prune_respects_cache_max_mb" not in failure.content
    # The closing "== 2 failed ==" line stands for nothing alone: it ends the summary.
    (summary,) = [c for c in chunks if c.title == "short test summary info"]
    assert summary.content.rstrip().endswith("2 failed, 62 passed in 4.31s " + "=" * 25)


def test_a_banner_with_nothing_under_it_heads_the_next_section(rules, checks):
    lines = ["collected 3 items", "=" * 20 + " FAILURES " + "=" * 20]
    lines += ["_" * 10 + " test_resume " + "_" * 10, "", "    def test_resume():"]
    lines += [f"E       assert step {n} == {n + 1}" for n in range(5)]
    text = "\n".join(lines)
    chunks = chunk_text(text, label="pytest", content_type="log", rules=rules)
    checks.lines_kept(text, chunks)
    # Too little before the first banner to stand alone, and FAILURES heads only the test.
    assert not any("(line" in c.title for c in chunks)
    (section,) = [c for c in chunks if c.title == "FAILURES > test_resume"]
    assert section.content.startswith("collected 3 items\n" + "=" * 20 + " FAILURES ")
    assert "E       assert step 4 == 5" in section.content


def test_each_commit_of_git_log_is_a_chunk_titled_by_its_hash(rules, checks):
    commits = []
    for n, files in enumerate((3, 12, 1)):
        commits += [
            f"commit {n:x}" + "0" * 39,
            "Author: Ada <ada@example.org>",
            f"Date:   Tue May {n + 10} 11:55:45 2025 +0200",
            "",
            f"    change number {n}",
            "",
            *(f" src/module_{n}_{f}.rs | {f + 1} +" for f in range(files)),
            f" {files} files changed, {files} insertions(+)",
            "",
        ]
    text = "\n".join(commits)
    chunks = chunk_text(text, label="git log --stat", content_type="log", rules=rules)
    checks.lines_kept(text, chunks)
    assert [c.title for c in chunks] == [f"commit {n:x}" + "0" * 39 for n in range(3)]
    assert "change number 1" in chunks[1].content
    assert "12 files changed" in chunks[1].content
    assert "change number 2" not in chunks[1].content
