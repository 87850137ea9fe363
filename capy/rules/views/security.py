"""Typed view of the security pack: command policies, shell escapes, HTTP detection, SSRF, fetch."""

from __future__ import annotations

import contextlib
import ipaddress
import re
from enum import StrEnum
from functools import cached_property

from capy.rules.commands import command_pattern_regex, normalise_command
from capy.rules.views.base import (
    PackView,
    RuleView,
    Section,
    active,
    field_validator,
    model_validator,
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class Decision(StrEnum):
    DENY = "deny"
    ASK = "ask"


class Verdict(StrEnum):
    BLOCK = "block"
    EMBEDDED_IPV4 = "embedded-ipv4"


class MatchKind(StrEnum):
    EXACT = "exact"
    PREFIX = "prefix"


class Policy(RuleView):
    tool: str
    decision: Decision
    pattern: str
    reason: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return command_pattern_regex(self.pattern)

    def matches(self, command: str) -> bool:
        return self.regex.match(normalise_command(command)) is not None


class WrapperRuns(StrEnum):
    COMMAND = "command"
    SHELL_STRING = "shell-string"
    JOINED_SHELL_STRING = "joined-shell-string"


class AllowRules(StrEnum):
    SEE_THROUGH = "see-through"
    SEE_THROUGH_WHEN_BARE = "see-through-when-bare"
    AS_WRITTEN = "as-written"


class UnwrapExample(Section):
    command: str
    runs: tuple[str, ...]


class WrapperExamples(Section):
    unwrap: tuple[UnwrapExample, ...]
    keep: tuple[str, ...] = ()


class CommandWrapper(RuleView):
    """A program that runs the command in its arguments (`timeout 5 CMD`, `bash -c LINE`)."""

    names: tuple[str, ...]
    value_options: frozenset[str] = frozenset()
    flag_options: frozenset[str] = frozenset()
    query_options: frozenset[str] = frozenset()
    opaque_options: frozenset[str] = frozenset()
    assignments: bool = False
    operands: int = 0
    runs: WrapperRuns
    shell_string_flag: str | None = None
    allow_rules: AllowRules
    examples: WrapperExamples


class CommandWrappers(Section):
    max_depth: int
    fail_closed_max_words: int
    wrappers: tuple[CommandWrapper, ...]

    @cached_property
    def _by_name(self) -> dict[str, CommandWrapper]:
        table: dict[str, CommandWrapper] = {}
        for wrapper in active(self.wrappers):
            for name in wrapper.names:
                table.setdefault(name, wrapper)
        return table

    def find(self, program: str) -> CommandWrapper | None:
        """The wrapper a program word names, also as a path (`/usr/bin/timeout`)."""
        return self._by_name.get(program.rsplit("/", 1)[-1])


class _RegexRule(RuleView):
    pattern: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


class CodeRule(_RegexRule):
    """A shell-escape or inline-HTTP rule; `group` is `cmd` or `url`."""

    languages: tuple[str, ...]

    def applies_to(self, language: str) -> bool:
        return language in self.languages

    def captures(self, code: str, group: str) -> list[str | None]:
        """One entry per call found: the literal argument, or None when it is not a literal."""
        if group not in self.regex.groupindex:
            return [None for _ in self.regex.finditer(code)]
        return [match.group(group) for match in self.regex.finditer(code)]


class HttpException(_RegexRule):
    exempt_refs: tuple[str, ...]


class HttpCommands(Section):
    detectors: tuple[_RegexRule, ...]
    exceptions: tuple[HttpException, ...]

    def detect(self, command: str) -> tuple[str, ...]:
        """Ids of the detectors that fire on a command and are not exempted for it."""
        exempt = {
            rule_id
            for exception in active(self.exceptions)
            if exception.regex.search(command)
            for rule_id in exception.exempt_refs
        }
        return tuple(
            rule.id
            for rule in active(self.detectors)
            if rule.id not in exempt and rule.regex.search(command)
        )


class BlockedNetwork(RuleView):
    cidr: str
    name: str
    rfc: str
    verdict: Verdict = Verdict.BLOCK

    @field_validator("cidr")
    @classmethod
    def _parses(cls, value: str) -> str:
        ipaddress.ip_network(value, strict=True)  # ValueError names the bad CIDR
        return value

    @cached_property
    def network(self) -> IPNetwork:
        """Strict parse: a CIDR with host bits set is a pack error, not something to round."""
        return ipaddress.ip_network(self.cidr, strict=True)


class BitRange(Section):
    offset: int
    length: int


class EmbeddedIPv4(RuleView):
    prefix: str
    segments: tuple[BitRange, ...]
    xor: int

    @model_validator(mode="after")
    def _fits(self) -> EmbeddedIPv4:
        ipaddress.IPv6Network(self.prefix, strict=True)
        if sum(segment.length for segment in self.segments) != 32:
            raise ValueError(f"{self.id}: segment lengths must add up to 32 bits")
        if any(segment.offset + segment.length > 128 for segment in self.segments):
            raise ValueError(f"{self.id}: a segment runs past bit 128")
        return self

    @cached_property
    def network(self) -> ipaddress.IPv6Network:
        return ipaddress.IPv6Network(self.prefix, strict=True)

    def extract(self, address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
        if address not in self.network:
            return None
        bits = int(address)
        value = 0
        for segment in self.segments:
            shift = 128 - segment.offset - segment.length
            value = (value << segment.length) | ((bits >> shift) & ((1 << segment.length) - 1))
        return ipaddress.IPv4Address((value ^ self.xor) & 0xFFFFFFFF)


class MetadataHost(RuleView):
    host: str
    provider: str


class BlockedHostname(RuleView):
    host: str


def _canonical_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


class Ssrf(Section):
    fail_closed: bool
    allowed_schemes: tuple[str, ...]
    max_redirects: int
    blocked_networks: tuple[BlockedNetwork, ...]
    embedded_ipv4: tuple[EmbeddedIPv4, ...]
    metadata_hosts: tuple[MetadataHost, ...]
    blocked_hostnames: tuple[BlockedHostname, ...]

    def networks(self) -> tuple[tuple[IPNetwork, BlockedNetwork], ...]:
        """Every active blocked network as an `ipaddress` object with the rule that lists it."""
        return tuple((rule.network, rule) for rule in active(self.blocked_networks))

    @cached_property
    def _metadata_by_host(self) -> dict[str, MetadataHost]:
        table: dict[str, MetadataHost] = {}
        for rule in active(self.metadata_hosts):
            host = _canonical_host(rule.host)
            with contextlib.suppress(ValueError):
                host = str(ipaddress.ip_address(host))
            table.setdefault(host, rule)
        return table

    def scheme_allowed(self, scheme: str) -> bool:
        return scheme.lower() in self.allowed_schemes

    def host_rule(self, host: str) -> RuleView | None:
        """The rule refusing a host by name (before resolution), if any."""
        name = _canonical_host(host)
        if name in self._metadata_by_host:
            return self._metadata_by_host[name]
        for rule in active(self.blocked_hostnames):
            pattern = rule.host.lower()
            if name == pattern or (pattern.startswith(".") and name.endswith(pattern)):
                return rule
        return None

    def address_rule(self, address: str | IPAddress) -> RuleView | None:
        """The rule refusing a resolved address, if any.

        Direct blocks first, then metadata addresses, then the IPv4 embedded in IPv6 forms (so a
        NAT64 address of a public site passes while [::ffff:127.0.0.1] does not).
        """
        ip = ipaddress.ip_address(address) if isinstance(address, str) else address
        for network, rule in self.networks():
            if rule.verdict is Verdict.BLOCK and ip.version == network.version and ip in network:
                return rule
        if str(ip) in self._metadata_by_host:
            return self._metadata_by_host[str(ip)]
        if isinstance(ip, ipaddress.IPv6Address):
            for embedding in active(self.embedded_ipv4):
                inner = embedding.extract(ip)
                if inner is not None and (found := self.address_rule(inner)) is not None:
                    return found
        return None


class RefusedType(RuleView):
    media_type: str
    match: MatchKind


class AllowedType(RuleView):
    media_type: str


class BinaryContentTypes(Section):
    refuse: tuple[RefusedType, ...]
    allow: tuple[AllowedType, ...]

    def refusing_rule(self, content_type: str) -> RefusedType | None:
        """The rule refusing a Content-Type header value (parameters ignored), if any."""
        media = content_type.split(";", 1)[0].strip().lower()
        if any(rule.media_type == media for rule in active(self.allow)):
            return None
        for rule in active(self.refuse):
            if media == rule.media_type or (
                rule.match is MatchKind.PREFIX and media.startswith(rule.media_type)
            ):
                return rule
        return None


class FetchConcurrency(Section):
    default: int
    max: int

    @model_validator(mode="after")
    def _default_within_max(self) -> FetchConcurrency:
        if self.default > self.max:
            raise ValueError(f"concurrency default {self.default} exceeds max {self.max}")
        return self


class PageChrome(Section):
    content_roots: tuple[str, ...]
    drop_selectors: tuple[str, ...]
    drop_outside_content: tuple[str, ...]
    keep_within: tuple[str, ...]


class FetchPreview(Section):
    max_lines: int
    max_line_chars: int


class Fetch(Section):
    max_response_bytes: int
    concurrency: FetchConcurrency
    page_chrome: PageChrome
    preview: FetchPreview


class SecurityPack(PackView):
    policies: tuple[Policy, ...]
    # Optional so an older overlay-free copy of the pack still loads; without it nothing is
    # unwrapped and wrapped commands are judged as written.
    command_wrappers: CommandWrappers | None = None
    shell_escapes: tuple[CodeRule, ...]
    http_commands: HttpCommands
    inline_http: tuple[CodeRule, ...]
    ssrf: Ssrf
    binary_content_types: BinaryContentTypes
    fetch: Fetch

    def policy_for(self, command: str, tool: str = "Bash") -> Policy | None:
        """The deciding policy for a command: the first deny, else the first ask, else None."""
        hits = [p for p in active(self.policies) if p.tool == tool and p.matches(command)]
        return next((p for p in hits if p.decision is Decision.DENY), hits[0] if hits else None)

    def shell_escapes_for(self, language: str) -> tuple[CodeRule, ...]:
        return tuple(rule for rule in active(self.shell_escapes) if rule.applies_to(language))

    def inline_http_for(self, language: str) -> tuple[CodeRule, ...]:
        return tuple(rule for rule in active(self.inline_http) if rule.applies_to(language))


VIEW = SecurityPack


def check_examples(view: SecurityPack) -> tuple[int, int, list]:
    """Run every command wrapper's examples through the unwrapper (for `capy rules validate`):
    an `unwrap` example must run exactly its `runs`, a `keep` example must run nothing."""
    from capy.rules.lint import ExampleProblem
    from capy.security.wrappers import unwrap

    wrappers = view.command_wrappers
    problems, count = [], 0
    for wrapper in active(wrappers.wrappers):
        for index, example in enumerate(wrapper.examples.unwrap):
            count += 1
            found = unwrap(example.command, wrappers)
            runs = found.commands if found is not None else ()
            if found is None or found.wrapper.id != wrapper.id or runs != example.runs:
                problems.append(
                    ExampleProblem(
                        wrapper.id,
                        ("examples", "unwrap", index),
                        f"unwrap example {index + 1} runs {list(runs)!r}, not "
                        f"{list(example.runs)!r}: {example.command!r}",
                        "fix the wrapper's options or the example",
                    )
                )
        for index, command in enumerate(wrapper.examples.keep):
            count += 1
            found = unwrap(command, wrappers)
            if found is not None and found.commands:
                problems.append(
                    ExampleProblem(
                        wrapper.id,
                        ("examples", "keep", index),
                        f"keep example {index + 1} runs {list(found.commands)!r}: {command!r}",
                        "a keep example must run nothing; fix the wrapper or the example",
                    )
                )
    return len(active(wrappers.wrappers)), count, problems
