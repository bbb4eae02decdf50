"""``python -m kb_qa.cli``: the ``kb-qa`` command."""

from kb_qa.cli import main

raise SystemExit(main())
