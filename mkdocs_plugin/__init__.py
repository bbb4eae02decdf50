"""MkDocs plugin that adds the kb-qa chat widget to every page."""
