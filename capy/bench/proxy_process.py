"""`capy proxy` as a real process, for the proxy's benchmark and tests: started on a free
port, its address read from the line it prints, stopped with SIGTERM (it records what is
queued before it exits), its output kept in files a caller can read."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from capy.bench.processes import capy_command

ANNOUNCED = re.compile(r"(http://127\.0\.0\.1:\d+/v1)")
START_SECONDS = 60.0  # a first start validates the shipped packs
STOP_SECONDS = 30.0


class ProxyStartError(RuntimeError):
    pass


@dataclass
class RunningProxy:
    base_url: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def logs(self) -> str:
        return self.stdout.read_text(errors="replace") + self.stderr.read_text(errors="replace")

    def stop(self) -> bool:
        """SIGTERM, and wait for the exit; whether it exited as asked (uvicorn shuts down, then
        lets the signal end the process: status -SIGTERM) rather than by crash or kill."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return False
        return self.process.returncode in (0, -signal.SIGTERM)


@contextmanager
def running_proxy(
    upstream: str, cwd: Path, env: dict[str, str] | None, logs: Path, *extra: str
) -> Iterator[RunningProxy]:
    """`capy proxy --upstream UPSTREAM --port 0 EXTRA...` in `cwd`, its output under `logs`."""
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "proxy.out", logs / "proxy.err"
    command = [*capy_command(), "proxy", "--upstream", upstream, "--port", "0", *extra]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
        )
    running = RunningProxy(_announced(process, out, err), process, out, err)
    try:
        yield running
    finally:
        running.stop()


def _announced(process: subprocess.Popen[bytes], out: Path, err: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = ANNOUNCED.search(out.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise ProxyStartError(f"capy proxy exited: {err.read_text(errors='replace')[-500:]}")
        time.sleep(0.02)
    process.kill()
    raise ProxyStartError("capy proxy did not start in time")
