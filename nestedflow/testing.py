"""Helpers for tests and people checking what a stack really left behind."""


def physical_objects(engine, stack_id=None):
    """Live physical objects (of the built-in test types) in ``engine``'s database.

    Each has ``id``, ``stack_id``, ``resource_name``, ``type``, ``properties``
    and ``state``. ``stack_id`` narrows the list to one stack.
    """
    return engine.store.live(stack_id)
