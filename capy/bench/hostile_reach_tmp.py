"""Reach through the temp folder: code in one call rewrites a later call's script.

Calls used to share the machine's /tmp, where capy made each call's folder
(`/tmp/capy-exec-*`, its script inside) before the call ran it. So code in a running call
could wait, find the folder of a call made after it, and rewrite its script in between:
the later call then ran the attacker's code, with that call's own network and rights
(code from an offline call inside a networked one).

The try (`tmp-script`): two real `capy serve` processes share a project. The attacker's call
looks for every `capy-exec-*/script.*` in /tmp (and the temp folder the servers inherit) it
can find, other than its own, for a few seconds, and rewrites those of the victim's calls
(told apart by a word in their code, so that no other program's calls on a shared machine
are harmed) with a line that prints a marker; meanwhile the victim server runs calls that
print something else. A victim call whose reply holds the marker ran the attacker's code.

The control is the same pair of servers with the protection off: a user overlay empties the
executor pack's `isolation.private_tmp.folders`, so calls share the machine's /tmp again (and
capy makes their folders there). It must get through, or the harness proves nothing. With the
protection on, a call's /tmp may show the machine's (`private_tmp.mode: overlay`), where other
programs' folders may be found; the victims' are in capy's hidden data folder, and a write to
anything found stays in the attacker's own upper layer.
"""

from __future__ import annotations

import contextlib

from capy.bench.hostile_common import Scratch, last_json, mcp_session, reply_text

CHANNEL = "tmp-script"
MARKER = "REWRITTEN-BY-ANOTHER-CALL"
ATTACK_SECONDS = 8.0
VICTIM_CALLS = 12
VICTIM_WORD = "victim-ran-its-own-code"
VICTIM_CODE = f'print("{VICTIM_WORD}")'

# argv: seconds, payload, the victims' word, and optionally the temp folders to look in
# (os.pathsep-separated; /tmp by default). Prints {"found": N, "rewritten": N}: the other
# calls' scripts seen, and the victims' rewritten.
REWRITER = r"""
import glob, json, os, sys, time
seconds, payload, word = float(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
folders = sys.argv[4].split(os.pathsep) if len(sys.argv) > 4 else ["/tmp"]
own = os.path.realpath(os.getcwd())  # a python call runs in its own folder
found, rewritten = set(), set()
end = time.monotonic() + seconds
while time.monotonic() < end:
    for path in (p for f in folders for p in glob.glob(f + "/capy-exec-*/script.*")):
        if os.path.dirname(os.path.realpath(path)) == own:
            continue
        found.add(path)
        try:
            with open(path, "r+b") as handle:
                if word in handle.read():
                    handle.seek(0)
                    handle.truncate()
                    handle.write(payload.encode())
                    rewritten.add(path)
        except OSError:
            pass
    time.sleep(0.0005)
print(json.dumps({"found": len(found), "rewritten": len(rewritten)}))
"""

SHARED_TMP_OVERLAY = """\
pack: shared-tmp
schema: overlay.v1
version: 1.0.0
description: The hostile bench's control, calls sharing the machine's temp folders again.
requires: ">=0.1"
extends: executor
patch:
  isolation:
    private_tmp:
      folders: []
"""


async def attack(scratch: Scratch, errors: list[str]) -> tuple[dict, dict]:
    """The try per side ("control", "capy"): {"tmp-script-other": outcome}, "ok" where a
    victim call ran the attacker's code; and the victims' replies that showed the marker."""
    from capy.config.paths import user_rules_dir

    found: dict[str, dict] = {}
    shown: dict[str, str] = {}
    overlay = user_rules_dir(scratch.env) / "shared-tmp.yaml"
    for side in ("control", "capy"):
        if side == "control":
            overlay.parent.mkdir(parents=True, exist_ok=True)
            overlay.write_text(SHARED_TMP_OVERLAY, "utf-8")
        try:
            outcome, replies = await _one_side(scratch, errors)
        except Exception as error:  # reported; the scenario then counts as unknown
            errors.append(f"{CHANNEL} ({side}): {type(error).__name__}: {error}")
            continue
        finally:
            with contextlib.suppress(OSError):
                overlay.unlink()
        found[side] = {f"{CHANNEL}-other": outcome}
        shown[f"victim-{CHANNEL}-{side}"] = "\n".join(replies)
    return found, shown


def _temp() -> str:
    """Where a server makes its calls' folders when calls share the temp folders: the temp
    folder capy's servers inherit (TMPDIR may point outside /tmp), and /tmp."""
    import os
    import tempfile

    return os.pathsep.join(dict.fromkeys((tempfile.gettempdir(), "/tmp")))


async def _one_side(scratch: Scratch, errors: list[str]) -> tuple[str, list[str]]:
    import anyio

    async with mcp_session(scratch) as victim, mcp_session(scratch) as attacker:
        for client in (victim, attacker):
            await client.call_tool("capy_execute", {"language": "shell", "code": "true"})
        result: dict = {}

        async def rewrite() -> None:
            argv = ["rewriter", str(ATTACK_SECONDS), f'print("{MARKER}")\n', VICTIM_WORD, _temp()]
            code = f"import sys\nsys.argv = {argv!r}\n" + REWRITER
            reply = await attacker.call_tool(
                "capy_execute", {"language": "python", "code": code, "timeout": 60}
            )
            result.update(last_json(reply_text(reply), errors))

        replies: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(rewrite)
            await anyio.sleep(1.0)  # the rewriter is polling by now
            for _ in range(VICTIM_CALLS):
                reply = await victim.call_tool(
                    "capy_execute", {"language": "python", "code": VICTIM_CODE}
                )
                replies.append(reply_text(reply))
                await anyio.sleep(0.2)
    hits = [reply for reply in replies if MARKER in reply]
    if hits:
        return "ok", hits
    return f"found {result.get('found', '?')}, rewrote {result.get('rewritten', '?')}", []
