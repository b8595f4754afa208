"""`python -m spanchunk` runs the command line."""

import sys

from spanchunk.cli import main

sys.exit(main())
