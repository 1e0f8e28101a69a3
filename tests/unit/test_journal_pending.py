"""The journal's pending writes: an atom's update holds only the columns
that changed, so writes put back after a failed flush merge by column."""

from nestedflow.taskflow import journal_backend


def test_a_failed_flush_keeps_every_column_of_an_atom():
    earlier, later = journal_backend._Pending(), journal_backend._Pending()
    earlier.atoms["a"] = {"state": "RUNNING", "intention": "EXECUTE"}
    later.atoms["a"] = {"state": "SUCCESS", "results": {"ref": "x"}}
    later.atoms["b"] = {"state": "RUNNING"}
    merged = earlier.followed_by(later)
    assert merged.atoms == {"a": {"state": "SUCCESS", "intention": "EXECUTE",
                                  "results": {"ref": "x"}},
                            "b": {"state": "RUNNING"}}
    assert earlier.atoms["a"] == {"state": "RUNNING", "intention": "EXECUTE"}


def test_a_journaled_row_is_not_changed_by_a_later_transition():
    meta = {"progress": 0.0}
    row = journal_backend._journaled({"meta": meta, "state": "RUNNING"})
    meta["progress"] = 1.0
    assert row == {"meta": {"progress": 0.0}, "state": "RUNNING"}
