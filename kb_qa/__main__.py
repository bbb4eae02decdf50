"""``python -m kb_qa``: the ``kb-qa`` command, as ``python -m kb_qa.cli`` runs it."""

from kb_qa.cli import main

raise SystemExit(main())
