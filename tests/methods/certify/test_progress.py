"""`fairprobe certify train` reports every phase's epochs with a loss and an ETA (it used to be silent
for the minutes of pre-training)."""

from __future__ import annotations

import re


def test_train_reports_pretraining_and_training_epochs(tiny_model):
    err = (tiny_model.parent / "train.stderr").read_text()
    for phase, total in (
        ("pre-training (sensitive words)", 20),
        ("pre-training (WordNet)", 3),
        ("training", 2),
    ):
        lines = [x for x in err.splitlines() if x.startswith(phase + " (")]
        assert lines, f"no progress line for {phase}:\n{err}"
        assert re.search(rf"epoch 1/{total}, (val )?loss [\d.e+-]+.*s/epoch, eta \d+s", lines[0]), lines[0]
        assert re.search(rf"epoch {total}/{total}, .*, done$", lines[-1]), lines[-1]


def test_epoch_log_throttles_to_the_interval():
    from fairprobe.methods.certify.epochs import EpochLog

    seen: list[str] = []
    log = EpochLog("phase", 1000, seen.append, interval=3600)
    for i in range(1, 1001):
        log.epoch(i, f"loss {1 / i:.3g}")
    assert len(seen) == 2 and "epoch 1/1000" in seen[0] and seen[1].endswith("done")


def test_final_low_step_epochs_are_recorded_with_the_model(tiny_model):
    import json

    meta = json.loads((tiny_model / "meta.json").read_text())
    assert meta["pretrain_config"]["final_epochs"] == 2 and meta["pretrain_config"]["final_lr"] == 1e-4
    assert meta["pretrain_final_loss"]["final"] is not None
