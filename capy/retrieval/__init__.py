"""One search core for the store, the vault and memory.

    from capy.retrieval import SearchFilters, search

    result = search(corpus, "circuit breaker timeout", rules=ruleset.view("search"))
    for hit in result.hits:
        print(hit.source_label, hit.title, hit.layer, hit.snippet)

A corpus is anything implementing `Corpus` (see `capy.store.corpus.StoreCorpus`); the core holds
no SQL and no policy: every constant comes from the search pack.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.retrieval.engine import search
    from capy.retrieval.model import Candidate, Corpus, SearchFilters, SearchHit, SearchResult

__all__ = ["Candidate", "Corpus", "SearchFilters", "SearchHit", "SearchResult", "search"]


def __getattr__(name: str):
    """The core's names, imported on first use: a hook that needs only `capy.retrieval.porter`
    must not load the engine and the search pack's views with it."""
    if name == "search":
        from capy.retrieval.engine import search

        return search
    if name in __all__:
        from capy.retrieval import model

        return getattr(model, name)
    raise AttributeError(f"module 'capy.retrieval' has no attribute {name!r}")
