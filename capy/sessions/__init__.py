"""Agent session transcripts: parsing (Claude Code JSONL, Codex rollouts) into one model, and
the knowledge-base sweep that indexes past sessions as turn-pair transcripts.

- `capy.sessions.model`: Session, Message (one per row: user/assistant/tool/system), ToolCall,
  ToolResult, Compaction, ParseReport.
- `capy.sessions.claude.parse_claude`, `capy.sessions.codex.parse_codex`, or
  `capy.sessions.discovery.parse_session` for a discovered file of either format.
- `capy.sessions.redaction.redact_session`: secrets masked before anything is built from it.
- `capy.sessions.transcript.build_transcript`: the Human/Assistant markdown that is indexed.
- `capy.sessions.sweep.sweep`: what `capy sweep` runs.
"""
