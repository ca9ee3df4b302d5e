"""Parquet shard files: atomic writes, exact JSON round trip, column reads and filters, in order."""

import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from fairprobe.run.shards import FindingsTable, ShardWriter, remove_partial, shard_files

TYPED = pa.schema(
    [("id", pa.string()), ("kind", pa.string()), ("biased", pa.bool_()), ("score", pa.float64())]
)


def _finding(i: int) -> dict:
    f = {"id": f"f{i}", "kind": "atomic" if i % 3 == 0 else "intersectional", "biased": i % 4 == 0}
    f["text"] = f"ünïcode text {i}"
    if i % 5 == 0:
        f["score"] = i / 7  # optional field: absent in most findings
    return f


def test_shards_round_trip_exactly_in_shard_order(tmp_path):
    folder = tmp_path / "findings"
    findings = [_finding(i) for i in range(25)]
    for index, (lo, hi) in reversed(list(enumerate([(0, 10), (10, 18), (18, 25)]))):  # written out of order
        writer = ShardWriter(folder, index, TYPED)
        writer.write(findings[lo : (lo + hi) // 2])
        writer.write(findings[(lo + hi) // 2 : hi])
        assert writer.close().name == f"shard-{index:06d}.parquet"
        assert writer.rows == hi - lo
    table = FindingsTable.from_files(shard_files(folder), TYPED)
    assert len(table) == 25
    assert list(table) == findings  # absent keys stay absent, floats and unicode exact
    assert list(table.json_lines()) == [json.dumps(f, ensure_ascii=False) for f in findings]
    cols = table.columns(["kind", "score"])
    assert cols["kind"].to_pylist() == [f["kind"] for f in findings]
    assert cols["score"].to_pylist() == [f.get("score") for f in findings]
    picked = table.rows(pc.field("biased") & (pc.field("kind") == "atomic"), needs=["biased", "kind"])
    assert [f["id"] for f in picked] == [f["id"] for f in findings if f["biased"] and f["kind"] == "atomic"]
    assert len(table.rows(limit=3)) == 3


def test_an_aborted_shard_leaves_no_file_and_stale_temporaries_are_removed(tmp_path):
    folder = tmp_path / "findings"
    writer = ShardWriter(folder, 0, TYPED)
    writer.write([_finding(1)])
    writer.abort()
    assert shard_files(folder) == [] and list(folder.iterdir()) == []
    killed = ShardWriter(folder, 1, TYPED)  # a writer whose process died: never closed
    killed.write([_finding(2)])
    assert shard_files(folder) == []  # an unfinished shard is never read as a finding file
    assert remove_partial(folder) == 1 and list(folder.iterdir()) == []


def test_in_memory_table_matches_the_file_table(tmp_path):
    findings = [_finding(i) for i in range(7)]
    writer = ShardWriter(tmp_path, 0, TYPED)
    writer.write(findings)
    writer.close()
    on_disk = FindingsTable.from_files(shard_files(tmp_path), TYPED)
    in_memory = FindingsTable.from_dicts(findings, TYPED)
    assert list(on_disk) == list(in_memory) == findings
    assert on_disk.columns(["biased"]).equals(in_memory.columns(["biased"]))
    assert len(FindingsTable.from_files([], TYPED)) == 0


def test_a_value_of_the_wrong_type_is_refused(tmp_path):
    writer = ShardWriter(tmp_path, 0, TYPED)
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        writer.write([{"id": "x", "kind": "atomic", "biased": "yes"}])
    writer.abort()


def test_shards_written_before_a_column_was_added_read_it_as_nulls(tmp_path):
    """A run folder from an older fairprobe lacks columns added since; `fairprobe report` must still
    read it (the missing column is null) instead of failing on the schema."""
    folder = tmp_path / "findings"
    old = pa.schema([("id", pa.string()), ("kind", pa.string())])
    writer = ShardWriter(folder, 0, old)
    writer.write([{"id": "a", "kind": "atomic"}, {"id": "b", "kind": "intersectional"}])
    writer.close()
    table = FindingsTable.from_files(shard_files(folder), TYPED)
    cols = table.columns(["kind", "biased"])
    assert cols["kind"].to_pylist() == ["atomic", "intersectional"]
    assert cols["biased"].to_pylist() == [None, None]
    assert [r["id"] for r in table.rows(pc.field("kind") == "atomic", needs=["kind", "biased"])] == ["a"]
