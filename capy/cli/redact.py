"""`capy redact [FILE | -] [--report] [--json]`: a thin shell over `capy.security.redaction`.

The redacted text goes to stdout byte for byte (invalid UTF-8 passes through untouched), so the
command works in a pipe; the report goes to stderr and names rules and counts, never a secret.
"""

from __future__ import annotations

import sys
from typing import Annotated

from cyclopts import Parameter

JsonFlag = Annotated[
    bool, Parameter(name="--json", negative=(), help="Print the report as JSON (on stderr).")
]
ReportFlag = Annotated[
    bool, Parameter(name="--report", negative=(), help="Print rule ids and counts on stderr.")
]


# The most `capy redact` reads, from a file or stdin: redaction holds the text in memory
# (about 50 ms a MiB), so a larger input is refused with a way round rather than read.
MAX_REDACT_BYTES = 64 * 1024 * 1024

# `-` means stdin, as for cat and grep, so a leading hyphen must not read as an option.
Source = Annotated[str, Parameter(allow_leading_hyphen=True)]


def redact(
    source: Source = "-", /, *, report: ReportFlag = False, json_output: JsonFlag = False
) -> int:
    """Write FILE (or stdin, `-`) to stdout with each secret replaced by a REDACTED marker.

    Parameters
    ----------
    source
        The file to redact; `-` or nothing reads standard input.

    The marker names the rule that found the secret, as in REDACTED:secrets.github-pat in
    square brackets; the report lists rule ids and counts, never the secrets.
    """
    from capy.cli.output import error_line

    data = _read(source)
    if data is None:
        return 2
    from capy.security.redaction import redact as redact_text

    # surrogateescape keeps bytes that are not UTF-8 as they were, so binary noise in a log
    # comes out unchanged instead of as replacement characters.
    text = data.decode("utf-8", errors="surrogateescape")
    result = redact_text(text)
    shown = result.text
    if sys.stdout.isatty():
        # A redacted copy written to a file or a pipe keeps every byte; on a terminal, the
        # content's control sequences must not act.
        from capy.security.controls import neutralise_controls

        shown = neutralise_controls(shown)
    sys.stdout.flush()
    sys.stdout.buffer.write(shown.encode("utf-8", errors="surrogateescape"))
    sys.stdout.buffer.flush()
    if json_output:
        _print_json_report(source, result)
    elif report:
        _print_report(result, error_line)
    return 0


def _read(source: str) -> bytes | None:
    from capy.cli.output import error_line
    from capy.units import human_bytes
    from capy.userfiles import FileTooLargeError, UserFileError, read_user_file

    too_large = (
        f"it holds more than {human_bytes(MAX_REDACT_BYTES)}, the most `capy redact` reads; "
        "split it (for example `split -b 32M FILE part-`) and redact the parts"
    )
    if source == "-":
        data = sys.stdin.buffer.read(MAX_REDACT_BYTES + 1)
        if len(data) <= MAX_REDACT_BYTES:
            return data
        error_line(f"cannot redact standard input: {too_large}")
        return None
    try:
        return read_user_file(source, limit=MAX_REDACT_BYTES, purpose="redact").head
    except FileTooLargeError:
        error_line(f"cannot redact {source}: {too_large}")
    except UserFileError as error:
        error_line(error.message)
    return None


def _print_report(result, error_line) -> None:
    counts = result.counts
    if not counts:
        print("no secrets found", file=sys.stderr)
        return
    width = max(len(rule_id) for rule_id in counts)
    for rule_id, count in counts.items():
        print(f"{rule_id:<{width}}  {count}", file=sys.stderr)
    total = sum(counts.values())
    print(f"{total} secret{'s' if total != 1 else ''} redacted", file=sys.stderr)


def _print_json_report(source: str, result) -> None:
    import json

    report = {
        "source": "stdin" if source == "-" else source,
        "redacted": sum(result.counts.values()),
        "rules": result.counts,
    }
    print(json.dumps(report, indent=2, sort_keys=True), file=sys.stderr)
