"""The stack lifecycle (storing a stack, starting every traversal through
``StackLifecycle.start_traversal``), a stored template version
(``definition``), nested stacks (``children``)."""
