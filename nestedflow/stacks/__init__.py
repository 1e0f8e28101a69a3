"""The stack lifecycle: storing a stack, starting its traversals (through
``StackLifecycle.start_traversal``, but for a create's or an update's, which
store a template version with it), a stored template version
(``definition``), nested stacks (``children``)."""
