"""A read-only web dashboard of the deployments (``nestedflow dashboard``).

:mod:`.app` is the WSGI application, :mod:`.reads` what its pages show,
:mod:`.live` the live views fed by notifications, :mod:`.server` how it is
made (:func:`nestedflow.dashboard.server.make_app`, for a host to mount)
and served. The pages are plain JavaScript and SVG in ``static/``.
"""
