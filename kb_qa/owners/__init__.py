"""Owners: what readers asked and rated in, the site owner's report out.

Takes the readers' ratings (``feedback``, in SQLite) and the log of answered questions
(``questionlog``, written by one background thread) and gives the owner's report
(``insights``): gaps, topics of unanswered questions grouped and merged by their embeddings
(``topics``), printed as text or as one HTML page (``insights_render``).

Imports only the shared top-level modules.
"""
