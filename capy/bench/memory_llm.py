"""`capy bench memory` with a chat model: a real OpenAI-compatible server on loopback whose
replies are scripted, and the memory rebuilt from the same capsules through it.

The script is a judge that knows the labels (a lesson quoting a noise event scores low, any
other high), so the figure measures what capy does with a model's replies, not a model's
judgement: every `FAULT_EVERY`-th call answers with one of the failures real APIs give (JSON cut
short, an HTTP 500, prose instead of JSON), and good replies come plain, in a fence, or with a
`total` that contradicts the scores (capy recomputes it). Causal analyses (an error and its fix,
a session's corrections) are answered with the draft lesson kept and a cause added. A failed
call must fall back to the no-LLM path, so the goal is every lesson learned and the noise still
rejected.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from capy.bench.chat_upstream import completion

FAULT_EVERY = 3
FAULTS = ("cut-json", "http-500", "prose")
GOOD = ("plain", "fence", "false-total")
HIGH = {"actionable": 4, "specific": 4, "novel": 4, "durable": 4}
LOW = {"actionable": 1, "specific": 2, "novel": 4, "durable": 0}


def judge_reply(
    call: int, lesson: str, noise: list[str], system: str = ""
) -> tuple[str, int, bytes]:
    """The scripted answer to the `call`-th request (from 1) about `lesson`: its shape, the HTTP
    status and the body. A causal analysis (of an error, or of a session's corrections) is
    answered with the draft lesson or the user's words kept and a cause added."""
    if call % FAULT_EVERY == 0:
        shape = FAULTS[(call // FAULT_EVERY) % len(FAULTS)]
        if shape == "http-500":
            error = {"error": {"message": "scripted failure", "type": "server_error"}}
            return shape, 500, json.dumps(error).encode()
        text = '{"actionable": 4, "specific": ' if shape == "cut-json" else "Looks useful to me!"
        return shape, 200, json.dumps(completion(text)).encode()
    if '"cause"' in system:
        return "analysis", 200, json.dumps(completion(_analysis(lesson))).encode()
    said = lesson.split("\n", 1)[-1]
    scores = LOW if any(item in said or said in item for item in noise) else HIGH
    shape = GOOD[(call - call // FAULT_EVERY) % len(GOOD)]
    if shape == "fence":
        text = f"```json\n{json.dumps(scores)}\n```"
    elif shape == "false-total":
        text = json.dumps({**scores, "total": 16 - sum(scores.values())})
    else:
        text = json.dumps(scores)
    return shape, 200, json.dumps(completion(text)).encode()


def _analysis(request: str) -> str:
    """The analysis a careful model would give, as far as a script can: the draft lesson (or
    each user's correction) kept whole, with a cause."""
    if request.startswith("Failing command:"):
        draft = request.rsplit("Draft lesson: ", 1)[-1].strip()
        return json.dumps({"cause": "what the error output says", "lesson": draft})
    lessons = []
    for line in request.splitlines():
        number, _, rest = line.partition(". ")
        said = rest.rsplit('The user said: "', 1)[-1].removesuffix('"')
        if number.isdigit():
            lessons.append({"n": int(number), "cause": "the user objected", "lesson": said})
    return json.dumps({"lessons": lessons})


@contextmanager
def scripted_judge(noise: list[str]) -> Iterator[Counter[str]]:
    """A judge on 127.0.0.1, configured for capy through CAPY_LLM__* for the block; yields the
    count of replies by shape."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Lock, Thread

    shapes: Counter[str] = Counter()
    lock = Lock()

    class Judge(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            messages = request.get("messages", [])
            users = [m for m in messages if m.get("role") == "user"]
            lesson = str(users[-1].get("content", "")) if users else ""
            system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
            with lock:
                shapes["calls"] += 1
                shape, status, body = judge_reply(shapes["calls"], lesson, noise, system)
                shapes[shape] += 1
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
    server.daemon_threads = True
    thread = Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    names = ("CAPY_LLM__BASE_URL", "CAPY_LLM__MODEL")
    saved = {name: os.environ.get(name) for name in names}
    os.environ["CAPY_LLM__BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["CAPY_LLM__MODEL"] = "scripted-judge"
    try:
        yield shapes
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def noise_texts(noise: list[dict[str, Any]]) -> list[str]:
    """What each noise event said or ran, as a lesson learned from it would quote it."""
    found = []
    for item in noise:
        for event in item["events"]:
            command = (event.get("tool_input") or {}).get("command")
            for text in (event.get("prompt"), command):
                if isinstance(text, str) and len(text.strip()) >= 8:
                    found.append(" ".join(text.split()))
    return found


def learn_with_judge(project: Any, noise: list[dict[str, Any]]) -> tuple[Counter[str], int, list]:
    """Memory rebuilt from the run's capsules through the scripted judge: the reply shapes, the
    fallbacks the memory log holds, and the records."""
    from capy.capsules import open_capsules
    from capy.capsules.sqlite.memory import log_entries
    from capy.memory import learn, records_of

    with (
        scripted_judge(noise_texts(noise)) as shapes,
        open_capsules(project_dir=project, notify=lambda _line: None) as store,
    ):
        learn(store, rebuild=True)
        log = log_entries(store.conn, None, 100_000)
        records = records_of(store)
    fallbacks = sum(1 for entry in log if entry[2] == "llm-fallback")
    return shapes, fallbacks, records
