"""How database-only waves are cut (nestedflow.flows.tasks.waves.cut)."""

import types

from nestedflow.flows.tasks import waves


def _rows(**before):
    """Rows named by their keys; ``before[name]``: the names it waits for.
    A name starting with "real" is a type with side effects."""
    ids = {name: i for i, name in enumerate(before, 1)}
    rows = [types.SimpleNamespace(id=ids[name], name=name) for name in before]
    edges = {ids[name]: [ids[n] for n in names] for name, names in before.items()}
    return rows, edges


def _cut(**before):
    rows, edges = _rows(**before)
    found, rest = waves.cut(rows, edges, lambda row: not row.name.startswith("real"))
    return [sorted(r.name for r in wave) for wave in found], sorted(r.name for r in rest)


def test_independent_database_only_resources_are_one_wave():
    assert _cut(a=[], b=[], c=[]) == ([["a", "b", "c"]], [])


def test_a_wave_is_a_depth_of_the_all_database_only_graph():
    assert _cut(a=[], b=[], c=["a"], d=["a", "b"], e=["c"], f=["d"]) == (
        [["a", "b"], ["c", "d"], ["e", "f"]], [])


def test_nothing_after_a_real_resource_joins_a_wave():
    # x and y wait (directly or not) for the real one: tasks of their own,
    # so nothing in a wave waits for it.
    assert _cut(a=[], b=[], real=[], x=["real"], y=["x", "a"], z=["a"], w=["b"]) == (
        [["a", "b"], ["w", "z"]], ["real", "x", "y"])


def test_a_wave_of_one_keeps_its_own_task():
    # A chain: every depth holds one resource.
    assert _cut(a=[], b=["a"], c=["b"]) == ([], ["a", "b", "c"])


def test_edges_to_rows_outside_the_graph_are_ignored():
    rows, edges = _rows(a=[], b=[])
    edges[rows[0].id].append(999)
    found, rest = waves.cut(rows, edges, lambda row: True)
    assert [sorted(r.name for r in wave) for wave in found] == [["a", "b"]] and rest == []


def test_a_deep_chain_does_not_recurse():
    before = {f"r{i}": [f"r{i - 1}"] if i else [] for i in range(5000)}
    before.update({f"s{i}": [f"r{i}"] for i in range(5000)})
    found, rest = _cut(**before)
    # Depth k holds r<k> and s<k-1>; r0 and s4999 are alone at theirs.
    assert len(found) == 4999 and rest == ["r0", "s4999"]


def test_every_wave_takes_the_map_the_factory_keys_its_tasks_by():
    """Creates and updates key dependencies by resource name, deletes by row
    id (their symbols name rows): each wave requires what its members wait
    for, provides their symbols, and keeps each member's own list by row id
    for the member's ordinary task."""
    from nestedflow.flows.tasks.base import CLEANED, SYMBOL

    rows = [types.SimpleNamespace(id=7, name="b"), types.SimpleNamespace(id=3, name="a")]
    for cls in (waves.CreateWave, waves.ConvergeWave):
        wave = cls(None, rows, {"b": ["x", "y"], "a": ["y"], "other": ["z"]})
        assert wave.provides_symbol == (SYMBOL.format("b"), SYMBOL.format("a"))
        assert set(wave.requires) == {"traversal", SYMBOL.format("x"), SYMBOL.format("y")}
        assert wave.dependencies == {7: ["x", "y"], 3: ["y"]}
        assert wave.name == f"{cls.VERB} wave of 2 #3"
    wave = waves.DeleteWave(None, rows, {7: [11, 12], 3: [], "b": [99]})
    assert wave.provides_symbol == (CLEANED.format(7), CLEANED.format(3))
    assert set(wave.requires) == {"traversal", CLEANED.format(11), CLEANED.format(12)}
    assert wave.dependencies == {7: [11, 12], 3: []}
