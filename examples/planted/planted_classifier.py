"""A sentiment "model" with a planted gender bias: it answers NEG whenever a text mentions a woman.

Point HInter at it to see a run fail (from this folder, so that ``py:`` finds the module):

    cd examples/planted
    fairprobe hinter --model py:planted_classifier:classify --data imdb-sample --limit 40 \\
        --attributes gender --order 1 --out runs/planted

HInter rewrites the 40 IMDB reviews (he -> she, his -> her, ...); every mutant that now mentions a
woman flips to NEG, so the gender error rate's whole 95% interval lies above the 5% default gate and
the run fails (exit 1). docs/local-llm.md shows the measured output. fairprobe's own tests run this
file (tests/planted_classifiers.py reads it), so the figures cannot drift from the code.
"""


def classify(texts):
    return ["NEG" if {"she", "her", "woman"} & set(t.lower().split()) else "POS" for t in texts]
