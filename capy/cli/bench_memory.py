"""`capy bench memory`: the memory replay harness over fixtures/memory."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import REPO_ROOT, JsonFlag, _emit

DEFAULT_SCENARIOS = REPO_ROOT / "fixtures" / "memory"


def memory(
    *,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    scenarios: Path | None = None,
    instructions: bool = False,
) -> int:
    """Lessons learned without an LLM, noise rejected, recall@3 on later prompts, injections
    where none belong, tokens per prompt, blocking variants and benign commands, reinforcement
    and hook latency, per half (dev, held).

    Parameters
    ----------
    markdown
        Also write the tables as markdown to this file.
    scenarios
        Folder of scenario files (default: the repository's fixtures/memory).
    instructions
        Also count each hook process's instructions under valgrind's callgrind (load-free;
        about half a minute more).
    """
    import tempfile

    from capy.bench.memory import run
    from capy.bench.memory_report import memory_tables
    from capy.cli.output import error_line

    folder = scenarios or DEFAULT_SCENARIOS
    if not (folder / "episodes.yaml").is_file():
        error_line(f"no scenario files in {folder}: give --scenarios DIR with episodes.yaml")
        return 2
    with tempfile.TemporaryDirectory(prefix="capy-bench-memory-") as scratch:
        report = run(folder, Path(scratch), instructions=instructions)
    return _emit(report, memory_tables(report), json_output, markdown)
