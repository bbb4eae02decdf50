"""Owners: what readers asked and rated in, the site owner's report out.

Takes the readers' ratings (``feedback``, in SQLite) and the log of answered questions
(``questionlog``, written by one background thread; their database readable by the
server's user alone, ``private_files``) and gives the owner's report (``insights``): the
questions as asked and the gaps, grouped and merged by their embeddings (``asked``,
``topics``), printed as text (``insights_render``), as one HTML page (``insights_html``,
its charts and tables in ``insights_parts``) or as CSV (``insights_csv``); ``forget``
deletes what a reader asks to have deleted.

Imports only the shared top-level modules.
"""
