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
    # "Wildcard patterns" table: each row's "Matches" and "Doesn't match" columns.
    Case("npm-run-star-build", "Bash", "npm run build", "allow", allow=["Bash(npm run *)"]),
    Case("npm-run-star-bare", "Bash", "npm run", "allow", allow=["Bash(npm run *)"]),
    Case("npm-run-star-miss", "Bash", "npm install", "none", allow=["Bash(npm run *)"]),
    Case(
        "git-log-star-main",
        "Bash",
        "git log --oneline main",
        "allow",
        allow=["Bash(git log * main)"],
    ),
    Case("git-log-star-main-bare", "Bash", "git log main", "none", allow=["Bash(git log * main)"]),
    Case("git-star-main-push", "Bash", "git push origin main", "allow", allow=["Bash(git * main)"]),
    Case("git-star-main-miss", "Bash", "git log", "none", allow=["Bash(git * main)"]),
    Case("star-version", "Bash", "node --version", "allow", allow=["Bash(* --version)"]),
    Case("star-version-miss", "Bash", "node -v", "none", allow=["Bash(* --version)"]),
    # "That holds only when the trailing * is the rule's only wildcard: Bash(* --help *) matches
    # npm --help x but not npm --help."
    Case("two-stars-args", "Bash", "npm --help x", "allow", allow=["Bash(* --help *)"]),
    Case("two-stars-not-bare", "Bash", "npm --help", "none", allow=["Bash(* --help *)"]),
    # "Bash(npm run test *)": the word-boundary prefix of the brief, with and without arguments.
    Case("trailing-bare", "Bash", "npm run test", "allow", allow=["Bash(npm run test *)"]),
    Case("trailing-boundary", "Bash", "npm run testx", "none", allow=["Bash(npm run test *)"]),
    # "Bash(ls*) has no space, so it matches lsof too"; the same for git diff*.
    Case("no-space-difftool", "Bash", "git difftool", "allow", allow=["Bash(git diff*)"]),
    # "The :* suffix is an equivalent way to write a trailing wildcard, so Bash(ls:*) matches the
    # same commands as Bash(ls *)"; "In a pattern like Bash(git:* push), the colon is treated as
    # a literal character and won't match git commands."
    Case("colon-star-bare", "Bash", "ls", "allow", allow=["Bash(ls:*)"]),
    Case("colon-star-boundary", "Bash", "lsof", "none", allow=["Bash(ls:*)"]),
    Case("colon-star-inside", "Bash", "git push", "none", allow=["Bash(git:* push)"]),
    # "The recognized command separators are &&, ||, ;, |, |&, &, and newlines."
    Case("pipe-ampersand", "Bash", "safe-cmd |& other-cmd", "none", allow=["Bash(safe-cmd *)"]),
    # "Bash(curl http://github.com/ *) ... won't match ... Options before URL".
    Case(
        "fragile-url-rule",
        "Bash",
        "curl -X GET http://github.com/x",
        "none",
        allow=["Bash(curl http://github.com/ *)"],
    ),
    # Changelog 1.0.123: "Bash(python:*) matches python script.py > output.txt".
    Case("redirect", "Bash", "python script.py > output.txt", "allow", allow=["Bash(python:*)"]),
    # "Wrappers": "a rule like Bash(npm test *) also matches timeout 30 npm test".
    Case("wrapper-timeout", "Bash", "timeout 30 npm test", "allow", allow=["Bash(npm test *)"]),
    Case("wrapper-nice", "Bash", "nice -n 10 npm test", "allow", allow=["Bash(npm test *)"]),
    Case("wrapper-nohup", "Bash", "nohup npm test", "allow", allow=["Bash(npm test *)"]),
    # "Bare xargs is also stripped, so Bash(grep *) matches xargs grep pattern ... an invocation
    # like xargs -n1 grep pattern is matched as an xargs command".
    Case("wrapper-xargs-bare", "Bash", "xargs grep pattern", "allow", allow=["Bash(grep *)"]),
    Case("wrapper-xargs-flags", "Bash", "xargs -n1 grep pattern", "none", allow=["Bash(grep *)"]),
    # "Two related forms aren't stripped: the query form command -v".
    Case("wrapper-command-v", "Bash", "command -v npm", "none", allow=["Bash(npm *)"]),
    # "a rule like Bash(devbox run *) matches whatever comes after run, including devbox run
    # rm -rf ." (runners are not stripped, so the runner's own rule decides).
    Case("runner-not-stripped", "Bash", "devbox run npm test", "none", allow=["Bash(npm test *)"]),
    Case("runner-rule", "Bash", "devbox run rm -rf .", "allow", allow=["Bash(devbox run *)"]),
    # "A deny or ask rule matches past any leading assignment, so Bash(rm *) in deny still
    # matches FOO=bar rm -rf tmp/."
    Case("deny-past-assignment", "Bash", "FOO=bar rm -rf tmp/", "deny", deny=["Bash(rm *)"]),
    # capy goes further for deny and ask: every wrapper, nested shells included.
    Case("deny-through-timeout", "Bash", "timeout 5 git push", "deny", deny=["Bash(git push *)"]),
    Case("deny-through-sudo", "Bash", "sudo -u ci git push", "deny", deny=["Bash(git push *)"]),
    Case("deny-through-env", "Bash", "env CI=1 git push", "deny", deny=["Bash(git push *)"]),
    Case(
        "deny-through-bash-c",
        "Bash",
        "bash -c 'make && git push'",
        "deny",
        deny=["Bash(git push *)"],
    ),
    Case("ask-through-xargs", "Bash", "xargs -0 git push", "ask", ask=["Bash(git push *)"]),
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
    assert len(CASES) >= 80
