"""``python -m nestedflow.conductor``: the same as ``nestedflow-conductor``."""

import sys

from nestedflow.cmd.conductor import main

sys.exit(main())
