"""Index: chunks in, a stored index and ranked hits out.

Takes the chunks of ``kb_qa.ingest`` and gives a stored index and, for a question, ranked
hits. Embeddings (``embeddings``, cached by content hash), the store (``store``: Chroma
first, then the SQLite manifest of ``manifest``; the workspace claim of ``claim``), Chroma
itself (``chroma``), workspaces that name an index on a Chroma server (``workspace``), the
keyword index (``keyword``, BM25) and the fusion of the keyword and vector rankings with the
page ranking and the link graph's evidence (``retrieval``).

Imports the shared top-level modules and ``kb_qa.ingest``.
"""
