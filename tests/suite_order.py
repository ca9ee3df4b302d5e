"""pytest plugin: the test files run longest first, so that the xdist workers finish together.

``make test`` runs ``pytest -n JOBS --dist loadfile --no-loadscope-reorder``: xdist hands a worker
the next file, in collection order, whenever the worker has two tests or fewer left. Its default
order (``--loadscope-reorder``) is by number of tests, most first, which puts the long end-to-end
files with few tests (the 100,000-finding report, the certificates' pipeline, the Ray cluster, the
SmolLM2 conversations) at the end of the run, where one worker ran them alone while the other had
nothing left to do. Here the files are ordered by :data:`COSTS`, their measured seconds, longest
first (the longest-processing-time rule: what is left at the end is small); files not listed keep
their collection order after the listed ones. Tests inside a file keep their order.

The seconds are the sum of each test's setup, call and teardown (``--durations=0``) on the 2-core
machine. To measure them again (the files, or the whole suite)::

    pytest -q -p no:cacheprovider --durations=0 -n 2 --dist loadfile tests/... > durations.txt
    python tests/suite_order.py durations.txt      # prints COSTS, longest first

A file missing from the table, or a stale number, only makes the order less good, never a test wrong.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

import pytest

COSTS: dict[str, float] = {
    # Every file of a clean-clone `make test` (2026-11-29, 2 idle cores, 1,531 tests, pytest 411 s),
    # from its `--durations=0` output: setup + call + teardown summed per file, longest first.
    "tests/reliability/test_models_safety.py": 44.1,
    "tests/methods/audit/test_cli.py": 42.2,
    "tests/methods/certify/test_pipeline.py": 39.6,
    "tests/methods/test_hinter_ray.py": 38.4,
    "tests/methods/metafair/test_judge_controls.py": 30.9,
    "tests/methods/test_hinter_options.py": 29.0,
    "tests/core/test_cli_from_blocks.py": 28.8,
    "tests/methods/certify/test_soundness.py": 25.6,
    "tests/core/test_findings_view.py": 24.8,
    "tests/models/test_gguf_backend.py": 24.2,
    "tests/reliability/test_compare_safety.py": 22.5,
    "tests/methods/caffe/test_real_llm.py": 17.7,
    "tests/core/test_gates.py": 16.7,
    "tests/methods/certify/test_verifier_relaxation.py": 16.3,
    "tests/test_forkcli.py": 14.4,
    "tests/core/test_compare.py": 14.2,
    "tests/reliability/test_bad_input_more.py": 13.0,
    "tests/methods/audit/test_compare.py": 12.9,
    "tests/methods/test_kill_resume.py": 12.5,
    "tests/test_pytest_plugin.py": 12.3,
    "tests/reliability/test_bad_input.py": 12.0,
    "tests/methods/benchmark/test_mlm.py": 10.7,
    "tests/methods/audit/test_seeds_and_intervals.py": 10.5,
    "tests/reliability/test_round_three.py": 10.5,
    "tests/methods/audit/test_engine.py": 10.1,
    "tests/methods/caffe/test_planted.py": 9.7,
    "tests/methods/certify/test_backward.py": 9.2,
    "tests/models/test_transport.py": 9.2,
    "tests/text/test_dependency_invariant.py": 8.8,
    "tests/methods/test_concurrency_findings.py": 8.5,
    "tests/oracles/test_llm_judge.py": 8.4,
    "tests/outputs/test_threads.py": 8.3,
    "tests/methods/test_compare_techniques.py": 8.0,
    "tests/methods/caffe/test_group_pair_gates.py": 7.9,
    "tests/methods/metafair/test_pipeline.py": 7.7,
    "tests/methods/caffe/test_run_verdicts.py": 7.5,
    "tests/methods/test_hinter_slices.py": 7.4,
    "tests/methods/test_hinter_template.py": 6.4,
    "tests/methods/certify/test_attack.py": 6.2,
    "tests/methods/test_hinter_directions.py": 6.0,
    "tests/reliability/test_run_safety.py": 6.0,
    "tests/models/test_openai_server.py": 5.3,
    "tests/reliability/test_run_folder.py": 5.1,
    "tests/methods/benchmark/test_gates.py": 5.0,
    "tests/methods/test_hinter_refusals.py": 4.8,
    "tests/reliability/test_models.py": 4.8,
    "tests/test_readme_python.py": 4.6,
    "tests/reliability/test_model_code.py": 4.2,
    "tests/models/test_openai_faults.py": 3.9,
    "tests/reliability/test_output_rule.py": 3.9,
    "tests/core/test_compare_words.py": 3.8,
    "tests/methods/benchmark/test_cli.py": 3.8,
    "tests/text/test_fluency.py": 3.7,
    "tests/text/test_word_mutation.py": 3.4,
    "tests/methods/test_hinter_invalid.py": 3.3,
    "tests/methods/metafair/test_evidence_and_coverage.py": 3.3,
    "tests/methods/metafair/test_refusals.py": 3.3,
    "tests/methods/test_hinter_planted.py": 3.0,
    "tests/text/test_person_adjectives.py": 2.9,
    "tests/models/test_scheduler.py": 2.7,
    "tests/methods/certify/test_invalid.py": 2.7,
    "tests/models/test_spacy_backend.py": 2.6,
    "tests/methods/certify/test_user_model.py": 2.6,
    "tests/core/test_runner.py": 2.5,
    "tests/outputs/test_outputs.py": 2.4,
    "tests/core/test_verdict.py": 2.3,
    "tests/methods/metafair/test_invalid_runs.py": 2.2,
    "tests/reliability/test_secrets_structure.py": 2.2,
    "tests/outputs/test_report_pages.py": 2.2,
    "tests/methods/benchmark/test_bbq_upstream.py": 2.1,
    "tests/methods/certify/test_softmax_deept.py": 2.1,
    "tests/methods/audit/test_invalid_runs.py": 2.0,
    "tests/test_api.py": 1.9,
    "tests/methods/certify/test_augment.py": 1.9,
    "tests/core/test_progress.py": 1.9,
    "tests/test_expected_skips.py": 1.9,
    "tests/methods/audit/test_gates.py": 1.7,
    "tests/oracles/test_parser_corpus.py": 1.6,
    "tests/methods/test_hinter_group_words.py": 1.6,
    "tests/methods/test_hinter_early_originals.py": 1.4,
    "tests/methods/certify/test_toxic_list.py": 1.4,
    "tests/methods/benchmark/test_data.py": 1.3,
    "tests/methods/metafair/test_judge_eval.py": 1.3,
    "tests/test_runshared.py": 1.3,
    "tests/test_docs_site.py": 1.2,
    "tests/oracles/test_similarity.py": 1.2,
    "tests/methods/audit/test_evaluate.py": 1.0,
    "tests/core/test_errors.py": 0.9,
    "tests/text/test_spacy_parser.py": 0.8,
    "tests/methods/metafair/test_generate_streaming.py": 0.7,
    "tests/methods/benchmark/test_chat.py": 0.6,
    "tests/methods/certify/test_units.py": 0.6,
    "tests/text/test_invariant_shared_parser.py": 0.6,
    "tests/methods/certify/test_softmax.py": 0.6,
    "tests/test_examples.py": 0.5,
    "tests/test_datasets.py": 0.5,
    "tests/models/test_hf_backend.py": 0.4,
    "tests/models/test_uri.py": 0.4,
    "tests/methods/caffe/test_generate_streaming.py": 0.4,
    "tests/methods/certify/test_substitutes.py": 0.3,
    "tests/text/test_capitalisation.py": 0.3,
    "tests/methods/certify/test_vocab.py": 0.2,
    "tests/methods/benchmark/test_parity.py": 0.2,
    "tests/methods/benchmark/test_chat_parser.py": 0.2,
    "tests/text/test_group_words.py": 0.2,
    "tests/methods/caffe/test_kb.py": 0.2,
    "tests/methods/caffe/test_generation.py": 0.1,
    "tests/methods/test_hinter_ramp.py": 0.1,
    "tests/lexicons/test_bias_dictionary.py": 0.1,
    "tests/test_suite_order.py": 0.1,
    "tests/methods/caffe/test_intervals.py": 0.1,
    "tests/methods/test_hinter_analysis.py": 0.1,
    "tests/core/test_evidence.py": 0.1,
    "tests/core/test_store.py": 0.1,
    "tests/methods/certify/test_pretrain_schedule.py": 0.1,
    "tests/methods/metafair/test_relations_and_generator.py": 0.0,
    "tests/methods/caffe/test_sampling_and_swap.py": 0.0,
    "tests/methods/caffe/test_case.py": 0.0,
    "tests/lexicons/test_group_dictionaries.py": 0.0,
    "tests/methods/test_hinter_fewshot.py": 0.0,
    "tests/core/test_caching.py": 0.0,
    "tests/core/test_shards.py": 0.0,
    "tests/models/test_python_backend.py": 0.0,
    "tests/methods/audit/test_units.py": 0.0,
    "tests/core/test_stats.py": 0.0,
    "tests/methods/caffe/test_verdicts.py": 0.0,
    "tests/text/test_sentence_split.py": 0.0,
    "tests/lexicons/test_sbic.py": 0.0,
    "tests/models/test_llama_server.py": 0.0,
    "tests/core/test_spec.py": 0.0,
    "tests/core/test_contract.py": 0.0,
    "tests/lexicons/test_authors_lists.py": 0.0,
}
"""Seconds per test file (path from the repository root), measured as the module docstring says."""


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


BUILT_IN_BACKGROUND = {"tiny_model": 160.0}
"""Run-wide fixtures that start building in the background when the collection is done (the
certificates' tiny model, tests/methods/certify/conftest.py), with the seconds of other files
handed out before the first file that uses one, so that no worker waits for the build."""


def file_order(items: list[pytest.Item]) -> list[str]:
    """The files of ``items``, longest first; equal or unknown ones in collection order; a file that
    uses a fixture of :data:`BUILT_IN_BACKGROUND` after that many seconds of other files."""
    files: dict[str, set[str]] = {}
    for item in items:
        files.setdefault(file_of(item.nodeid), set()).update(getattr(item, "fixturenames", ()))
    order = sorted(files, key=lambda f: -COSTS.get(f, 0.0))  # stable: the rest keep their order
    for fixture, head_start in BUILT_IN_BACKGROUND.items():
        users = [f for f in order if fixture in files[f]]
        rest = [f for f in order if fixture not in files[f]]
        done, at = 0.0, 0
        while at < len(rest) and done < head_start:
            done += COSTS.get(rest[at], 0.0)
            at += 1
        order = rest[:at] + sorted(users + rest[at:], key=lambda f: -COSTS.get(f, 0.0))
    return order


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Items grouped by :func:`file_order`; tests inside a file keep their order."""
    rank = {f: i for i, f in enumerate(file_order(items))}
    items.sort(key=lambda item: rank[file_of(item.nodeid)])


def costs_from_durations(text: str) -> dict[str, float]:
    """Seconds per file from pytest's ``--durations`` lines (``12.34s call tests/x.py::test_y``)."""
    totals: dict[str, float] = defaultdict(float)
    for m in re.finditer(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+)", text, re.M):
        totals[file_of(m.group(2))] += float(m.group(1))
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


if __name__ == "__main__":
    merged: dict[str, float] = defaultdict(float)
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as fh:
            for name, seconds in costs_from_durations(fh.read()).items():
                merged[name] += seconds
    print("COSTS: dict[str, float] = {")
    for name, seconds in sorted(merged.items(), key=lambda kv: -kv[1]):
        print(f'    "{name}": {seconds:.1f},')
    print("}")
