"""How the Engine makes its parts on first use (:meth:`nestedflow.Engine._build`):
reading stacks needs only the database, so a command line answering
``stack list`` does not import or start what runs traversals."""


class Built:
    """An engine part made on first use (see Engine._build).

    A non-data descriptor: once built, the instance attribute of the same
    name answers (and tests may still replace a part by assigning it).
    """

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, engine, owner=None):
        if engine is None:
            return self
        engine._build()
        return engine.__dict__[self.name]
