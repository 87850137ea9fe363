"""The escape attempts of `capy bench hostile`: survivors in shell, python and perl, and the
ways each tries to outlive its call (background `&`, nohup, double fork, setsid, the sandbox
marker dropped with `env -i` or forged). hostile_escape launches them and counts survivors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TAG = "capyhostile"
CALL_TIMEOUT = 2.0  # seconds: the sandbox timeout of a "timeout" attempt
PID_WAIT = 5.0
# A survivor loop keeps no long-lived child, so killing the tagged pid ends the whole attempt.
SURVIVOR = {
    "sh": "echo $$ > {pidfile}; while :; do sleep 0.2; done",
    "python": (
        "import os, time\nopen({pidfile!r}, 'w').write(str(os.getpid()))\nwhile True: time.sleep(1)"
    ),
    "perl": "open(F, '>', '{pidfile}'); print F $$; close F; sleep 1 while 1;",
}


@dataclass(frozen=True)
class Attempt:
    name: str
    language: str  # the executor language the attempt is written in
    build: object  # (survivor argv as a shell word list, tools) -> code

    def code(self, tools: dict[str, str], survivor: list[str], pidfile: Path, wait: str) -> str:
        return self.build(tools, survivor, str(pidfile), wait)


def _sh_quote(words: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(word) for word in words)


def _shell(template: str):
    def build(tools, survivor, pidfile, wait):
        return template.format(s=_sh_quote(survivor), **tools) + "\n" + wait

    return build


def _python(template: str):
    def build(tools, survivor, pidfile, wait):
        return template.format(argv=survivor, **tools) + "\n" + wait

    return build


def _perl(template: str):
    def build(tools, survivor, pidfile, wait):
        words = ", ".join("'" + word.replace("'", "\\'") + "'" for word in survivor)
        return template.replace("ARGV_LIST", words) + "\n" + wait

    return build


ATTEMPTS: tuple[Attempt, ...] = (
    Attempt("sh: background &", "shell", _shell("{s} &")),
    Attempt("sh: nohup &", "shell", _shell("nohup {s} >/dev/null 2>&1 &")),
    Attempt("sh: double fork", "shell", _shell("( {s} & ) &")),
    Attempt("sh: setsid", "shell", _shell("{setsid} {s} >/dev/null 2>&1 < /dev/null &")),
    Attempt("sh: setsid -f", "shell", _shell("{setsid} -f {s} >/dev/null 2>&1 < /dev/null")),
    Attempt("sh: env -i (marker dropped)", "shell", _shell("{env} -i {s} >/dev/null 2>&1 &")),
    Attempt(
        "sh: forged CAPY_SANDBOX_ID",
        "shell",
        _shell("CAPY_SANDBOX_ID=forged-0000 {s} >/dev/null 2>&1 &"),
    ),
    Attempt(
        "sh: setsid + env -i",
        "shell",
        _shell("{setsid} {env} -i {s} >/dev/null 2>&1 < /dev/null &"),
    ),
    Attempt(
        "sh: setsid + forged marker",
        "shell",
        _shell("CAPY_SANDBOX_ID=forged-0000 {setsid} {s} >/dev/null 2>&1 < /dev/null &"),
    ),
    Attempt(
        "python: Popen new session",
        "python",
        _python(
            "import subprocess\nsubprocess.Popen({argv!r}, start_new_session=True, "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)"
        ),
    ),
    Attempt(
        "python: double fork + setsid",
        "python",
        _python(
            "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        os.execv({argv!r}[0], {argv!r})\n    os._exit(0)"
        ),
    ),
    Attempt(
        "python: setsid + empty env",
        "python",
        _python(
            "import subprocess\nsubprocess.Popen({argv!r}, start_new_session=True, env={{}}, "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)"
        ),
    ),
    Attempt(
        "python: forged marker + setsid",
        "python",
        _python(
            "import subprocess\nsubprocess.Popen({argv!r}, start_new_session=True, "
            "env={{'CAPY_SANDBOX_ID': 'forged-0000'}}, stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)"
        ),
    ),
    Attempt(
        "perl: fork + setsid",
        "perl",
        _perl(
            "use POSIX qw(setsid); my $p = fork(); if ($p == 0) { setsid(); "
            "open(STDOUT, '>/dev/null'); open(STDERR, '>/dev/null'); exec(ARGV_LIST); }"
        ),
    ),
    Attempt(
        "perl: setsid + forged marker",
        "perl",
        _perl(
            "use POSIX qw(setsid); if (fork() == 0) { setsid(); $ENV{CAPY_SANDBOX_ID} = "
            "'forged-0000'; open(STDOUT, '>/dev/null'); open(STDERR, '>/dev/null'); "
            "exec(ARGV_LIST); }"
        ),
    ),
    Attempt(
        "perl: double fork + empty env",
        "perl",
        _perl(
            "use POSIX qw(setsid); if (fork() == 0) { setsid(); if (fork() == 0) { %ENV = (); "
            "open(STDOUT, '>/dev/null'); open(STDERR, '>/dev/null'); exec(ARGV_LIST); } "
            "POSIX::_exit(0); }"
        ),
    ),
)


def leaving_session() -> tuple[Attempt, ...]:
    """The attempts that leave the call's session: what a quick run times out."""
    return tuple(a for a in ATTEMPTS if "setsid" in a.name or "session" in a.name)


def shedding_marker() -> tuple[Attempt, ...]:
    """The attempts that drop or forge CAPY_SANDBOX_ID: what a quick run tries on the CLI."""
    return tuple(a for a in ATTEMPTS if any(w in a.name for w in ("env", "marker", "forged")))


Selection = list[tuple[str, str, tuple[Attempt, ...]]]  # (path, mode, attempts)


# MCP calls ended early (hostile_cancel): a plain child, and children that leave the session.
ENDED_EARLY = ("sh: background &", "sh: setsid + forged marker", "python: forged marker + setsid")
ENDED_EARLY_MODES = ("cancelled", "client-gone", "SIGTERM")


def ended_early_attempts() -> tuple[Attempt, ...]:
    return tuple(a for a in ATTEMPTS if a.name in ENDED_EARLY)
