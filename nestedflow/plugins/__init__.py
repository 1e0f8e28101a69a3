"""The stevedore loading every plugin group shares (``registry.Registry``):
resource types, check types, custom constraints, dispatchers."""
