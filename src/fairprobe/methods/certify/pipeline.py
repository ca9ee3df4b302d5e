"""Certification as a pipeline stage (paper Algorithm 1): one certificate per sentence.

generate = draw the sentences (with a sensitive word, balanced labels) and their substitute sets;
execute = the verifier's ε* search per sentence (resumable: each certificate is stored as soon as
it is issued); judge = ``ε* >= t``. The optional "no embedding pre-training" ablation model
(App. C.3) is certified on the same sentences, its findings marked ``variant: no-pretraining``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from fairprobe.errors import RunStateError
from fairprobe.methods.certify.block import CertifyBlock
from fairprobe.methods.certify.certificate import (
    Substitutes,
    VerifierSettings,
    certify,
    choose_sentences,
    load_substitute_file,
    token_ids,
)
from fairprobe.methods.certify.data import Example, load_eval_data, load_task
from fairprobe.methods.certify.model import LoadedModel, load_model
from fairprobe.methods.certify.train import accuracy
from fairprobe.run.threads import apply_torch
from fairprobe.technique.context import RunContext

ABLATION_DIR = "no-pretraining"


def ablation_dir(block: CertifyBlock) -> Path | None:
    if block.ablation_model is None or block.ablation_model == "none":
        return None
    if block.ablation_model == "auto":
        auto = Path(block.model) / ABLATION_DIR
        return auto if (auto / "model.pt").is_file() else None
    return Path(block.ablation_model)


def eval_accuracy(loaded: LoadedModel, examples: list[Example], limit: int | None, seed: int) -> float:
    rows = examples
    if limit is not None and limit < len(rows):
        rows = random.Random(seed).sample(rows, limit)
    index = {w: i for i, w in enumerate(loaded.vocab)}
    return accuracy(loaded.module, rows, index, loaded.cfg.max_len)


def sentence_line(variant: str, record: dict[str, Any]) -> str:
    """One line per finished sentence, so a long verification shows what it has proven so far:
    ``main 1234: ε* 3.10e-05 < t 4.30e-03, not certified; attack flips it at 2.1e-02 (gap ×677)``."""
    sid = record.get("sentence_id", record["id"])
    if record.get("invalid"):
        return f"{variant} {sid}: invalid ({record.get('error', '')})"
    eps, t, ok = record["eps_star"], record["threshold"], record["certified"]
    t_text = "∞" if t is None else f"{t:.2e}"
    line = f"{variant} {sid}: ε* {eps:.2e} {'≥' if ok else '<'} t {t_text}, {'' if ok else 'not '}certified"
    if record.get("attack_radius") is not None:
        line += f"; attack flips it at {record['attack_radius']:.2e}"
        if record.get("verifier_gap") is not None:
            line += f" (gap ×{record['verifier_gap']:.3g})"
    elif "attack_radius" in record:
        line += "; no attack found a flip"
    return line + f" ({record['seconds']} s)"


def _check_model(ctx: RunContext, variant: str, loaded: LoadedModel) -> None:
    """A run certifies one model version: a retrained model in the same folder needs --overwrite."""
    key = f"model_hash:{variant}"
    previous = ctx.store.get_state(key)
    if previous is not None and previous != loaded.hash:
        raise RunStateError(
            f"{loaded.directory} changed since this run started (model hash differs); "
            "pass --overwrite to certify the new model or choose another --out"
        )
    ctx.store.set_state(key, loaded.hash)


def certify_or_invalid(
    loaded: LoadedModel, example: Example, subs: Substitutes, settings: VerifierSettings
) -> dict[str, Any]:
    """The certificate, or an *invalid* record when the verifier cannot finish the sentence.

    Running out of memory (a long sentence's generator matrices) is the one failure expected of a
    correct verifier; the record counts in ``metrics.invalid`` and is left out of the fairness
    score, instead of stopping the run. Any other exception is a bug and keeps its traceback.
    """
    import torch

    try:
        return certify(loaded, example, subs, settings)
    except (MemoryError, torch.OutOfMemoryError, RuntimeError) as exc:
        # torch reports a failed CPU allocation as a plain RuntimeError ("DefaultCPUAllocator:
        # can't allocate memory"); any other RuntimeError is a bug and propagates
        if type(exc) is RuntimeError and "can't allocate memory" not in str(exc):
            raise
        return {
            "id": example.id,
            "model_hash": loaded.hash,
            "sentence": example.text,
            "label": example.label,
            "prediction": None,
            "correct": None,
            "eps_star": None,
            "threshold": None,
            "certified": False,
            "invalid": True,
            "error": f"{type(exc).__name__}: {exc}"[:300],
            "seconds": None,
        }


def validate(block: CertifyBlock) -> None:
    """Inputs checked before the run folder is touched: the model folder(s) load, the evaluation data
    and a substitutes file read."""
    if block.substitutes:
        load_substitute_file(block.substitutes)
    main = load_model(Path(block.model))
    load_eval_data(block.data, main.cfg.task)
    extra = ablation_dir(block)
    if extra is not None:
        load_model(extra)


def execute(block: CertifyBlock, ctx: RunContext) -> None:
    apply_torch(ctx.threads)  # the block's ``threads`` (auto: the free cores), set by the runner
    settings = VerifierSettings(
        block.domain, block.cap, block.steps, block.eps0, block.baseline, block.attack, block.relaxation
    )
    user = load_substitute_file(block.substitutes) if block.substitutes else None
    main = load_model(Path(block.model))
    examples = load_eval_data(block.data, main.cfg.task)
    models: list[tuple[str, LoadedModel]] = [("main", main)]
    extra = ablation_dir(block)
    if extra is not None:
        models.append((ABLATION_DIR, load_model(extra)))
    subs_main = Substitutes(main, block.k, user)
    pool = examples
    if block.data is None and block.sentences_from == "train":
        pool = load_task(main.cfg.task, "train")  # the paper's §4.2 selection
    short = [e for e in pool if len(token_ids(main, e.text)) <= block.max_tokens]
    sentences = choose_sentences(short, subs_main, block.n, ctx.seed)
    done = ctx.done_ids()
    for variant, loaded in models:
        _check_model(ctx, variant, loaded)
        key = f"accuracy:{variant}"
        acc = ctx.store.get_state(key)
        if acc is None:
            acc = eval_accuracy(loaded, examples, block.accuracy_limit, ctx.seed)
            ctx.store.set_state(key, acc)
        ctx.record_info(
            **{f"model_{variant.replace('-', '_')}": {"dir": str(loaded.directory), "hash": loaded.hash}}
        )
        subs = subs_main if loaded is main else Substitutes(loaded, block.k, user)
        todo = [e for e in sentences if f"{variant}:{e.id}" not in done]
        ctx.log(
            f"{variant}: {len(sentences)} sentences ({len(sentences) - len(todo)} done), "
            f"accuracy {acc:.3f}, {settings.domain} verifier"
        )
        with ctx.progress(f"certificates ({variant})", len(todo)) as bar:
            for example in todo:
                record: dict[str, Any] = certify_or_invalid(loaded, example, subs, settings)
                record.update(
                    id=f"{variant}:{example.id}",
                    sentence_id=example.id,
                    variant=variant,
                    model_dir=str(loaded.directory),
                    model_accuracy=acc,
                    eval_data=block.data
                    or f"{loaded.cfg.task} {'training' if block.sentences_from == 'train' else 'held-out test'} split",
                    not_certified=not record["certified"],
                )
                ctx.add_findings([record])
                ctx.log(sentence_line(variant, record))
                bar.advance(1)
