"""``python -m connect_worker.cli``: the ``sluice`` command."""

import sys

from connect_worker.cli.main import main

sys.exit(main())
