"""The name ``kb_qa.snippet_guard`` under which Markdown loads the snippet guard.

The guard lives in ``kb_qa/ingest/snippet_guard.py``; this module keeps its old path
loadable, because that path is the extension's name in every index's fingerprint.
"""

from kb_qa.ingest.snippet_guard import SnippetGuard, makeExtension

__all__ = ["SnippetGuard", "makeExtension"]
