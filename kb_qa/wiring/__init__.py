"""Wiring: ``kb-qa init``, a site in, its config wired to the widget out.

Takes a site folder (an MkDocs, ProperDocs or Zensical config, or a folder of built HTML
pages) and the widget's options and gives the plan of edits (``plan``) that puts the widget
in every page (its options in ``options``, its tags in ``tags``, file changes that keep each
file's encoding in ``changes``), written with the user's own formatting and comments kept
(``yaml_edit``).

Imports the shared top-level modules and ``kb_qa.ingest``.
"""
