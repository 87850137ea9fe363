"""How fast capy redacts secrets from typical log text, against running the detectors one by one.

The text is 1 MB of seeded, made-up developer log: web access lines, app logs, pytest and build
output, tracebacks, package installs, container and git lines, config dumps that mention keys
and tokens without holding any, and a few fake secrets. The baseline is the pack's detectors run
one after another (keyword check, then a whole-text regex scan each), which is what the engine
did before `SecretScanner`; both give the same findings, and the benchmark checks that they do.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from capy.bench.timing import Timing, measure

TARGET_BYTES = 1_000_000
_WORDS = (
    *("request", "handler", "cache", "user", "session", "config", "build", "module", "worker"),
    *("queue", "retry", "connect", "api", "timeout", "upstream", "database", "http", "server"),
    *("client", "index", "router", "schema", "model", "view", "render", "task", "job", "event"),
    *("stream", "buffer", "parser", "loader", "plugin", "service", "metrics", "trace", "span"),
)
_SETTINGS = ("timeout", "max_retries", "pool_size", "cache_key_prefix", "auth_mode", "token_ttl")
_LEVELS = ("DEBUG", "INFO", "INFO", "INFO", "WARNING", "ERROR")


def _token(rng: random.Random, size: int, alphabet: str = string.ascii_letters + string.digits):
    return "".join(rng.choice(alphabet) for _ in range(size))


def _secret_line(rng: random.Random) -> str:
    """A fake credential in a shape a detector knows (random, so it passes entropy floors)."""
    return rng.choice(
        [
            lambda: f"export GITHUB_TOKEN=ghp_{_token(rng, 36)}",
            lambda: f"AWS_ACCESS_KEY_ID=AKIA{_token(rng, 16, string.ascii_uppercase + '234567')}",
            lambda: f'db_password = "{_token(rng, 20)}"',
            lambda: f"Authorization: Bearer {_token(rng, 40)}",
            lambda: f"postgres://app:{_token(rng, 16)}@db.internal:5432/app",
        ]
    )()


def _line(rng: random.Random, index: int) -> str:
    word = rng.choice
    clock = f"{(index // 1800) % 24:02d}:{(index // 30) % 60:02d}:{index % 60:02d}"
    stamp = f"2026-11-{1 + index // 40000:02d}T{clock}.{rng.randint(0, 999):03d}Z"
    kind = rng.random()
    if kind < 0.25:
        return (
            f'{stamp} INFO  [access] 10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)} "GET '
            f'/api/v1/{word(_WORDS)}/{rng.randint(1, 99999)}?page={rng.randint(1, 9)} HTTP/1.1" '
            f"{word(['200', '200', '200', '304', '404', '500'])} {rng.randint(90, 9000)}b "
            f"{rng.random() * 300:.1f}ms"
        )
    if kind < 0.45:
        return (
            f"{stamp} {word(_LEVELS):<7} {word(_WORDS)}.{word(_WORDS)}: {word(_WORDS)} "
            f"{word(_WORDS)} finished in {rng.randint(1, 5000)}ms (id={rng.getrandbits(64):016x})"
        )
    if kind < 0.6:
        outcome = word(["PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"])
        return (
            f"tests/{word(_WORDS)}/test_{word(_WORDS)}.py::test_{word(_WORDS)}_{word(_WORDS)} "
            f"{outcome} [{rng.randint(0, 100):3d}%]"
        )
    if kind < 0.7:
        return (
            f'  File "/usr/lib/python3.12/site-packages/{word(_WORDS)}/{word(_WORDS)}.py", line '
            f"{rng.randint(1, 2000)}, in {word(_WORDS)}_{word(_WORDS)}"
        )
    if kind < 0.78:
        return (
            f"  Downloading https://files.pythonhosted.org/packages/{rng.getrandbits(16):04x}/"
            f"{word(_WORDS)}-{rng.randint(0, 9)}.{rng.randint(0, 30)}.0-py3-none-any.whl "
            f"({rng.randint(10, 900)} kB)"
        )
    if kind < 0.85:
        return (
            f"src/{word(_WORDS)}/{word(_WORDS)}.rs:{rng.randint(1, 900)}:{rng.randint(1, 80)}: "
            f"warning: unused variable `{word(_WORDS)}_{word(_WORDS)}`"
        )
    if kind < 0.91:
        return (
            f"{rng.getrandbits(160):040x} {word(['Merge', 'Fix', 'Add', 'Refactor'])} "
            f"{word(_WORDS)} {word(_WORDS)} (#{rng.randint(100, 9999)})"
        )
    if kind < 0.97:
        return (
            f"  {word(_WORDS)}.{word(_SETTINGS)}"
            f" = {word([str(rng.randint(1, 600)), 'true', 'false', repr(word(_WORDS))])}"
        )
    if kind < 0.9995:
        return (
            f"Step {rng.randint(1, 20)}/20 : RUN {word(['pip', 'npm', 'cargo', 'apt-get'])} "
            f"install {word(_WORDS)}"
        )
    return _secret_line(rng)


def typical_log(target_bytes: int = TARGET_BYTES, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < target_bytes:
        line = _line(rng, len(lines))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:target_bytes]


def _one_by_one(secrets, text: str) -> Callable[[], list]:
    def run() -> list:
        lowered = text.lower()
        return [found for detector in secrets.compiled for found in detector.find(text, lowered)]

    return run


def run(runs: int = 15, *, baseline_runs: int = 3) -> dict:
    from capy.rules import load_rules
    from capy.security.redaction import redact

    secrets = load_rules().view("secrets")
    text = typical_log()
    size_mb = len(text.encode("utf-8")) / 1_000_000
    scanner = secrets.scanner
    if scanner.find(text) != _one_by_one(secrets, text)():
        raise AssertionError("the scanner and the one-by-one detectors disagree on the log")
    timings: list[Timing] = [
        measure("detectors one by one (before)", _one_by_one(secrets, text), baseline_runs),
        measure("SecretScanner.find", lambda: scanner.find(text), runs),
        measure("redact() (find, merge, mask)", lambda: redact(text, secrets=secrets), runs),
    ]
    redacted = redact(text, secrets=secrets)
    return {
        "benchmark": "redaction",
        "input_mb": round(size_mb, 3),
        "detectors": len(secrets.compiled),
        "secrets_found": len(redacted.findings),
        "baseline": timings[0].name,
        "results": [
            {
                "name": timing.name,
                "median_ms": round(timing.median_ms, 2),
                "p95_ms": round(timing.p95_ms, 2),
                "runs": timing.runs,
                "mb_per_s": round(size_mb / (timing.median_ms / 1000), 2),
                "ms_per_mb": round(timing.median_ms / size_mb, 2),
                "speedup": round(timings[0].median_ms / timing.median_ms, 2),
            }
            for timing in timings
        ],
    }
