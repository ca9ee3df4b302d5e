"""``hf:`` with tiny models built and saved locally (no downloads): a BERT classifier, a GPT-2 LM."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fairprobe.errors import ModelError
from fairprobe.models import ChatRequest, load_chat, load_classifier, load_model, model_kind

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

WORDS = "[PAD] [UNK] [CLS] [SEP] good great fine bad awful poor movie film the was a".split()
TRAIN = [
    ("the movie was good", 1),
    ("a great film", 1),
    ("fine movie", 1),
    ("the movie was bad", 0),
    ("an awful film", 0),
    ("poor movie", 0),
]


def _tokenizer(vocab: list[str], **special: str) -> object:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(vocab)}, unk_token=vocab[1]))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **special)


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT sentiment classifier, trained for a few steps on six phrases."""
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=32, num_labels=2,
        id2label={0: "NEG", 1: "POS"}, label2id={"NEG": 0, "POS": 1},
    )  # fmt: skip
    model = transformers.BertForSequenceClassification(config)
    tok = _tokenizer(WORDS, pad_token="[PAD]", unk_token="[UNK]")
    enc = tok([t for t, _ in TRAIN], padding=True, return_tensors="pt")
    labels = torch.tensor([y for _, y in TRAIN])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(40):
        opt.zero_grad()
        model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], labels=labels).loss.backward()
        opt.step()
    out = tmp_path_factory.mktemp("hf") / "bert"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer GPT-2 with a word-level tokenizer and a chat template."""
    torch.manual_seed(0)
    vocab = "<unk> <eos> <user> <assistant> <system> say hello the cat sat on a mat .".split()
    tok = _tokenizer(vocab, unk_token="<unk>", eos_token="<eos>", pad_token="<eos>")
    tok.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    config = transformers.GPT2Config(
        vocab_size=len(vocab), n_embd=16, n_layer=2, n_head=2, n_positions=64, bos_token_id=1, eos_token_id=1
    )
    out = tmp_path_factory.mktemp("hf") / "gpt2"
    transformers.GPT2LMHeadModel(config).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def test_hf_sequence_classifier(bert_dir: Path) -> None:
    assert model_kind(f"hf:{bert_dir}") == "classifier"
    clf = load_classifier(f"hf:{bert_dir}", batch_size=4)
    texts = [t for t, _ in TRAIN]
    preds = clf.predict(texts)
    assert [p.label for p in preds] == ["POS" if y else "NEG" for _, y in TRAIN]
    for p in preds:
        assert set(p.scores) == {"POS", "NEG"} and abs(sum(p.scores.values()) - 1) < 1e-5
    fp = clf.fingerprint
    assert (fp.backend, fp.model_id, fp.params) == ("hf", f"hf:{bert_dir}", {"multi_label": False})
    assert load_model(f"hf:{bert_dir}").fingerprint == fp


def test_hf_multi_label_uses_sigmoid_threshold(bert_dir: Path, tmp_path: Path) -> None:
    model = transformers.AutoModelForSequenceClassification.from_pretrained(bert_dir)
    model.config.problem_type = "multi_label_classification"
    model.save_pretrained(tmp_path / "multi")
    transformers.AutoTokenizer.from_pretrained(bert_dir).save_pretrained(tmp_path / "multi")
    clf = load_classifier(f"hf:{tmp_path / 'multi'}", threshold=0.4)
    for p in clf.predict([t for t, _ in TRAIN]):
        assert p.labels == {lab for lab, s in p.scores.items() if s >= 0.4}
    assert clf.fingerprint.params == {"multi_label": True, "threshold": 0.4}
    assert clf.fingerprint.weights != load_classifier(f"hf:{bert_dir}").fingerprint.weights


def test_hf_causal_lm_chat(gpt2_dir: Path, tmp_path: Path) -> None:
    assert model_kind(f"hf:{gpt2_dir}") == "chat"
    chat = load_chat(f"hf:{gpt2_dir}")
    request = ChatRequest.of(
        [{"role": "system", "content": "say"}, {"role": "user", "content": "hello"}], max_tokens=6
    )
    assert chat.render_prompt(request) == "<system> say <user> hello <assistant>"  # type: ignore[attr-defined]
    a, b = chat.chat([request, request])
    assert (a.text, a.finish_reason, a.completion_tokens) == (b.text, b.finish_reason, b.completion_tokens)
    assert a.prompt_tokens == 5 and 0 < a.completion_tokens <= 6
    sample = ChatRequest.of("the cat", temperature=1.0, max_tokens=8, seed=5)
    assert chat.chat([sample])[0].text == chat.chat([sample])[0].text  # seeded sampling repeats
    # without a chat template the prompt is a plain transcript
    copy = tmp_path / "plain"
    shutil.copytree(gpt2_dir, copy)
    (copy / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((copy / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (copy / "tokenizer_config.json").write_text(json.dumps(config))
    plain = load_chat(f"hf:{copy}")
    assert plain.render_prompt(request) == "system: say\nuser: hello\nassistant:"  # type: ignore[attr-defined]
    assert plain.fingerprint.params == {"prompt": "plain"}
    assert plain.fingerprint.weights != chat.fingerprint.weights  # the tokenizer files changed


def test_hf_errors_name_the_problem(tmp_path: Path, gpt2_dir: Path) -> None:
    with pytest.raises(ModelError, match=f"hf model directory {tmp_path / 'absent'} does not exist"):
        load_classifier(f"hf:{tmp_path / 'absent'}")
    with pytest.raises(ModelError, match="has no config.json"):
        load_classifier(f"hf:{tmp_path}")
    with pytest.raises(ModelError, match="is a chat model, not a classifier"):
        load_classifier(f"hf:{gpt2_dir}")
