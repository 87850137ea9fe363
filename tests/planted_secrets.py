"""Fresh fake secrets of several detector kinds, planted in what capy runs, stores or fetches,
and the check that none of them comes back raw. Shared by the MCP and the CLI tests."""

from __future__ import annotations

import secrets
import string

ALNUM = string.ascii_letters + string.digits
DIGITS = string.digits


def random_token(size: int, alphabet: str = ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(size))


def fresh_secrets() -> dict[str, str]:
    """One new fake secret per detector kind: random, so no filler or allowlist hides it."""
    body = "\n".join(random_token(64, ALNUM + "+/") for _ in range(4))
    return {
        "aws": "AKIA" + random_token(16, string.ascii_uppercase + "234567"),
        "github": "ghp_" + random_token(36),
        "slack": "-".join(
            ("xoxb", random_token(10, DIGITS), random_token(12, DIGITS), random_token(24))
        ),
        "private-key": f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----",
        "password": random_token(20),
        "jwt": f"eyJhbGciOiJIUzI1NiJ9.eyJ{random_token(24)}.{random_token(32)}",
        "stripe": "sk_live_" + random_token(32),
        "discord": f"MT{random_token(24)}.{random_token(6)}.{random_token(38)}",
    }


def planted_text(found: dict[str, str]) -> str:
    """The secrets as a program would print them (the password as an assignment)."""
    lines = [f"{kind}: {value}" for kind, value in found.items() if kind != "password"]
    return "\n".join([*lines, f'db_password = "{found["password"]}"'])


def raw_in(reply: str, found: dict[str, str]) -> list[str]:
    """The kinds of planted secrets that appear raw in `reply` (a key by each body line)."""
    leaked = []
    for kind, value in found.items():
        parts = value.splitlines()[1:-1] if kind == "private-key" else [value]
        if any(part in reply for part in parts):
            leaked.append(kind)
    return leaked


# Where a middle cut falls inside a planted PEM key: in its body, just after its BEGIN line,
# just before its END line; and at which end of the cut (the head's last line or the tail's
# first). Each yields a key part without the BEGIN or the END a detector needs.
KEY_CUTS = [
    (side, place) for side in ("head", "tail") for place in ("body", "after-begin", "before-end")
]


def fake_private_key(lines: int = 12) -> str:
    """A visibly fake PEM key: random base64 lines framed by its BEGIN and END lines."""
    body = "\n".join(random_token(64, ALNUM + "+/") for _ in range(lines))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def key_body_lines(key: str) -> list[str]:
    return key.splitlines()[1:-1]


def log_cut_inside_key(key: str, *, side: str, place: str, limits) -> str:
    """A long log with `key` in it, placed so the executor's middle cut (`limits`: the
    executor pack's output limits) falls at `place` inside the key, at the `side` of the cut."""
    lines = key.splitlines(keepends=True)
    into = {
        "body": len(key) // 2,
        "after-begin": len(lines[0]) + 3,
        "before-end": len(key) - len(lines[-1]) - 3,
    }[place]
    if side == "head":  # the head ends `into` bytes into the key
        before, after = limits.head_bytes - into, limits.max_returned_bytes
    else:  # the tail starts `into` bytes into the key
        before = limits.max_returned_bytes
        after = limits.tail_bytes + into - len(key) - 1
    return log_lines(before) + key + "\n" + log_lines(after)


def log_lines(size: int) -> str:
    """Exactly `size` bytes of log lines."""
    line = "INFO step done, nothing to see here\n"
    whole, rest = divmod(size, len(line))
    return line * whole + ("." * (rest - 1) + "\n" if rest else "")
