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


def test_a_section_banner_starts_a_window_instead_of_ending_one(rules, checks):
    window = rules.log.window_lines
    banner = "---------- coverage: platform linux, python 3.12.3-final-0 -----------"
    report = ["Name     Stmts   Miss  Cover", "TOTAL     2871    214    93%"]
    lines = [f"tests/test_api.py::test_case_{n} PASSED" for n in range(window - 2)]
    lines += [banner, *report, *(f"harbor/mod_{n}.py  10  0  100%" for n in range(window))]
    text = "\n".join(lines)
    chunks = chunk_text(text, label="pytest --cov", content_type="log", rules=rules)
    checks.lines_kept(text, chunks)
    # The window would have ended two lines after the banner, cutting the report's header
    # from its table; it ends before the banner, and the next starts on it.
    (with_banner,) = [c for c in chunks if banner in c.content]
    assert with_banner.content.startswith(banner)
    assert "TOTAL     2871" in with_banner.content
    assert not any(banner in c.content for c in chunks if c is not with_banner)


def test_a_banner_far_from_the_window_end_moves_nothing(rules):
    window = rules.log.window_lines
    lines = ["collected 3 items", "=" * 20 + " FAILURES " + "=" * 20]
    lines += [f"line {n}" for n in range(2 * window)]
    chunks = chunk_text("\n".join(lines), label="pytest", content_type="log", rules=rules)
    assert len(chunks[0].content.split("\n")) == window
