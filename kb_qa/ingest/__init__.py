"""Ingest: a vault or docs site in, chunks out.

Takes a folder and its site config (``mkdocs.yml``, ``properdocs.yml``, ``zensical.toml`` or
none) and gives chunks: heading sections with their text, heading path, anchor, URL,
offsets, lines and links. Reading the site config (``site``, Zensical's rules in
``zensical``, the loader that runs nothing in ``safe_config``), finding and reading files
(``vault``; front matter and Logseq's page properties in ``front_matter``), rendering
pages as the site does (``render``: what a render depends on in ``render_config``, which
files it lists and its passes, one per language of a translated site, in
``render_files``, what a page includes in ``page_includes``, the chunks of a rendered
page in ``rendered_chunks``, snippets kept inside the vault by ``snippet_guard``),
chunking by heading (``chunking``), the ids the site renders (``anchors``), the docs' own
links (``linkgraph``), citation link styles (``links``), the time limit on parsing
(``deadline``) and the watcher that starts an index run on edits (``watch``; what it sees
of a change in ``changes``).

Imports only the shared top-level modules (errors, settings, text, types).
"""
