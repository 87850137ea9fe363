"""Code: one chunk per definition with leading comments, short ones merged, windows otherwise."""

from __future__ import annotations

from capy.chunking import chunk_text


def test_python_definitions(chunk, checks, fixture_text, snapshot):
    chunks = chunk("scheduler.py")
    checks.lines_kept(fixture_text("scheduler.py"), chunks)
    assert [c.title for c in chunks] == snapshot


def test_decorators_and_comments_travel_with_their_definition(chunk, checks):
    chunks = chunk("scheduler.py")
    (entry,) = checks.containing(chunks, "class Entry:")
    assert entry.content.startswith("@dataclass(order=True)\nclass Entry:")
    (due,) = checks.containing(chunks, "def due(self)")
    assert "# Skipped runs are dropped rather than replayed" in due.content


def test_go_doc_comments_and_receivers(chunk, checks):
    chunks = chunk("lease.go")
    assert [c.title for c in chunks][1:] == [
        "Manager",
        "Lease",
        "NewManager",
        "Acquire",
        "Complete",
    ]
    (acquire,) = [c for c in chunks if c.title == "Acquire"]
    assert acquire.content.startswith("// Acquire gives the job to worker")


def test_language_from_the_label_limits_the_rules(rules):
    text = (
        "def helper(x):\n    return x\n\n\nsetup(name='pkg')\n\n\n"
        "def main():\n    run()\n    return 0\n"
    )
    as_python = [c.title for c in chunk_text(text, label="setup.py", rules=rules)]
    assert "setup" not in " ".join(as_python)  # the C-function rule does not run on Python


def test_code_without_definitions_uses_windows(rules):
    text = "\n".join(f"x{n} = {n}" for n in range(130))
    chunks = chunk_text(text, label="values.py", rules=rules)
    assert chunks[0].title == f"values.py (lines 1-{rules.code.window_lines})"


def test_long_definition_is_windowed_under_its_name(rules, checks):
    body = "\n".join(f"    total += compute_value_{n}(items, factor={n})" for n in range(400))
    text = f"def accumulate(items):\n    total = 0\n{body}\n    return total\n"
    chunks = chunk_text(text, label="acc.py", rules=rules)
    checks.well_formed(chunks)
    assert len(chunks) > 1 and {c.title for c in chunks} == {"accumulate"}
    checks.lines_kept(text, chunks)


TS_STORE = """\
/** fetch wrapper that retries once after a 401 with a fresh token. */
export function authedFetch(store: SessionStore, fetchImpl: typeof fetch = fetch) {
  return async (input: RequestInfo, init: RequestInit = {}): Promise<Response> => {
    const send = async (token: string) =>
      fetchImpl(input, { ...init, headers: { Authorization: `Bearer ${token}` } });
    let resp = await send(await store.getAccessToken());
    if (resp.status === 401) {
      resp = await send((await store.refresh()).accessToken);
    }
    return resp;
  };
}

export class SessionStore {
  private session: Session | null = null;

  constructor(private readonly storage: StorageLike) {
    this.session = loadSession(storage);
  }

  private async doRefresh(session: Session | null, attempt = 1): Promise<Session> {
    if (!session) throw new RefreshFailedError('no session');
    return this.fetchTokens(session.refreshToken, attempt);
  }

  get expired(): boolean {
    return this.session === null || this.session.expiresAt < Date.now();
  }
}
"""


def test_a_definition_keeps_its_opening_lines_with_its_first_nested_one(rules, checks):
    chunks = chunk_text(TS_STORE, label="sessionStore.ts", rules=rules)
    checks.lines_kept(TS_STORE, chunks)
    # The signature and doc comment of authedFetch stay with the closure that does the work.
    (fetch,) = checks.containing(chunks, "if (resp.status === 401)")
    assert fetch.content.startswith("/** fetch wrapper")
    assert fetch.title == "authedFetch > send"


def test_typescript_class_methods_are_definitions(rules):
    chunks = chunk_text(TS_STORE, label="sessionStore.ts", rules=rules)
    assert [c.title for c in chunks][1:] == [
        "SessionStore > constructor",
        "SessionStore > doRefresh",
        "SessionStore > expired",
    ]
