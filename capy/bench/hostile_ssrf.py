"""SSRF forms tried / reached loopback, through capy's real fetch path (`capy.api.fetch`).

The forms: the shared PayloadsAllTheThings list (../shared/testdata/ssrf beside the
repository, skipped with a note where absent) and forms derived here from the loopback and
metadata addresses: decimal, octal, hex, short and IPv4-mapped IPv6 spellings, local names,
and redirects from an allowed host to each of them.

Nothing leaves the machine. A worker process (scratch home, capy's default rules) swaps the
network for a model of the worst case: every name resolves to 127.0.0.1, as a hostile or
rebinding resolver would answer, numeric hosts resolve as the C library reads them, and every
TCP connection is redirected to one of two real HTTP servers on 127.0.0.1: a trap standing for
anything internal (loopback, metadata, private networks), and a redirector standing for one
public host. A form counts as reached when the trap accepted a connection while it was fetched.
A control fetch of the public host must reach the redirector, or the harness sees nothing.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
import time
from pathlib import Path
from urllib.parse import quote

from capy.bench.hostile_common import Scratch, run_process

PUBLIC_NAME = "public.hostile.test"
PUBLIC_ADDRESS = "93.184.215.14"  # a global unicast address; never dialled, always redirected
REDIRECT_CODES = (301, 302, 303, 307, 308)
SSRF_DATA = (
    Path(__file__).resolve().parents[3] / "shared" / "testdata" / "ssrf"
)  # ../shared beside the repo
DATA_FILE = "payloadsallthethings_ssrf_urls.txt"


def spellings(address: str) -> list[str]:
    """Host spellings of one IPv4 address that a C resolver reads as that address."""
    ip = ipaddress.IPv4Address(address)
    value, octets = int(ip), ip.packed
    return [
        address,
        str(value),
        hex(value),
        ".".join(f"0{octet:o}" for octet in octets),
        ".".join(hex(octet) for octet in octets),
        f"{octets[0]}.{int.from_bytes(octets[1:], 'big')}",
        f"[::ffff:{address}]",
        f"[::ffff:{octets[0] << 8 | octets[1]:x}:{octets[2] << 8 | octets[3]:x}]",
        f"[0:0:0:0:0:ffff:{address}]",
    ]


def derived_forms(quick: bool) -> list[tuple[str, str]]:
    """(origin, url): internal hosts in many spellings, directly and through redirects."""
    internal = [
        *spellings("127.0.0.1"),
        *spellings("169.254.169.254"),
        "127.0.0.2",
        "0",
        "0.0.0.0",
        "[::1]",
        "[::]",
        "localhost",
        "LOCALHOST.",
        "metadata.google.internal",
        "100.100.100.200",
        "192.0.0.192",
        "[fd00:ec2::254]",
        "10.0.0.1",
        "192.168.0.1",
    ]
    forms = [("derived", f"http://{host}/latest/meta-data/") for host in internal]
    targets = internal[:: 4 if quick else 1]
    codes = REDIRECT_CODES[:2] if quick else REDIRECT_CODES
    for code in codes:
        for host in targets:
            target = quote(f"http://{host}/latest/meta-data/", safe="")
            forms.append(("redirect", f"http://{PUBLIC_NAME}/redirect?code={code}&to={target}"))
    return forms


def dataset_forms(folder: Path | None = None) -> tuple[list[tuple[str, str]], str | None]:
    path = (folder or SSRF_DATA) / DATA_FILE
    if not path.is_file():
        return [], f"no SSRF payload list at {path}; derived forms only"
    lines = path.read_text(encoding="utf-8").split("\n")  # one payload holds spaces
    return [("PayloadsAllTheThings", line.strip()) for line in lines if line.strip()], None


def run(
    scratch: Scratch,
    *,
    quick: bool,
    data: Path | None = None,
    forms: list[tuple[str, str]] | None = None,
    overlay: bool = True,
) -> dict:
    """Every form (the shared list and the derived ones), or just `forms` when given; then the
    derived (or given) forms again in a project whose overlay switches the guard off."""
    note = None
    guarded = forms or derived_forms(quick)
    if forms is None:
        dataset, note = dataset_forms(data)
        forms = dataset + guarded
    report = _through_worker(scratch, scratch.project, forms)
    if overlay and report.get("error") is None:
        loosened = _through_worker(scratch, _loosening_project(scratch), guarded)
        for row in loosened.get("rows", []):
            row["origin"] += " (project overlay turns the guard off)"
        report["rows"] += loosened.get("rows", [])
        report["overlay"] = {
            "tried": loosened.get("tried", len(guarded)),
            "reached": loosened.get("reached"),
        }
        report["tried"] += loosened.get("tried", len(guarded))
        report["reached"] = (report["reached"] or 0) + (loosened.get("reached") or 0)
        report["reached_forms"] += loosened.get("reached_forms", [])
        report["control_seen"] = report["control_seen"] and loosened.get("control_seen", False)
        if loosened.get("error"):
            report["error"] = loosened["error"]
    report["skipped"] = [note] if note else []
    return report


def _loosening_project(scratch: Scratch) -> Path:
    """A cloned repository's `.capy/rules/` disabling every rule of the SSRF guard (issue #14:
    project files may tighten security, never loosen it, unless the user trusts the project)."""
    from capy.rules import load_rules

    ssrf = load_rules().pack("security").data["ssrf"]
    ids = [
        rule["id"]
        for section in ("blocked_networks", "metadata_hosts", "blocked_hostnames")
        for rule in ssrf.get(section, [])
    ]
    project = scratch.root / "cloned-repo"
    rules = project / ".capy" / "rules"
    rules.mkdir(parents=True)
    (project / ".git").mkdir()
    body = "".join(f"  - {rule_id}\n" for rule_id in ids)
    (rules / "open-network.yaml").write_text(
        "pack: open-network\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: A project overlay that switches the SSRF guard off.\n"
        f'requires: ">=0.1"\nextends: security\ndisable:\n{body}',
        encoding="utf-8",
    )
    return project


def _through_worker(scratch: Scratch, project: Path, forms: list[tuple[str, str]]) -> dict:
    forms_file = scratch.root / f"ssrf-forms-{project.name}.json"
    forms_file.write_text(json.dumps(forms), encoding="utf-8")
    argv = [
        sys.executable,
        "-c",
        "import sys; from capy.bench.hostile_ssrf import worker; worker(sys.argv[1])",
        str(forms_file),
    ]
    outcome = run_process(argv, env=scratch.env, cwd=project, deadline=600)
    try:
        return json.loads(outcome.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        detail = "timed out" if outcome.hung else outcome.stderr.strip()[-400:]
        return {
            "tried": len(forms),
            "reached": None,
            "rows": [],
            "reached_forms": [],
            "control_seen": False,
            "error": f"the SSRF worker failed: {detail}",
        }


# ---- the worker: a modelled network, capy's fetch ---------------------------------------------


def worker(forms_file: str) -> None:
    from capy.bench.hostile_common import loopback_server

    forms = [tuple(item) for item in json.loads(Path(forms_file).read_text(encoding="utf-8"))]
    trap, redirector = _Counter(), _Counter()
    with (
        loopback_server(_handler(trap)) as trap_port,
        loopback_server(_handler(redirector)) as redirect_port,
        _modelled_network(trap_port, redirect_port),
    ):
        print(json.dumps(_fetch_all(forms, trap, redirector)))


class _Counter:
    def __init__(self) -> None:
        import threading

        self.hits = 0
        self.lock = threading.Lock()

    def add(self) -> None:
        with self.lock:
            self.hits += 1


def _handler(counter: _Counter):
    from http.server import BaseHTTPRequestHandler
    from urllib.parse import parse_qs, urlsplit

    class Handler(BaseHTTPRequestHandler):
        def setup(self) -> None:
            counter.add()  # a connection is the breach, whatever is said on it
            super().setup()

        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            if self.path.startswith("/redirect") and "to" in query:
                self.send_response(int(query.get("code", ["302"])[0]))
                self.send_header("Location", query["to"][0])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b"ami-id\ninstance-id\niam/security-credentials/\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return Handler


class _modelled_network:
    """Names resolve to loopback; every connection lands on the trap or the redirector."""

    def __init__(self, trap_port: int, redirect_port: int) -> None:
        self.trap_port, self.redirect_port = trap_port, redirect_port

    def __enter__(self):
        self._getaddrinfo, self._connect = socket.getaddrinfo, socket.create_connection
        real_getaddrinfo, real_connect = self._getaddrinfo, self._connect

        def getaddrinfo(host, port, *args, **kwargs):
            text = host.decode() if isinstance(host, bytes) else str(host)
            try:
                return real_getaddrinfo(text, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
            except (OSError, UnicodeError):
                pass
            answer = PUBLIC_ADDRESS if text.lower().rstrip(".") == PUBLIC_NAME else "127.0.0.1"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer, port or 80))]

        def create_connection(address, *args, **kwargs):
            port = self.redirect_port if address[0] == PUBLIC_ADDRESS else self.trap_port
            return real_connect(("127.0.0.1", port), *args, **kwargs)

        socket.getaddrinfo, socket.create_connection = getaddrinfo, create_connection
        return self

    def __exit__(self, *exc) -> None:
        socket.getaddrinfo, socket.create_connection = self._getaddrinfo, self._connect


def _fetch_all(forms: list[tuple[str, str]], trap: _Counter, redirector: _Counter) -> dict:
    from capy.api import ToolInputError, Workspace
    from capy.api.fetch import fetch_and_index

    workspace = Workspace(Path.cwd())
    rows: dict[str, dict] = {}
    reached: list[str] = []
    errors: list[str] = []
    for origin, url in forms:
        row = rows.setdefault(origin, {"origin": origin, "tried": 0, "reached": 0})
        row["tried"] += 1
        before = trap.hits
        try:
            fetch_and_index(workspace, url, force=True)
        except ToolInputError:
            pass  # refused as an argument: nothing was fetched
        except Exception as error:  # reported; the form still counts by the trap alone
            errors.append(f"{url!r}: {type(error).__name__}")
        if trap.hits > before:
            row["reached"] += 1
            reached.append(url)
    before = redirector.hits
    fetch_and_index(workspace, f"http://{PUBLIC_NAME}/control", force=True)
    public_seen = redirector.hits > before
    # And a connection to loopback made without capy's guard must land in the trap.
    before = trap.hits
    socket.create_connection(("127.0.0.1", 80), timeout=5).close()
    deadline = time.monotonic() + 5
    while trap.hits == before and time.monotonic() < deadline:
        time.sleep(0.01)
    return {
        "tried": sum(row["tried"] for row in rows.values()),
        "reached": len(reached),
        "rows": list(rows.values()),
        "reached_forms": reached,
        "errors": errors[:20],
        "control_seen": public_seen and trap.hits > before,
    }
