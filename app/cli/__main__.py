"""`python -m app.cli`: the command line without the installed `tessera` script."""

import sys

from app.cli import main

sys.exit(main())
