"""Heat's engine RPC API over nestedflow's Engine (doc/source/heat.rst).

An unmodified heat-api -- and every client of Heat's REST API behind it --
drives a ``nestedflow-engine`` started with ``[heat_engine] enabled = true``.
The translation lives here only: it uses the Engine's public methods, and
nothing in the engine knows Heat's wire formats. Heat is never imported:
errors take Heat's class names under Heat's module name (:mod:`.faults`).
"""
