"""The stack lifecycle: storing a stack, starting its traversals (through
``StackLifecycle.start_traversal``, or its ``begin_traversal`` for an action
run at once -- a snapshot, an abandon --, but for a create's or an update's,
which store a template version with it; each records its request id), a
stored template version (``definition``), nested stacks (``children``)."""
