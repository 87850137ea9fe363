"""`capy bench proxy`: what `capy proxy` adds to a chat completion, against calling the same
upstream directly, alternating in one run.

A scripted OpenAI-compatible upstream (capy.bench.chat_upstream) runs as a process of its own
on loopback, and `capy proxy` in front of it (as a user runs it, recording into a scratch
project's capsule log). Each round sends one conversation turn both ways, in an order that
alternates every round: a JSON reply (timed to its last byte) and a streamed one (timed to its
first chunk). Each turn resends the whole history, as clients do, so the proxy's recorder does
its real work (fingerprints, redaction, spool, drain) while the next rounds run. At the end the
proxy is stopped, and the capsule log is read back: how many capsules were recorded against the
messages sent, how many twice, and whether the chain verifies.

Goal (issue 18): capture adds at most 5 ms at the median. What is measured is the whole proxy
(an extra HTTP hop through Python, plus recording) against the direct call, so the figure is an
upper bound on what recording alone adds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

GOAL_ADDED_MS = 5.0
TURNS_PER_CONVERSATION = 10
SYSTEM = "You are a careful coding assistant working in a Python repository."
QUESTIONS = (
    "Why does tests/unit/test_parser.py fail on an empty line?",
    "Show the smallest change to parse() that fixes it.",
    "Does the change keep the behaviour for tabs?",
    "Write a test for the empty line.",
    "Run the suite again and tell me what fails.",
)


def run(rounds: int = 200, progress=None) -> dict:
    import httpx

    from capy.bench.processes import scratch_project
    from capy.bench.proxy_process import running_proxy
    from capy.bench.scratch import scratch_directory

    with scratch_directory() as scratch:
        project, _home, environ = scratch_project(scratch)
        upstream = subprocess.Popen(
            [sys.executable, "-m", "capy.bench.chat_upstream"],
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = (upstream.stdout.readline() if upstream.stdout else "").strip()
            with (
                running_proxy(url, project, environ, scratch / "logs") as proxy,
                httpx.Client(timeout=60) as direct,
                httpx.Client(timeout=60) as proxied,
            ):
                samples = _alternate(url, proxy.base_url, direct, proxied, rounds, progress)
                stopped = proxy.stop()
                logs = proxy.logs()
        finally:
            upstream.terminate()
            upstream.wait(10)
        recorded = _recorded(project, environ)
    return _report(samples, recorded, rounds, stopped, logs)


def _alternate(direct_url, proxy_url, direct, proxied, rounds, progress) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {
        "json direct": [],
        "json proxy": [],
        "stream direct": [],
        "stream proxy": [],
    }
    arms = (("direct", direct_url, direct), ("proxy", proxy_url, proxied))
    for _warm in range(3):  # connections opened, first-call imports paid, on both sides
        for _, base, client in arms:
            _json_ms(client, base, [{"role": "user", "content": "warm up"}])
    history: list[dict] = []
    for index in range(rounds):
        if index % TURNS_PER_CONVERSATION == 0:
            history = [{"role": "system", "content": SYSTEM}]
        question = QUESTIONS[index % len(QUESTIONS)]
        history.append({"role": "user", "content": f"{question} (round {index})"})
        order = arms if index % 2 == 0 else arms[::-1]
        for name, base, client in order:
            samples[f"json {name}"].append(_json_ms(client, base, history))
            samples[f"stream {name}"].append(_first_chunk_ms(client, base, history))
        history.append({"role": "assistant", "content": _last_reply})
        if progress is not None:
            progress("proxy", index + 1, rounds)
    return samples


_last_reply = ""


def _json_ms(client, base: str, messages: list[dict]) -> float:
    global _last_reply
    body = json.dumps({"model": "json", "messages": messages}).encode()
    started = time.perf_counter()
    reply = client.post(base + "/chat/completions", content=body, headers=_HEADERS)
    elapsed = (time.perf_counter() - started) * 1000
    reply.raise_for_status()
    _last_reply = reply.json()["choices"][0]["message"]["content"]
    return elapsed


def _first_chunk_ms(client, base: str, messages: list[dict]) -> float:
    body = json.dumps({"model": "stream", "stream": True, "messages": messages}).encode()
    started = time.perf_counter()
    with client.stream("POST", base + "/chat/completions", content=body, headers=_HEADERS) as reply:
        chunks = reply.iter_raw()
        next(chunks)
        elapsed = (time.perf_counter() - started) * 1000
        for _ in chunks:  # read to the end, so the exchange is complete (and recorded)
            pass
    return elapsed


# A key-shaped header, as a real client sends (the proxy passes it on and stores nothing of it).
_HEADERS = {"Authorization": "Bearer sk-bench-not-a-real-key", "Content-Type": "application/json"}


def _recorded(project: Path, environ: dict[str, str]) -> dict:
    """Capsules the proxy recorded (read back through `capy capsules`, in the scratch project)."""
    from capy.bench.processes import capy_command

    def capsules(*args: str) -> object:
        done = subprocess.run(
            [*capy_command(), "capsules", *args, "--json"],
            cwd=project,
            env=environ,
            capture_output=True,
            text=True,
            check=False,
        )
        return json.loads(done.stdout) if done.stdout.strip() else None

    listed = capsules("list", "--limit", "1000000") or []
    verified = capsules("verify")
    items = listed if isinstance(listed, list) else listed.get("capsules", [])
    contents = [item.get("content", "") for item in items if item.get("source") == "proxy"]
    return {
        "capsules": len(contents),
        "distinct": len(set(contents)),
        "chain_ok": _chain_ok(verified),
    }


def _chain_ok(verified: object) -> bool:
    scopes = verified if isinstance(verified, list) else (verified or {}).get("scopes", [])
    return bool(scopes) and all(scope.get("ok") for scope in scopes)


def _report(samples: dict, recorded: dict, rounds: int, stopped: bool, logs: str) -> dict:
    from capy.bench.metrics import percentile

    def figures(name: str) -> dict:
        values = samples[name]
        return {
            "p50_ms": round(percentile(values, 0.5), 2),
            "p95_ms": round(percentile(values, 0.95), 2),
        }

    rows = []
    for reply in ("json", "stream"):
        direct, proxied = figures(f"{reply} direct"), figures(f"{reply} proxy")
        rows.append(
            {
                "reply": "JSON reply (whole)" if reply == "json" else "streamed (first chunk)",
                "direct": direct,
                "proxy": proxied,
                "added_p50_ms": round(proxied["p50_ms"] - direct["p50_ms"], 2),
                "added_p95_ms": round(proxied["p95_ms"] - direct["p95_ms"], 2),
            }
        )
    # The warm-up question and its reply, the system prompt once, then each round's question
    # and its reply.
    expected = 2 + 1 + 2 * rounds
    goals = [
        {
            "goal": f"{row['reply']}: proxy adds <= {GOAL_ADDED_MS:g} ms at p50",
            "value": row["added_p50_ms"],
            "met": row["added_p50_ms"] <= GOAL_ADDED_MS,
        }
        for row in rows
    ]
    goals.append(
        {
            "goal": "every message recorded once, chain verifies",
            "value": f"{recorded['capsules']}/{expected}",
            "met": recorded["capsules"] == recorded["distinct"] == expected
            and recorded["chain_ok"],
        }
    )
    return {
        "rounds": rounds,
        "rows": rows,
        "recorded": {**recorded, "expected": expected},
        "stopped_cleanly": stopped,
        "logged_lines": len([line for line in logs.splitlines() if line.startswith("capy proxy: ")])
        - 1,
        "goals": goals,
    }


def proxy_tables(report: dict) -> list:
    from capy.bench.report import Table, goals_table

    latency = Table(
        f"capy proxy against the upstream directly, {report['rounds']} alternating rounds",
        ("reply", "direct p50", "proxy p50", "added p50", "direct p95", "proxy p95", "added p95"),
        [
            (
                row["reply"],
                f"{row['direct']['p50_ms']:.2f}",
                f"{row['proxy']['p50_ms']:.2f}",
                f"{row['added_p50_ms']:+.2f}",
                f"{row['direct']['p95_ms']:.2f}",
                f"{row['proxy']['p95_ms']:.2f}",
                f"{row['added_p95_ms']:+.2f}",
            )
            for row in report["rows"]
        ],
        notes=["milliseconds; the proxy records every exchange while the rounds run"],
    )
    recorded = report["recorded"]
    capsules = Table(
        "capsules recorded by the proxy",
        ("recorded", "expected", "distinct", "chain verifies", "problems logged"),
        [
            (
                str(recorded["capsules"]),
                str(recorded["expected"]),
                str(recorded["distinct"]),
                "yes" if recorded["chain_ok"] else "NO",
                str(report["logged_lines"]),
            )
        ],
    )
    return [latency, capsules, goals_table("goal", report["goals"])]
