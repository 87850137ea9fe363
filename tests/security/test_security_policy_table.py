"""Agreement with Claude Code's documented permission rules, case by case.

Each case cites the statement it checks, from https://code.claude.com/docs/en/permissions (and
the older https://docs.anthropic.com/en/docs/claude-code/iam page with the same rules). Every
case writes its rules to a real `.claude/settings.json` and judges a real call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    target: str  # command, path ({project}/{home} expanded) or URL
    expected: str
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)


CASES = [
    # "Bash(npm run test:*) Matches Bash commands starting with npm run test"
    Case("prefix-allows-bare", "Bash", "npm run test", "allow", allow=["Bash(npm run test:*)"]),
    Case(
        "prefix-allows-args",
        "Bash",
        "npm run test -- --ci",
        "allow",
        allow=["Bash(npm run test:*)"],
    ),
    Case("prefix-deny", "Bash", "git push origin main", "deny", deny=["Bash(git push:*)"]),
    # ":*" is a word-boundary prefix: "git push:*" does not cover "git pushx".
    Case("prefix-word-boundary", "Bash", "git pushx", "none", deny=["Bash(git push:*)"]),
    # "Bash(npm run build) Matches the exact Bash command npm run build"
    Case("exact-match", "Bash", "npm run build", "allow", allow=["Bash(npm run build)"]),
    Case(
        "exact-no-extra-args", "Bash", "npm run build --prod", "none", allow=["Bash(npm run build)"]
    ),
    # "Claude Code is aware of shell operators (like &&) so a prefix match rule like
    # Bash(safe-cmd:*) won't give it permission to run the command safe-cmd && other-cmd"
    Case("and-operator", "Bash", "safe-cmd && other-cmd", "none", allow=["Bash(safe-cmd:*)"]),
    Case("or-operator", "Bash", "safe-cmd || other-cmd", "none", allow=["Bash(safe-cmd:*)"]),
    Case("semicolon", "Bash", "safe-cmd; other-cmd", "none", allow=["Bash(safe-cmd:*)"]),
    Case("pipe", "Bash", "safe-cmd | other-cmd", "none", allow=["Bash(safe-cmd:*)"]),
    Case("background", "Bash", "safe-cmd & other-cmd", "none", allow=["Bash(safe-cmd:*)"]),
    Case("newline", "Bash", "safe-cmd\nother-cmd", "none", allow=["Bash(safe-cmd:*)"]),
    Case("substitution", "Bash", "safe-cmd $(other-cmd)", "none", allow=["Bash(safe-cmd:*)"]),
    Case("backticks", "Bash", "safe-cmd `other-cmd`", "none", allow=["Bash(safe-cmd:*)"]),
    # ... and with a rule for each subcommand, the compound command is allowed.
    Case(
        "every-part-allowed",
        "Bash",
        "safe-cmd && other-cmd",
        "allow",
        allow=["Bash(safe-cmd:*)", "Bash(other-cmd:*)"],
    ),
    # Quoted operators are text, not operators.
    Case("quoted-operator", "Bash", "safe-cmd 'a && b'", "allow", allow=["Bash(safe-cmd:*)"]),
    # "The space before * matters: Bash(ls *) matches ls -la but not lsof, while Bash(ls*)
    # matches both" and a trailing " *" requires "a space or end-of-string" after the prefix.
    Case("space-star-args", "Bash", "ls -la", "allow", allow=["Bash(ls *)"]),
    Case("space-star-boundary", "Bash", "lsof", "none", allow=["Bash(ls *)"]),
    Case("space-star-bare", "Bash", "ls", "allow", allow=["Bash(ls *)"]),
    Case("star-no-boundary", "Bash", "lsof", "allow", allow=["Bash(ls*)"]),
    # "Bash(git * main)" — a wildcard can sit anywhere in the pattern.
    Case("middle-star", "Bash", "git checkout main", "allow", allow=["Bash(git * main)"]),
    Case("middle-star-miss", "Bash", "git checkout dev", "none", allow=["Bash(git * main)"]),
    Case("leading-star", "Bash", "pnpm install", "allow", allow=["Bash(* install)"]),
    # "A rule that is just the tool name matches any use of that tool" / "Bash(*) is
    # equivalent to Bash".
    Case("bare-tool-allow", "Bash", "make -j8 all", "allow", allow=["Bash"]),
    Case("star-is-bare", "Bash", "make", "allow", allow=["Bash(*)"]),
    Case("bare-tool-deny", "Bash", "ls", "deny", deny=["Bash"], allow=["Bash(ls)"]),
    # "Rules are evaluated in order: deny, then ask, then allow. The first match in that order
    # determines the outcome, and rule specificity does not change the order."
    # "A broad deny rule like Bash(aws *) blocks every matching call, including calls that also
    # match a more specific allow rule like Bash(aws s3 ls)."
    Case(
        "deny-beats-specific-allow",
        "Bash",
        "aws s3 ls",
        "deny",
        deny=["Bash(aws *)"],
        allow=["Bash(aws s3 ls)"],
    ),
    # "A matching ask rule prompts even when a more specific allow rule also matches."
    Case(
        "ask-beats-specific-allow",
        "Bash",
        "git push origin main",
        "ask",
        ask=["Bash(git push *)"],
        allow=["Bash(git push origin main)"],
    ),
    Case(
        "deny-beats-ask",
        "Bash",
        "git push",
        "deny",
        deny=["Bash(git push)"],
        ask=["Bash(git push)"],
    ),
    Case("deny-in-subcommand", "Bash", "cd app && curl example.com", "deny", deny=["Bash(curl:*)"]),
    Case("deny-in-substitution", "Bash", "echo $(rm -rf build)", "deny", deny=["Bash(rm:*)"]),
    Case("quoted-is-not-a-command", "Bash", "echo 'rm -rf build'", "none", deny=["Bash(rm:*)"]),
    # Read & Edit rules "follow the gitignore specification", with four pattern types:
    # "//path: absolute path from filesystem root", e.g. Read(//Users/alice/secrets/**)
    Case("abs-anchor", "Read", "/etc/ssl/private/key.pem", "deny", deny=["Read(//etc/ssl/**)"]),
    Case("abs-anchor-miss", "Read", "/var/etc/ssl/x", "none", deny=["Read(//etc/ssl/**)"]),
    # "~/path: path from home directory", e.g. Read(~/Documents/*.pdf)
    Case(
        "home-anchor", "Read", "{home}/Documents/tax.pdf", "deny", deny=["Read(~/Documents/*.pdf)"]
    ),
    # gitignore: "*" does not cross a "/".
    Case(
        "home-star-one-level",
        "Read",
        "{home}/Documents/a/b.pdf",
        "none",
        deny=["Read(~/Documents/*.pdf)"],
    ),
    Case("home-tilde-path", "Read", "~/.ssh/id_ed25519", "deny", deny=["Read(~/.ssh/**)"]),
    # "/path: path relative to settings file", e.g. Edit(/src/**/*.ts)
    Case(
        "settings-anchor", "Edit", "{project}/src/app/main.ts", "deny", deny=["Edit(/src/**/*.ts)"]
    ),
    Case(
        "settings-anchor-direct",
        "Edit",
        "{project}/src/main.ts",
        "deny",
        deny=["Edit(/src/**/*.ts)"],
    ),
    Case(
        "settings-anchor-miss",
        "Edit",
        "{project}/lib/src/main.ts",
        "none",
        deny=["Edit(/src/**/*.ts)"],
    ),
    # "path or ./path: path relative to current directory", e.g. Read(*.env); gitignore: a
    # pattern without a slash matches at any depth.
    Case("relative-any-depth", "Read", "config/prod.env", "deny", deny=["Read(*.env)"]),
    Case("relative-not-outside", "Read", "/srv/other/prod.env", "none", deny=["Read(*.env)"]),
    Case("dot-slash", "Read", ".env", "deny", deny=["Read(./.env)"]),
    # "Edit(docs/**) Matches edits to files in the docs directory of your project"
    Case("edit-docs", "Edit", "docs/guide/intro.md", "allow", allow=["Edit(docs/**)"]),
    # "Edit rules apply to all built-in tools that edit files."
    Case("edit-covers-write", "Write", "docs/new.md", "allow", allow=["Edit(docs/**)"]),
    Case("edit-covers-multiedit", "MultiEdit", "docs/a.md", "deny", deny=["Edit(docs/**)"]),
    # "Claude will make a best-effort attempt to apply Read rules to all built-in tools that
    # read files like Grep, Glob, and LS."
    Case("read-covers-grep", "Grep", "secrets/token.txt", "deny", deny=["Read(secrets/**)"]),
    Case("read-covers-glob", "Glob", "secrets", "deny", deny=["Read(secrets/)"]),
    Case("read-bare-tool", "Read", "README.md", "deny", deny=["Read"]),
    # A path is judged after `..` is folded, so `src/../.env` is `.env`.
    Case("dotdot-folded", "Read", "src/../.env", "none", allow=["Read(src/**)"]),
    # "WebFetch(domain:example.com) Matches fetch requests to example.com"
    Case(
        "domain",
        "WebFetch",
        "https://example.com/docs",
        "allow",
        allow=["WebFetch(domain:example.com)"],
    ),
    Case(
        "domain-in-query",
        "WebFetch",
        "https://evil.test/?u=example.com",
        "none",
        allow=["WebFetch(domain:example.com)"],
    ),
    Case(
        "domain-suffix",
        "WebFetch",
        "https://example.com.evil.test/",
        "none",
        allow=["WebFetch(domain:example.com)"],
    ),
    Case(
        "domain-userinfo",
        "WebFetch",
        "https://example.com@evil.test/",
        "none",
        allow=["WebFetch(domain:example.com)"],
    ),
    Case(
        "domain-port",
        "WebFetch",
        "https://EXAMPLE.com:8443/a",
        "allow",
        allow=["WebFetch(domain:example.com)"],
    ),
    Case(
        "webfetch-bare-deny",
        "WebFetch",
        "https://example.com",
        "deny",
        deny=["WebFetch"],
        allow=["WebFetch(domain:example.com)"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_policy_agrees_with_claude_code_docs(case: Case, settings):
    settings.write("project", deny=case.deny, ask=case.ask, allow=case.allow)
    target = case.target.format(project=settings.project, home=settings.home)
    if case.tool == "Bash":
        decision = settings.check_command(target)
    elif case.tool == "WebFetch":
        decision = settings.check_tool("WebFetch", url=target)
    else:
        decision = settings.check_tool(case.tool, path=target)
    assert decision.decision == case.expected, decision
    if case.expected != "none":
        assert decision.source == ".claude/settings.json"


def test_the_table_is_big_enough():
    assert len(CASES) >= 40
