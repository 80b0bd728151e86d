"""``python -m plainsight`` runs the command-line interface (the same as the ``plainsight`` script)."""

from plainsight.middleware.cli import main

raise SystemExit(main())
