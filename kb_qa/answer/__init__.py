"""Answer: a question in, a stream of typed events out.

Takes a question (and the conversation before it) and a ``KnowledgeBase`` and gives the
answer as events (``events``: ``Status``, ``Delta``, ``Citations``, ``Done``, ``Error``),
run by ``answering``: the optional query rewrite (``rewrite``, on a thread of its own),
one generous retrieval (``prepare``), the prompt (``prompt``), one streamed LLM call
(``llm``) or the extractive answer when no model is configured (``extractive``, over
``blocks``), citations renumbered and resolved (``citations``) and how much of the answer
they cover (``coverage``).
``evaluate`` scores answers against a file of questions (``kb-qa eval``).

Imports the shared top-level modules, ``kb_qa.ingest``, ``kb_qa.index`` and ``kb_qa.kb``.
"""
