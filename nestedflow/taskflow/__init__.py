"""The TaskFlow adapter: every module that reaches below TaskFlow's public
API (its action engine, types, persistence backends and jobboard backends):
``compat`` (the engine's, storage's and atoms' private hooks made public),
``jobboard`` (the ZooKeeper jobboard class), ``parallel_engine``, the two
persistence backends and ``collector``.

An import-linter contract (pyproject.toml) lets no other nestedflow package
import ``taskflow.engines.action_engine``, ``taskflow.types``,
``taskflow.persistence.backends`` or ``taskflow.jobs.backends``: a TaskFlow
release that changes them is met here and only here.
"""
