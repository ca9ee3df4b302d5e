from fairprobe.technique.registry import load_errors, techniques


def test_every_installed_technique_loads():
    assert load_errors() == {}
    assert {"accuracy", "hinter"} <= set(techniques())
