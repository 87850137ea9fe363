"""Checks of the agent side: capy's registration per platform, and the permission policies."""

from __future__ import annotations

from capy.doctor.context import DoctorContext
from capy.doctor.report import Check, Status

GROUP = "Agents"


def registrations(ctx: DoctorContext) -> list[Check]:
    from capy.setup.status import registration

    pack = ctx.view("platforms")
    checks = []
    for platform in pack.platforms:
        found = registration(pack, platform, ctx.project_dir, ctx.home)
        if found.anything:
            checks.append(_platform_check(found, _launch_problems(ctx, pack, found)))
    if not checks:
        checks.append(
            Check(
                GROUP,
                "registration",
                Status.WARN,
                "capy is not registered with any agent (no MCP server, no hooks) here or in ~",
                f"run `capy setup --platform KEY` with KEY one of {', '.join(pack.keys)}",
            )
        )
    return checks


def _launch_problems(ctx: DoctorContext, pack, found) -> list[str]:
    """Each registered command that does not start the way the agent starts it, once per
    distinct program (doctor stays fast with seven platforms registered)."""
    from capy.doctor.launch import clean_environment, probe_hook, probe_server

    environment = clean_environment(pack.probe_environment)
    probes = ctx.cache.setdefault("launch-probes", {})
    tail = [part for part in pack.mcp_server.command if part != "{capy}"] if pack.mcp_server else []
    hook_tail = len(pack.hook_command.split()) - 1
    problems = []
    for shown, argv in found.server_commands.items():
        own = _server_tail(argv, tail)
        key = ("server", tuple(argv[: len(argv) - len(own)]))
        if key not in probes:
            probes[key] = probe_server(argv, own, environment)
        problems += _failed(probes[key], f"the MCP server in {shown}")
    for shown, command in found.hook_commands.items():
        key = ("hook", command.rsplit(" hook ", 1)[0])
        if key not in probes:
            probes[key] = probe_hook(command, hook_tail, environment)
        problems += _failed(probes[key], f"the hooks in {shown}")
    return problems


def _server_tail(argv: list[str], tail: list[str]) -> list[str]:
    """capy's own words at the end of a server argv (`serve`, maybe with its flags)."""
    for end in range(len(argv) - 1, 0, -1):
        if argv[end : end + len(tail)] == tail:
            return argv[end:]
    return tail


def _failed(probe, what: str) -> list[str]:
    if probe.ok:
        return []
    return [f"{what}: `{probe.shown}` does not start from a clean shell ({probe.detail})"]


def _platform_check(found, launch_problems: list[str]) -> Check:
    platform = found.platform
    name = platform.name
    setup = f"run `capy setup --platform {platform.key}`"
    parts = [f"MCP in {', '.join(found.mcp)}" if found.mcp else "MCP server not registered"]
    missing = found.events - found.hooked_events
    hooked = len(found.events) - len(missing)
    where = ", ".join(sorted(found.hooks))
    parts.append(
        f"hooks for {hooked} of {len(found.events)} events" + (f" in {where}" if where else "")
    )
    problems = list(found.problems)
    if found.mcp_foreign:
        problems.append(f"a `capy` server of another form in {', '.join(found.mcp_foreign)}")
    if missing:
        problems.append("no hook for " + ", ".join(sorted(missing)))
    if found.doubled_events:
        problems.append(
            f"{len(found.doubled_events)} events registered in more than one file, so capy runs "
            "twice for each"
        )
    detail = "; ".join(parts)
    if launch_problems:
        return Check(
            GROUP,
            name,
            Status.FAIL,
            "; ".join([detail, *problems, *launch_problems]),
            f"{setup} with the capy you want the agent to run (setup writes its absolute path), "
            "or add `--command` to name the program",
        )
    if not problems and found.mcp:
        return Check(GROUP, name, Status.OK, detail)
    fix = setup
    if found.doubled_events:
        fix = f"{setup} --undo with --shared or --global to keep one scope"
    return Check(GROUP, name, Status.WARN, "; ".join([detail, *problems]), fix)


def policies(ctx: DoctorContext) -> list[Check]:
    from capy.security.policy import load_policy

    policy = load_policy(ctx.project_dir, home=ctx.home)
    counts = {level: 0 for level in ("deny", "ask", "allow")}
    files: dict[str, int] = {}
    for rule in policy.rules:
        counts[rule.decision] = counts.get(rule.decision, 0) + 1
        shown = policy.shown(rule)
        files[shown] = files.get(shown, 0) + 1
    builtins = sum(1 for item in ctx.view("security").policies if item.active)
    read = ", ".join(f"{path} ({count} rules)" for path, count in files.items()) or "none"
    detail = (
        f"settings files with rules: {read}; {counts['deny']} deny, {counts['ask']} ask, "
        f"{counts['allow']} allow; {builtins} built-in policies"
    )
    if policy.unreadable:
        broken = ", ".join(policy_file_name(item, policy) for item in policy.unreadable)
        return [
            Check(
                GROUP,
                "permission policies",
                Status.WARN,
                f"{detail}; unreadable: {broken} (nothing is allowed outright while it is broken)",
                "fix the JSON of the named file; `capy policy check` shows how a command is judged",
            )
        ]
    return [Check(GROUP, "permission policies", Status.OK, detail)]


def policy_file_name(item, policy) -> str:
    from capy.security.policy import policy_file

    return f"{policy_file(item, policy)} ({item.problem})"
