"""`--prompt-template`: HInter on a chat model with the user's own classification task (a loan officer),
beside the five prompt sets of the paper's Table 7.

Validation is checked on the loader and through the real CLI (one line, exit 2, no run folder); the
end-to-end run uses the real SmolLM2 llama.cpp server on a handful of loan applications.
"""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from reliability.helpers import assert_one_red_line

from fairprobe.data.datasets import load_dataset
from fairprobe.errors import SpecError
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.tasks import FewShot, load_prompt_template, template_task

ROOT = Path(__file__).resolve().parents[2]
LOAN = ROOT / "examples" / "loan" / "loan_classifier.yaml"
APPS = ROOT / "examples" / "loan" / "loan_applications.csv"

GOOD = (
    "system: You are a loan officer. Answer {labels}.\nuser: 'Application: {text}'\nlabels: [approve, deny]\n"
)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("user: 'x {text}'\nlabels: [a, b]\n", "missing key 'system'"),
        ("system: s\nlabels: [a, b]\n", "missing key 'user' (the user message, with {text}"),
        ("system: s\nuser: 'x {text}'\n", "missing key 'labels'"),
        ("system: s\nuser: 'no placeholder'\nlabels: [a, b]\n", "'user' has no {text} placeholder"),
        ("system: s\nuser: 'x {text}'\nlabels: [a]\n", "'labels' needs at least two"),
        ("system: s\nuser: 'x {text}'\nlabels: [a, A]\n", "'labels' repeat"),
        ("system: s\nuser: 'x {text}'\nlabels: 7\n", "'labels' must be a list of answer words"),
        (GOOD + "fewshot: x.csv\n", "unknown key 'fewshot'; the keys are system, user, labels, few_shot"),
        (GOOD + "few_shot: nowhere.csv\n", "few_shot file"),
        ("- system\n- user\n", "expected a mapping"),
    ],
)
def test_a_broken_template_is_one_line_naming_the_key(tmp_path, text, needle):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_prompt_template(path)
    message = str(err.value)
    assert needle in message and str(path) in message and "\n" not in message


def test_template_labels_map_answer_words_back_to_data_labels(tmp_path):
    template = load_prompt_template(LOAN)
    assert template.labels == {"approve": "Approve", "deny": "Deny"}
    assert template.few_shot == str(LOAN.parent / "loan_examples.csv")  # resolved beside the template
    block = HInterBlock(model="embedded:smollm2", prompt_template=str(LOAN), data=str(APPS))
    data = load_dataset(str(APPS))
    shots = FewShot([("Rich, no debt.", ["approve"]), ("Unemployed, in debt.", ["Deny"])], "test")
    task, reverse, info = template_task(template, block, 0, data, shots)
    assert task.labels == ("Approve", "Deny") and reverse == {"Approve": "approve", "Deny": "deny"}
    assert task.few_shot == (("Rich, no debt.", ("Approve",)), ("Unemployed, in debt.", ("Deny",)))
    assert task.question.startswith("Loan application:\n{text}") and task.temperature == 0.0
    assert info["task"] == "prompt template loan_classifier.yaml"
    (tmp_path / "other.csv").write_text("text,label\nHe asks for a loan.,maybe\n")
    with pytest.raises(Exception, match=r"label\(s\) \['maybe'\] that prompt template .* does not list"):
        template_task(template, block, 0, load_dataset(str(tmp_path / "other.csv")), shots)
    with pytest.raises(ValueError, match="task .* or prompt_template .*, not both"):
        HInterBlock(model="embedded:smollm2", prompt_template=str(LOAN), task="imdb")


def test_cli_refuses_a_template_without_user_before_the_run_starts(cli, tmp_path):
    (tmp_path / "bad.yaml").write_text("system: s\nlabels: [approve, deny]\n")
    r = cli(
        "hinter", "--model", "embedded:smollm2", "--prompt-template", "bad.yaml", "--data", str(APPS),
        "--out", "run",
    )  # fmt: skip
    assert_one_red_line(r, "bad.yaml", "missing key 'user'")
    assert not (tmp_path / "run").exists()


def test_smollm2_as_a_loan_officer_through_the_llama_server(cli, tmp_path, llama_server):
    """The shipped loan template on a real chat model: HInter runs, the model's answers are read as the
    template's labels (or INVALID), and the summary says which prompt ran."""
    r = cli(
        "hinter", "--model", f"openai+http://{llama_server.split('//')[1]}#smollm2",
        "--prompt-template", str(LOAN), "--data", str(APPS), "--limit", "3", "--attributes", "gender",
        "--order", "1", "--max-mutants-per-text", "2", "--out", "run", timeout=600,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "loan_classifier.yaml" in json.dumps(summary)
    rows = [
        row
        for f in sorted((tmp_path / "run" / "findings").glob("*.parquet"))
        for row in pq.read_table(f).to_pylist()
    ]
    assert rows
    answers = {a for row in rows for a in (row["original_output"] or []) + (row["mutant_output"] or [])}
    assert answers <= {"approve", "deny", "INVALID"} and answers & {"approve", "deny"}
