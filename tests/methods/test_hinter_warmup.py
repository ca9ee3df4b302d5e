"""HInter's parser warm-up (loads the spaCy pipelines on a background thread while the data and the
model load): spaCy is imported only when a parse is needed and then without torch (two thirds of its
import time, unused by the CPU pipelines), torch still imports normally afterwards, a missing spaCy
model is one clear error, and the driver's own call gets the warm-up's pipeline, never a second one.
A fresh interpreter: the test process may have imported spaCy or torch already."""

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cases import ParserWarmup, checker_for

dictionary = load_dictionary()
plain = HInterBlock(model="py:m:f", attributes=["race", "gender"], invariant=False, person_adjectives=False)
ParserWarmup(dictionary, plain, 1).result()
print("no parse needed, spacy imported:", "spacy" in sys.modules)
missing = HInterBlock(model="py:m:f", attributes=["race", "gender"], invariant=True, spacy_model="no_such_spacy_model")
try:
    ParserWarmup(dictionary, missing, 1).result()
except DataError as exc:
    print("missing model:", str(exc).split(";")[0])
block = HInterBlock(model="py:m:f", attributes=["race", "gender"], invariant=True)
warm = ParserWarmup(dictionary, block, 1)
checker = checker_for(dictionary, block, 1)  # waits for the warm-up's load
warm.result()
print("same checker:", checker is checker_for(dictionary, block, 1))
print("torch imported with spacy:", "torch" in sys.modules, "spacy" in sys.modules)
import torch
print("torch later:", torch.tensor([1.0]).sum().item())
"""


@pytest.mark.slow  # ~8 s: loads spaCy and torch in a fresh interpreter
def test_the_parser_warm_up_imports_spacy_only_when_needed_and_without_torch():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "no parse needed, spacy imported: False",
        "missing model: spaCy model 'no_such_spacy_model' is not installed",
        "same checker: True",
        "torch imported with spacy: False True",
        "torch later: 1.0",
    ]
