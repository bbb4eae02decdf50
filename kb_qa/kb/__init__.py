"""The knowledge base: the stages joined behind one object, ``KnowledgeBase``.

Takes a vault (or a docs site) and settings and gives an index kept up to date (the index
run: read, render, chunk, embed, store) and a search over it (the in-memory view of every
chunk's text and vector, the keyword index and the fused ranking), with what it knows about
how stale the index is. ``knowledge_base`` holds the object and its search, ``index_run``
the index run, ``view`` the search view, ``staleness`` the fingerprint and the include map.

Imports the shared top-level modules, ``kb_qa.ingest`` and ``kb_qa.index``.
"""
