import sqlite3

from fairprobe.run.store import Store


def test_wal_mode_and_findings_are_idempotent(tmp_path):
    with Store(tmp_path / "run.db") as store:
        assert store.add_findings([{"id": "a", "x": 1}, {"id": "b", "x": 2}], state={"cursor": 2}) == 2
        assert store.add_findings([{"id": "b", "x": 99}, {"id": "c", "x": 3}]) == 1
        assert [f["x"] for f in store.iter_findings()] == [1, 2, 3]
        assert store.get_state("cursor") == 2
    mode = sqlite3.connect(tmp_path / "run.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_responses_keyed_by_fingerprint_and_request(tmp_path):
    with Store(tmp_path / "c.db") as store:
        store.put_responses("fp1", {"r1": {"t": "one"}, "r2": {"t": "two"}})
        store.put_responses("fp2", {"r1": {"t": "other model"}})
        assert store.get_responses("fp1", ["r1", "r3"]) == {"r1": {"t": "one"}}
        assert store.get_responses("fp2", ["r1", "r2"]) == {"r1": {"t": "other model"}}
        many = {f"k{i}": i for i in range(1200)}
        store.put_responses("fp3", many)
        assert store.get_responses("fp3", list(many)) == many


def test_clear_run_keeps_the_response_cache(tmp_path):
    with Store(tmp_path / "run.db") as store:
        store.put_responses("fp", {"r": 1})
        store.add_findings([{"id": "a"}])
        store.set_meta(spec_hash="h")
        store.clear_run()
        assert store.count_findings() == 0 and store.get_meta("spec_hash") is None
        assert store.get_responses("fp", ["r"]) == {"r": 1}
