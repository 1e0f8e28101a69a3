"""nestedflow's programs: the ``nestedflow`` command, the conductor and the
RPC engine service."""

import os

# nestedflow never runs green threads, but TaskFlow imports eventlet where it
# is installed (through oslo_utils.eventletutils), and eventlet then imports
# dnspython for its green resolver: 0.2 s of CPU at the start of every
# command. Set for the processes nestedflow's programs start only; a host
# that embeds the engine keeps its own eventlet set-up.
os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")
