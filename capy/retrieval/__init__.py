"""One search core for the store, the vault and memory.

    from capy.retrieval import SearchFilters, search

    result = search(corpus, "circuit breaker timeout", rules=ruleset.view("search"))
    for hit in result.hits:
        print(hit.source_label, hit.title, hit.layer, hit.snippet)

A corpus is anything implementing `Corpus` (see `capy.store.corpus.StoreCorpus`); the core holds
no SQL and no policy: every constant comes from the search pack.
"""

from capy.retrieval.engine import search
from capy.retrieval.model import Candidate, Corpus, SearchFilters, SearchHit, SearchResult

__all__ = ["Candidate", "Corpus", "SearchFilters", "SearchHit", "SearchResult", "search"]
