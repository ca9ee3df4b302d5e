"""Model URIs: one string names a model everywhere — CLI flags and spec files (DESIGN.md §3).

====================================  ===========================================  ==========
URI                                   backend                                      kind
====================================  ===========================================  ==========
``spacy:PATH``                        spaCy textcat pipeline                        classifier
``hf:PATH_OR_ID``                     transformers classifier or causal LM          either
``openai:MODEL``                      OpenAI API, key from ``OPENAI_API_KEY``       chat
``openai+http://HOST:PORT/v1#MODEL``  any OpenAI-compatible server                  chat
``gguf:PATH``                         in-process llama.cpp                          chat
``py:module:function``               Python classifier function                    classifier
``py-chat:module:function``          Python chat function                          chat
``embedded:imdb-sentiment``           packaged spaCy sentiment model                classifier
``embedded:smollm2``                  packaged SmolLM2-135M-Instruct GGUF           chat
====================================  ===========================================  ==========

``gguf:PATH?server=1`` and ``embedded:smollm2?server=1`` run the same GGUF behind a llama.cpp server
that fairprobe starts on a free port, health-checks and stops when the run ends
(:mod:`fairprobe.models.llama_server`); its answers are cached apart from the in-process ones.

Backend options (``concurrency``, ``timeout``, ``retries``, ``n_ctx``, ...) are keyword options of
the loaders and are checked here, in one place. They can also be written into the URI as a query,
so a spec file or a ``--model`` flag sets them:
``openai+http://127.0.0.1:8080/v1?timeout=120&retries=8#smollm2`` (or ``...#smollm2?timeout=120``).
Options given to the loader in Python win over the URI's. ``timeout``, ``retries``,
``concurrency``, ``backoff`` and ``max_backoff`` never change answers: they are left out of the
resume check and of the fingerprint. Decoding parameters (temperature, max_tokens,
seed) are not options: every :class:`ChatRequest` carries its own. Every option value is checked
here, before any backend sees it: ``timeout=nan``, ``concurrency=0`` or ``retries=-1`` is one
:class:`~fairprobe.errors.ModelError` line (exit 2), as is a port out of range or a broken IPv6 host.

Secrets: keys come from the environment (``?api_key_env=NAME``; ``OPENAI_API_KEY`` for
``openai:``). A key written into a URI is never written or printed: :func:`redact_uri` replaces
the password of ``http://user:KEY@host/v1`` (sent to the server as HTTP basic auth) and the value
of an ``api_key`` / ``apikey`` / ``key`` / ``token`` / ``access_token`` query option (any case;
refused with a one-line error, since such a key would live in a spec file) by ``***`` — in the
resolved spec (``spec.yaml``, ``run.db``, ``summary.json``), fingerprints, reports and error
lines. The resume check hashes the redacted spec, so a key is left out of it like ``timeout``:
a key never changes answers, so a rotated key resumes the same run and reuses its cached answers.
"""

from __future__ import annotations

import inspect
import math
import os
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from fairprobe.errors import ModelError
from fairprobe.models.base import ChatModel, Classifier
from fairprobe.models.redact import KNOWN_OPTIONS, SECRET_OPTIONS, control_character, redact_uri

SCHEMES = ("spacy", "hf", "openai", "openai+http", "openai+https", "gguf", "py", "py-chat", "embedded")
SCHEME_HELP = "spacy:, hf:, openai:, openai+http://HOST:PORT/v1#MODEL, gguf:, py:, py-chat:, embedded:"
_DECODING = ("temperature", "max_tokens", "seed", "top_p")
_INTERNAL = ("model_id", "api_key", "backend")  # set by the loaders, never by users (no secrets in specs)

Kind = Literal["classifier", "chat"]


@dataclass(frozen=True)
class ModelURI:
    """A parsed model URI: ``scheme:target#fragment`` (the fragment only for ``openai+http(s)``).

    For ``openai+http://h:p/v1#m`` the target is the base URL ``http://h:p/v1`` and the fragment
    the model name ``m``.
    """

    scheme: str
    target: str
    fragment: str = ""

    def __str__(self) -> str:
        if self.scheme.startswith("openai+"):
            return f"openai+{self.target}" + (f"#{self.fragment}" if self.fragment else "")
        return f"{self.scheme}:{self.target}"

    @property
    def shown(self) -> str:
        """The URI as it may be printed: secrets replaced by ``***`` (:func:`redact_uri`)."""
        return redact_uri(str(self))


def is_secret_option(name: str) -> bool:
    return name.lower() in SECRET_OPTIONS


def _option_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


EXECUTION_OPTIONS = ("timeout", "retries", "concurrency", "backoff", "max_backoff", "startup_timeout")
"""URI query options that never change answers: left out of the resume check
(:meth:`fairprobe.technique.spec.BlockSpec.resolved_hash`) and of the fingerprint."""


def split_query(uri: str) -> tuple[str, dict[str, Any]]:
    """``"openai+http://h/v1?timeout=5#m"`` -> ``("openai+http://h/v1#m", {"timeout": 5})``.

    The query may sit before or after the ``#MODEL`` fragment; a URI without ``?`` is unchanged."""
    text = str(uri).strip()
    if "?" not in text:
        return text, {}
    head, _, tail = text.partition("?")
    query, hash_, fragment = tail.partition("#")
    options: dict[str, Any] = {}
    for part in query.split("&"):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ModelError(
                f"bad option {redact_uri('?' + part)[1:]!r} in model URI '{redact_uri(text)}'; "
                "write NAME=VALUE, e.g. ?timeout=120&retries=8"
            )
        name = key.strip()
        options[name] = value.strip() if is_secret_option(name) else _option_value(value.strip())
    return head + (hash_ + fragment if hash_ else ""), options


def check_model_uri(uri: str) -> str:
    """The spec's check of a model URI (every block field marked ``MODEL_URI``): scheme, target,
    fragment and the ``?option`` values, without loading anything. Raises :class:`ModelError`; the
    spec reports it at the field's ``spec.yaml:LINE``, before any run folder exists."""
    rest, options = split_query(uri)
    check_option_values(parse_uri(rest), dict(options))
    return uri


def without_execution_options(uri: str) -> str:
    """``uri`` less its execution options (``?timeout=..&retries=..``): they never change findings,
    so they are left out of the resume check and raising a timeout resumes the same run."""
    rest, options = split_query(uri)
    if not options:
        return uri
    kept = {k: v for k, v in options.items() if k not in EXECUTION_OPTIONS}
    return rest if not kept else f"{rest}?{'&'.join(f'{k}={v}' for k, v in kept.items())}"


def parse_uri(uri: str) -> ModelURI:
    """Split a model URI into scheme, target and fragment; raise :class:`ModelError` if malformed.
    Backend options in a ``?query`` are not part of it (see :func:`split_query`)."""
    text = split_query(uri)[0]
    shown = redact_uri(text)
    scheme, sep, rest = text.partition(":")
    scheme = scheme.lower()
    if not sep or not scheme:
        raise ModelError(f"{shown!r} is not a model URI (no scheme); use one of {SCHEME_HELP}")
    if scheme not in SCHEMES:
        raise ModelError(f"unknown model URI scheme '{scheme}' in '{shown}'; use one of {SCHEME_HELP}")
    if scheme.startswith("openai+"):
        url, _, model = f"{scheme.removeprefix('openai+')}:{rest}".partition("#")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port out of 0-65535 or not a number
        except ValueError as exc:
            raise ModelError(
                f"model URI '{shown}' is not a valid URL ({exc}); write it as openai+http://HOST:PORT/v1#MODEL "
                "(an IPv6 host in brackets: http://[::1]:8000/v1, a port from 1 to 65535)"
            ) from None
        if not parts.hostname:
            raise ModelError(f"model URI '{shown}' has no host; write it as openai+http://HOST:PORT/v1#MODEL")
        labels = parts.hostname.split(".")
        if len(parts.hostname) > 253 or any(len(label) > 63 for label in labels):
            raise ModelError(
                f"model URI '{shown[:120]}' has a host name that cannot exist (a part over 63 characters, "
                "or over 253 in all); check the host"
            )
        return ModelURI(scheme, url.rstrip("/"), model.strip())
    if not rest.strip():
        raise ModelError(f"model URI '{shown}' names no model after '{scheme}:'; e.g. {_example(scheme)}")
    return ModelURI(scheme, rest.strip())


def _example(scheme: str) -> str:
    return {
        "spacy": "spacy:./my_textcat_model",
        "hf": "hf:./my_model or hf:org/name",
        "openai": "openai:gpt-4o-mini",
        "gguf": "gguf:./model.gguf",
        "py": "py:my_module:predict",
        "py-chat": "py-chat:my_module:chat",
        "embedded": "embedded:imdb-sentiment or embedded:smollm2",
    }.get(scheme, SCHEME_HELP)


def model_kind(uri: str | ModelURI) -> Kind:
    """Whether ``uri`` is naturally a classifier or a chat model (``hf:`` reads the config)."""
    u = uri if isinstance(uri, ModelURI) else parse_uri(uri)
    if u.scheme in ("spacy", "py"):
        return "classifier"
    if u.scheme == "embedded":
        from fairprobe.models.embedded import embedded_kind

        return embedded_kind(u.target)
    if u.scheme == "hf":
        from fairprobe.models.hf_backend import hf_kind

        return hf_kind(u.target)
    return "chat"


def _check_option(cls: Any, uri: ModelURI, name: str) -> None:
    """Raise :class:`ModelError` unless ``name`` is a keyword option of backend class ``cls``."""
    params = inspect.signature(cls).parameters
    known = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and n not in _INTERNAL]
    if name in _DECODING:
        raise ModelError(
            f"{name} is a decoding parameter, not an option of {uri.shown}: set it on each request (ChatRequest)"
        )
    if name not in known:
        raise ModelError(
            f"unknown option {name!r} for {uri.shown}; options of this backend: {', '.join(known) or 'none'}"
        )


_COUNTS = {"retries": 0, "concurrency": 1, "n_ctx": 1, "n_threads": 1, "batch_size": 1}
"""Whole-number options and their least value."""
_MOST = {"retries": 100, "concurrency": 4096, "n_ctx": 1 << 21, "n_threads": 1024, "batch_size": 1 << 16}
"""... and their greatest (``?retries=1e20`` would retry for ever, ``?concurrency=1e9`` open a billion
requests): a value above it is a typo."""
_FLAGS = ("probe", "quiet_version_warning")
_SECONDS = {"timeout": "> 0", "backoff": ">= 0", "max_backoff": ">= 0", "startup_timeout": "> 0"}
_UNIT = ("threshold",)


def check_option_values(uri: ModelURI, options: dict[str, Any]) -> None:
    """Raise :class:`ModelError` (one line, exit 2) for an option value no backend can use:
    ``nan``/``inf``, ``timeout=0``, ``concurrency=0``, ``retries=-1``, a threshold outside [0, 1]."""
    for name, value in options.items():
        if name == "server":
            options[name] = served(uri, value)
            continue
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        bad = ""
        if isinstance(value, float) and not math.isfinite(value):
            bad = "a finite number"
        elif name in _COUNTS and not (is_number and float(value).is_integer() and value >= _COUNTS[name]):
            bad = f"a whole number >= {_COUNTS[name]}"
        elif name in _MOST and value > _MOST[name]:
            bad = f"a whole number from {_COUNTS[name]} to {_MOST[name]}"
        elif name in _FLAGS and not isinstance(value, bool):
            bad = "true or false"
        elif name in _SECONDS and not (is_number and (value > 0 if _SECONDS[name] == "> 0" else value >= 0)):
            bad = f"a number of seconds {_SECONDS[name]}"
        elif name in _UNIT and not (is_number and 0.0 <= value <= 1.0):
            bad = "a number from 0 to 1"
        if bad:
            example = {"timeout": "?timeout=120", "retries": "?retries=8", "concurrency": "?concurrency=4"}
            raise ModelError(
                f"option {name}={value!r} of {uri.shown} must be {bad}"
                + (f", e.g. {example[name]}" if name in example else "")
            )
        if name in _COUNTS:
            options[name] = int(value)


def served(uri: ModelURI, value: Any) -> bool:
    """The ``?server=`` option: 1 (or true) runs a GGUF model behind a llama.cpp server that fairprobe
    starts and stops (:mod:`fairprobe.models.llama_server`), 0 (or false) in-process. Anything else,
    or on a model that is not a GGUF chat model, is one :class:`ModelError` line."""
    if value not in (True, False, 0, 1) or isinstance(value, float):
        raise ModelError(
            f"option server={value!r} of {uri.shown} must be 1 (serve the GGUF with a llama.cpp server "
            "that fairprobe starts and stops) or 0 (in-process)"
        )
    if value and not (uri.scheme == "gguf" or (uri.scheme == "embedded" and model_kind(uri) == "chat")):
        raise ModelError(
            f"option server=1 of {uri.shown}: only gguf:PATH and embedded:smollm2 models can be served by "
            "fairprobe; drop ?server=1 (an OpenAI-compatible server you run yourself: openai+http://...)"
        )
    return bool(value)


def check_uri_options(uri: str) -> None:
    """Refuse a URI whose ``?query`` names an undocumented option (``?password=``, ``?secret=``, a
    typo) or a value no backend can use (``?probe=maybe``, ``?retries=1e20``), before anything is
    written: a run calls it on every model URI of a block before its folder is touched."""
    rest, options = split_query(uri)
    shown = redact_uri(str(uri))
    for name in options:
        if is_secret_option(name) or name.lower() not in KNOWN_OPTIONS:
            raise ModelError(
                f"unknown option {name!r} in model URI '{shown}'; options: {', '.join(sorted(KNOWN_OPTIONS))}"
                + (
                    " (a key is never read from a URI: export it and add ?api_key_env=NAME)"
                    if is_secret_option(name) or any(w in name.lower() for w in ("pass", "secret", "auth"))
                    else ""
                )
            )
    if options:
        check_option_values(parse_uri(rest), dict(options))


def check_block_uris(value: Any) -> None:
    """:func:`check_uri_options` on every model URI with a query among a block's fields."""
    if isinstance(value, dict):
        for v in value.values():
            check_block_uris(v)
    elif isinstance(value, list | tuple):
        for v in value:
            check_block_uris(v)
    elif isinstance(value, str) and "?" in value and value.partition(":")[0].lower() in SCHEMES:
        check_uri_options(value)


def _construct(
    cls: Any, uri: ModelURI, args: tuple[Any, ...], options: dict[str, Any], **internal: Any
) -> Any:
    """``cls(*args, **options, **internal)`` after checking every user option is one ``cls`` accepts
    and has a usable value."""
    for name in options:
        _check_option(cls, uri, name)
    check_option_values(uri, options)
    return cls(*args, **options, **internal)


def _api_key(env_name: str | None, uri: ModelURI) -> str | None:
    if env_name is None:
        return None
    value = os.environ.get(env_name, "")
    if not value:
        raise ModelError(f"{env_name} is not set; export {env_name}=... to use {uri.shown}")
    bad = control_character(value)
    if bad is not None:  # sent as a header, a CR/LF would end it and inject headers of its own
        raise ModelError(
            f"{env_name} holds a control character ({bad}); export it again without it (a key "
            "pasted with a line break?)"
        )
    return value


def _build(u: ModelURI, kind: Kind, options: dict[str, Any]) -> Any:
    if u.scheme == "spacy":
        from fairprobe.models.spacy_backend import SpacyClassifier

        return _construct(SpacyClassifier, u, (u.target,), options)
    if u.scheme == "hf":
        from fairprobe.models.hf_backend import HFChat, HFClassifier

        return _construct(HFClassifier if kind == "classifier" else HFChat, u, (u.target,), options)
    if u.scheme in ("openai", "openai+http", "openai+https"):
        from fairprobe.models.openai_backend import OPENAI_BASE_URL, OpenAIChat

        options = dict(options)
        for name in options:
            if is_secret_option(name):
                raise ModelError(
                    f"unknown option {name!r} for {u.shown}: a key is never read from a URI or a spec "
                    "(they are written to run folders); export it, e.g. export MY_KEY=..., and add "
                    "?api_key_env=MY_KEY to the URI"
                )
        if u.scheme == "openai":
            key = _api_key(options.pop("api_key_env", "OPENAI_API_KEY"), u)
            base = options.pop("base_url", OPENAI_BASE_URL)
            return _construct(OpenAIChat, u, (base, u.target), options, api_key=key, backend="openai")
        key = _api_key(options.pop("api_key_env", None), u)
        return _construct(OpenAIChat, u, (u.target, u.fragment or None), options, api_key=key)
    if u.scheme == "gguf":
        from fairprobe.models.gguf_backend import GGUFChat

        if served(u, options.pop("server", False)):
            from fairprobe.models.llama_server import ServedGGUFChat

            return _construct(ServedGGUFChat, u, (u.target,), options)
        return _construct(GGUFChat, u, (u.target,), options)
    if u.scheme == "py":
        from fairprobe.models.python_backend import PyClassifier

        return _construct(PyClassifier, u, (u.target,), options)
    if u.scheme == "py-chat":
        from fairprobe.models.python_backend import PyChat

        return _construct(PyChat, u, (u.target,), options)
    from fairprobe.models.embedded import load_embedded
    from fairprobe.models.gguf_backend import GGUFChat
    from fairprobe.models.spacy_backend import SpacyClassifier

    if served(u, options.pop("server", False)):
        from fairprobe.models.embedded import smollm2_gguf_path
        from fairprobe.models.llama_server import ServedGGUFChat

        return _construct(ServedGGUFChat, u, (smollm2_gguf_path(),), options, model_id=f"embedded:{u.target}")
    for name in options:
        _check_option(SpacyClassifier if kind == "classifier" else GGUFChat, u, name)
    check_option_values(u, options)
    return load_embedded(u.target, **options)


def _parse_with_options(uri: str, options: dict[str, Any]) -> tuple[ModelURI, dict[str, Any]]:
    """The parsed URI and its backend options: the URI's ``?query`` under the loader's ``options``
    (options given in Python win)."""
    rest, query = split_query(uri)
    return parse_uri(rest), {**query, **options}


def load_model(uri: str, **options: Any) -> Classifier | ChatModel:
    """Load whatever ``uri`` naturally is: a :class:`Classifier` or a :class:`ChatModel`."""
    u, options = _parse_with_options(uri, options)
    return _build(u, model_kind(u), options)


def load_classifier(uri: str, **options: Any) -> Classifier:
    """Load a :class:`Classifier`.

    A chat-model URI needs ``task=ClassificationTask(...)``: it is then wrapped in an
    :class:`~fairprobe.models.llm_classifier.LLMClassifier`.
    """
    u, options = _parse_with_options(uri, options)
    task = options.pop("task", None)
    kind = model_kind(u)
    if kind == "chat":
        if task is None:
            raise ModelError(
                f"{u.shown} is a chat model, not a classifier; give a classification task (labels, prompt) to use it as one"
            )
        from fairprobe.models.llm_classifier import LLMClassifier

        return LLMClassifier(_build(u, kind, options), task)
    if task is not None:
        raise ModelError(f"{u.shown} is already a classifier; drop the classification task")
    return _build(u, kind, options)


def load_chat(uri: str, **options: Any) -> ChatModel:
    """Load a :class:`ChatModel`; options are backend options (``concurrency``, ``timeout``, ...)."""
    u, options = _parse_with_options(uri, options)
    if model_kind(u) != "chat":
        raise ModelError(
            f"{u.shown} is a classifier, not a chat model; use a chat model URI such as embedded:smollm2"
        )
    return _build(u, "chat", options)
