"""Secrets planted / returned raw, per tool: fresh fake secrets put where each tool reads, and
counted when one comes back verbatim in what the tool answers.

The secrets are built from the secrets pack's own match examples: the example's secret span
gets a new random body (same character classes, same literal prefix), kept only when the same
detector still finds it, so each plant is a fresh value no detector was tuned on. They sit
under a "fake" header line; they are not credentials. The master keys are planted too: every
capy process here runs with known throw-away CAPY_DB_KEY / CAPY_VAULT_KEY, and an `env` in the
sandbox must not hand them back.
"""

from __future__ import annotations

import random
import secrets
import string
from dataclasses import dataclass
from pathlib import Path

from capy.bench.hostile_common import (
    Scratch,
    allow_loopback_fetch,
    capy_command,
    loopback_server,
    mcp_session,
    reply_text,
    run_process,
    text_page,
    write_transcript,
)

HEADER = "# capy bench hostile: the values below are freshly generated fakes, not credentials"
CONTEXT = "deploy credentials for the staging cluster of the quokka service"
QUERY = "staging cluster credentials quokka"
# A word beside the secrets that each reply must show for its row to mean something; the
# environment row looks for HOME, and capy_stats shows no content at all.
PROBES = {"environment (env)": "HOME=", "capy_stats": None}
KEEP_TAIL = 2  # fixed tails such as Anthropic's AA stay; the body before them is new
OVERLAY_ROW = "capy_index + capy_search (project overlay disables the detectors)"


@dataclass(frozen=True)
class Plant:
    rule_id: str
    secret: str  # the value that must never come back
    line: str  # the example line holding it


def fresh_secrets(count: int, rng: random.Random | None = None) -> list[Plant]:
    """Up to `count` fresh secrets from as many different detectors, spread over the pack."""
    from capy.rules import load_rules
    from capy.security.redaction import redact

    rng = rng or random.SystemRandom()
    pack = load_rules().view("secrets")
    candidates = [
        (detector, compiled)
        for detector, compiled in zip(pack.active_detectors, pack.compiled, strict=True)
        if detector.examples and detector.examples.match
    ]
    step = max(1, len(candidates) // max(1, count))
    spread = candidates[::step]
    plants: list[Plant] = []
    for detector, compiled in spread + [c for c in candidates if c not in spread]:
        plant = _fresh(detector, compiled, rng)
        # The whole pack must mask it too (another rule's overlapping find would also do).
        if plant is not None and plant.secret not in redact(plant.line, secrets=pack).text:
            plants.append(plant)
        if len(plants) == count:
            break
    return plants


def _fresh(detector, compiled, rng: random.Random) -> Plant | None:
    """The detector's first example with a new body in its secret span, still found by it."""
    for example in detector.examples.match:
        found = compiled.find(example)
        if not found:
            continue
        start, end = found[0].start, found[0].end
        span = example[start:end]
        keep = max((len(k) for k in detector.keywords if span.lower().startswith(k)), default=0)
        old = span[keep : len(span) - KEEP_TAIL]
        for _ in range(50):
            body = "".join(_same_class(c, rng, _hex_case(old)) for c in old)
            secret = span[:keep] + body + span[len(span) - KEEP_TAIL :]
            line = example[:start] + secret + example[end:]
            if secret != span and any(line[f.start : f.end] == secret for f in compiled.find(line)):
                return Plant(detector.id, secret, line)
    return None


def _hex_case(body: str) -> str | None:
    """ "lower" or "upper" when every letter and digit of `body` is a hex digit of that case."""
    alnum = [c for c in body if c.isalnum()]
    for case, digits in (("lower", "0123456789abcdef"), ("upper", "0123456789ABCDEF")):
        if alnum and all(c in digits for c in alnum):
            return case
    return None


def _same_class(char: str, rng: random.Random, hex_case: str | None = None) -> str:
    if hex_case is not None and char.isalnum():
        digits = string.hexdigits[:16]
        return rng.choice(digits if hex_case == "lower" else digits.upper())
    if char.isdigit():
        return rng.choice(string.digits)
    if char.isupper():
        return rng.choice(string.ascii_uppercase)
    if char.islower():
        return rng.choice(string.ascii_lowercase)
    return char


def planted_text(plants: list[Plant]) -> str:
    return "\n".join([HEADER, CONTEXT, *(plant.line for plant in plants), ""])


def count_raw(text: str, values: list[str]) -> int:
    return sum(value in text for value in values)


# ---- where the secrets are planted ----------------------------------------------------------


def _long_output_code(secrets_file: str) -> str:
    """Python printing a long log with the planted lines in its middle (so intent applies)."""
    return (
        "lines = [f'worker {i} finished batch in {i % 97} ms' for i in range(3000)]\n"
        f"print('\\n'.join(lines[:1500]))\nprint(open({secrets_file!r}).read())\n"
        "print('\\n'.join(lines[1500:]))\n"
    )


async def _through_mcp(scratch: Scratch, plants: list[Plant], port: int) -> dict[str, str]:
    """One MCP session: each tool given the secrets its own way; the replies by row name."""
    values = [p.secret for p in plants]
    label_secret = values[0]
    replies: dict[str, str] = {}
    async with mcp_session(scratch) as client:

        async def call(row: str, tool: str, arguments: dict) -> None:
            result = await client.call_tool(tool, arguments)
            replies[row] = replies.get(row, "") + "\n" + reply_text(result)

        await call("capy_execute", "capy_execute", {"language": "shell", "code": "cat secrets.txt"})
        await call(
            "capy_execute (intent)",
            "capy_execute",
            {
                "language": "python",
                "code": _long_output_code(str(scratch.project / "secrets.txt")),
                "intent": "staging cluster credentials api key token",
            },
        )
        await call(
            "capy_execute_file",
            "capy_execute_file",
            {"path": "secrets.txt", "language": "python", "code": "print(FILE_CONTENT)"},
        )
        await call(
            "capy_batch_execute",
            "capy_batch_execute",
            {
                "commands": [{"label": "show the deploy notes", "command": "cat secrets.txt"}],
                "queries": [QUERY, "api key token"],
            },
        )
        await call(
            "capy_fetch_and_index (preview)",
            "capy_fetch_and_index",
            {"url": f"http://127.0.0.1:{port}/deploy-notes.txt", "force": True},
        )
        await call(
            "capy_index + capy_search",
            "capy_index",
            {"content": planted_text(plants), "source": "deploy notes"},
        )
        await call("capy_index + capy_search", "capy_search", {"queries": [QUERY]})
        await call(
            "source labels",
            "capy_index",
            {"content": f"{CONTEXT}, labelled", "source": f"deploy {label_secret}"},
        )
        await call("source labels", "capy_search", {"queries": [QUERY]})
        await call("capy_stats", "capy_stats", {})
        await call("environment (env)", "capy_execute", {"language": "shell", "code": "env"})
    return replies


def _quieting_project(scratch: Scratch, plants: list[Plant]) -> Path:
    """A cloned repository whose `.capy/rules/` disables the detectors of the planted secrets
    (issue #14: a project may add detectors, never disable them, unless the user trusts it)."""
    project = scratch.root / "cloned-repo"
    rules = project / ".capy" / "rules"
    rules.mkdir(parents=True)
    (project / ".git").mkdir()
    body = "".join(f"  - {rule_id}\n" for rule_id in sorted({p.rule_id for p in plants}))
    (rules / "quiet.yaml").write_text(
        "pack: quiet-secrets\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: A project overlay that disables secret detectors.\n"
        f'requires: ">=0.1"\nextends: secrets\ndisable:\n{body}',
        encoding="utf-8",
    )
    return project


async def _through_loosened_project(scratch: Scratch, plants: list[Plant]) -> str:
    """capy_index + capy_search, read back from the index, in the quieting project."""
    project = _quieting_project(scratch, plants)
    async with mcp_session(scratch, project=project) as client:
        first = await client.call_tool(
            "capy_index", {"content": planted_text(plants), "source": "deploy notes"}
        )
        second = await client.call_tool("capy_search", {"queries": [QUERY]})
    return reply_text(first) + "\n" + reply_text(second)


def _vault_show(scratch: Scratch, plants: list[Plant]) -> str:
    folder = scratch.root / "transcripts"
    session = f"hostile-{secrets.token_hex(4)}"
    write_transcript(folder, session, [CONTEXT, *(plant.line for plant in plants)])
    vault = ["--path", str(scratch.root / "vault.db")]
    run_process(
        capy_command("vault", "import", "--source", str(folder), *vault),
        env=scratch.env,
        cwd=scratch.project,
    )
    outcome = run_process(
        capy_command("vault", "show", session, "--results", *vault),
        env=scratch.env,
        cwd=scratch.project,
    )
    return outcome.text


def run(scratch: Scratch, *, quick: bool, kinds: int | None = None) -> dict:
    import anyio

    plants = fresh_secrets(kinds or (6 if quick else 12))
    values = [plant.secret for plant in plants]
    text = planted_text(plants)
    (scratch.project / "secrets.txt").write_text(text, encoding="utf-8")
    allow_loopback_fetch(scratch)  # the fetch row needs a loopback page
    # One paragraph, so that a preview of the page's first lines holds the secrets too.
    page = f"{CONTEXT}: " + " ; ".join(plant.line for plant in plants) + "\n"
    with loopback_server(text_page(page.encode())) as port:
        replies = anyio.run(_through_mcp, scratch, plants, port)
    cli = run_process(
        capy_command("execute", "shell", "cat secrets.txt"), env=scratch.env, cwd=scratch.project
    )
    replies["capy execute (CLI)"] = cli.text
    replies["capy vault show"] = _vault_show(scratch, plants)
    replies[OVERLAY_ROW] = anyio.run(_through_loosened_project, scratch, plants)
    rows = []
    for row, reply in replies.items():
        if row == "environment (env)":
            planted = [scratch.db_key, scratch.vault_key]
        elif row == "source labels":
            planted = values[:1]
        else:
            planted = values
        probe = PROBES.get(row, "quokka")
        rows.append(
            {
                "where": row,
                "planted": len(planted),
                "returned_raw": count_raw(reply, planted),
                # The row's reply holds what the tool was given (a plain word beside the
                # secrets): a reply without it saw nothing, and its 0 would prove nothing.
                "reached": probe is None or probe in reply,
            }
        )
    return {
        "detectors": sorted({plant.rule_id for plant in plants}),
        "rows": rows,
        "planted": sum(row["planted"] for row in rows),
        "returned_raw": sum(row["returned_raw"] for row in rows),
        "unreached": [row["where"] for row in rows if not row["reached"]],
        # Control: the planted text itself, with nothing in between, must count every secret.
        "control_seen": count_raw(text, values) == len(values) > 0,
    }
