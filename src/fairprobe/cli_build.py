"""Command-line options generated from a pydantic model: one declaration per option.

A technique's spec block (:class:`~fairprobe.spec.BlockBase` subclass) is the single declaration of
its options. This module turns the block's fields into Typer options, so ``fairprobe hinter --help``,
the spec file, ``fairprobe init``, the README option table and the Python API
(:mod:`fairprobe.api`) all read the same name, default, bounds and help:

- a field ``max_mutants_per_text`` is ``--max-mutants-per-text`` (a block may rename an option in
  ``option_names`` where the spec key is ambiguous on the command line, e.g. two meanings of ``cap``);
- list fields take repeated flags and comma lists alike (``--attributes race,gender`` ==
  ``--attributes race --attributes gender``);
- booleans are ``--x/--no-x``;
- ``Literal`` fields show their choices; ``ge``/``le``/``gt``/``lt`` show as a range.

Every value reaches the block unconverted, so bounds, choices and types are checked once, by the
block model, with the same one-line error as a spec file (``--order: Input should be less than or
equal to 4``). An option left out is not passed at all: the block's default (or a preset) applies.

Old option names stay as hidden :class:`Alias` options that print one deprecation line on stderr.

Why not a library: pydanclick (the maintained pydantic → click adapter) builds plain click options
that parse and validate values in click (multi-line error boxes, no comma lists, JSON for lists) and
hands back a model instance; fairprobe commands are Typer commands that must pass raw values to the
runner (run folders, ``--model`` repeated across models, presets that fill only unset fields) and
keep deprecated aliases. The mapping needed here is ~150 lines over Typer's own signature reading.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from rich.markup import escape

VERDICT_FIELDS = frozenset(
    {"name", "seed", "thresholds", "allow_empty", "max_invalid_rate", "accept_untested"}
)
"""Fields every block inherits from ``BlockBase``: run options on the command line and in Python
(``--out`` names the folder, ``--fail-on`` holds the thresholds, the root options the verdict rules)."""


@dataclass(frozen=True)
class Alias:
    """An old option name kept working: ``--judge X`` sets ``judges``; with ``flag`` set, a flag that
    sets the target to ``flag`` (``--all-adjectives`` sets ``person_adjectives`` to False)."""

    option: str
    target: str
    flag: Any = None


# ----------------------------------------------------------------------------- field vocabulary


def own_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """The model's own fields (without the verdict fields of ``BlockBase``), in declaration order."""
    return {n: f for n, f in model.model_fields.items() if n not in VERDICT_FIELDS}


def cli_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """:func:`own_fields` less those the model declares not for the command line (``cli_exclude``)."""
    excluded = getattr(model, "cli_exclude", frozenset())
    return {n: f for n, f in own_fields(model).items() if n not in excluded}


def option_name(model: type[BaseModel], field: str) -> str:
    """``--field-name``, or the model's ``option_names[field]``."""
    return "--" + getattr(model, "option_names", {}).get(field, field).replace("_", "-")


def default_value(info: FieldInfo) -> Any:
    """The field's default (a factory called); ``PydanticUndefined`` when it is required."""
    if info.is_required():
        return PydanticUndefined
    return info.get_default(call_default_factory=True)


def shown(value: Any) -> str:
    """A default as it reads on the command line: lists comma-joined, booleans true/false."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(shown(v) for v in value)
    return str(value)


def default_text(info: FieldInfo) -> str | None:
    """What help, ``init`` comments and the README show as the default; None when required or unset."""
    value = default_value(info)
    if value is PydanticUndefined or value is None or value == []:
        return None
    return shown(value)


def _bare(annotation: Any) -> tuple[Any, bool]:
    """(annotation without ``None``, whether None was allowed)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else typing.Union[tuple(args)]), True  # noqa: UP007
    return annotation, False


def _kind(info: FieldInfo) -> tuple[str, Any]:
    """("bool" | "list" | "choice" | "value", element type or choices)."""
    bare, _ = _bare(info.annotation)
    origin = typing.get_origin(bare)
    if bare is bool:
        return "bool", bool
    if origin in (list, tuple, set, frozenset):
        args = typing.get_args(bare)
        return "list", args[0] if args else str
    if origin is Literal:
        return "choice", typing.get_args(bare)
    return "value", bare


def bounds_text(info: FieldInfo) -> str:
    """``1<=x<=4`` from the field's ge/gt/le/lt (empty without bounds)."""
    low = high = ""
    for m in info.metadata:
        for attr, template in (("ge", "{}<="), ("gt", "{}<")):
            if getattr(m, attr, None) is not None:
                low = template.format(getattr(m, attr))
        for attr, template in (("le", "<={}"), ("lt", "<{}")):
            if getattr(m, attr, None) is not None:
                high = template.format(getattr(m, attr))
    if low and not high:  # x>=1 reads better than 1<=x
        return "x" + {"<=": ">=", "<": ">"}[low[len(low.rstrip("<=")) :]] + low.rstrip("<=")
    return f"{low}x{high}" if low or high else ""


def type_text(info: FieldInfo) -> str:
    """The metavar: ``<int> [1<=x<=4]``, ``<local|ray>``, ``<str,...>``."""
    kind, arg = _kind(info)
    if kind == "choice":
        return "<" + "|".join(str(a) for a in arg) + ">"
    if typing.get_origin(arg) is Annotated:
        arg = typing.get_args(arg)[0]
    if typing.get_origin(arg) in (typing.Union, types.UnionType):  # e.g. ``int | Literal["auto"]``
        return "<" + "|".join(_alternative(a) for a in typing.get_args(arg) if a is not type(None)) + ">"
    name = getattr(arg, "__name__", "str")
    name = {"NoneType": "str"}.get(name, name)
    text = f"<{name},...>" if kind == "list" else f"<{name}>"
    rng = bounds_text(info)
    return f"{text} [{rng}]" if rng else text


def _alternative(arg: Any) -> str:
    """One alternative of a union metavar: a literal's values, else the type's name."""
    if typing.get_origin(arg) is Literal:
        return "|".join(str(a) for a in typing.get_args(arg))
    return getattr(arg, "__name__", "str")


def help_text(info: FieldInfo, extra: str = "") -> str:
    """The field's description, then its default (or "required"); plain text, not console markup."""
    parts = [info.description or "", extra]
    text = "; ".join(p for p in parts if p)
    default = default_text(info)
    if info.is_required():
        text += " [required]"
    elif default is not None:
        text += f" [default: {default}]"
    return text.strip()


# ----------------------------------------------------------------------------- options


def _option(field: str, info: FieldInfo, name: str, *, repeat_help: str = "") -> Any:
    """The Typer annotation of one field's option (every value defaults to None = not given)."""
    kind, _ = _kind(info)
    text = escape(help_text(info, repeat_help))
    if kind == "bool":
        negative = "--no-" + name[2:]
        return Annotated[bool | None, typer.Option(f"{name}/{negative}", help=text, metavar="")]
    if kind == "list":
        text = escape(help_text(info, repeat_help or "repeat it or give a comma list"))
        return Annotated[list[str] | None, typer.Option(name, help=text, metavar=type_text(info))]
    return Annotated[str | None, typer.Option(name, help=text, metavar=type_text(info))]


MODEL_REPEAT = (
    "repeat it to run several models over the same test cases and compare each with the first "
    "(OUT/<model>, OUT/compare-<model>)"
)


class FieldOptions:
    """The options of some fields of a model, plus aliases, as ``inspect.Parameter`` objects, and
    the reading of their values back into field values."""

    def __init__(
        self,
        model: type[BaseModel],
        fields: Iterable[str] | None = None,
        *,
        aliases: Iterable[Alias] = (),
        repeat_model: bool = False,
    ) -> None:
        available = cli_fields(model)
        names = list(fields) if fields is not None else list(available)
        unknown = [f for f in names if f not in model.model_fields]
        if unknown:
            raise TypeError(f"{model.__name__} has no field(s) {', '.join(unknown)}")
        self.model = model
        self.fields = {f: model.model_fields[f] for f in names}
        self.aliases = list(aliases)
        self.repeat_model = repeat_model

    def option(self, field: str) -> str:
        return option_name(self.model, field)

    def parameters(self) -> list[inspect.Parameter]:
        params = []
        for field, info in self.fields.items():
            if field == "model" and self.repeat_model:
                text = escape(help_text(info, MODEL_REPEAT))
                annotation: Any = Annotated[
                    list[str] | None, typer.Option("--model", help=text, metavar="<uri>")
                ]
            else:
                annotation = _option(field, info, self.option(field))
            params.append(
                inspect.Parameter(field, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
            )
        for i, alias in enumerate(self.aliases):
            kind = bool | None if alias.flag is not None else list[str] | None
            params.append(
                inspect.Parameter(
                    f"alias_{i}",
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None,
                    annotation=Annotated[kind, typer.Option(alias.option, hidden=True)],
                )
            )
        return params

    def read(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """Pop this object's parameters from ``kwargs``: (values by field or alias target, with None
        for "not given"; the option each value came from, for error messages)."""
        values: dict[str, Any] = {}
        typed: dict[str, str] = {}
        for field in self.fields:
            value = kwargs.pop(field, None)
            if value is not None and _kind(self.fields[field])[0] == "list":
                value = split_values(value)
            values[field] = value
            typed[field] = self.option(field)
        for i, alias in enumerate(self.aliases):
            value = kwargs.pop(f"alias_{i}", None)
            if value is None or value == []:
                continue
            replacement = self.option(alias.target) if alias.target in self.fields else _dashed(alias.target)
            if alias.flag is False:
                replacement = "--no-" + replacement[2:]
            typer.echo(f"fairprobe: {alias.option} is deprecated; use {replacement}", err=True)
            if alias.flag is not None:
                value = alias.flag
            elif alias.target in self.fields and _kind(self.fields[alias.target])[0] == "list":
                value = [*(values.get(alias.target) or []), *split_values(value)]
            else:
                value = value[-1]
            current = values.get(alias.target)
            if alias.target not in self.fields or current is None or isinstance(value, list):
                values[alias.target] = value
                typed[alias.target] = alias.option
        return values, typed


def _dashed(name: str) -> str:
    return "--" + name.replace("_", "-")


def split_values(values: Iterable[str] | str) -> list[str]:
    """``["race,gender", "body"]`` -> ``["race", "gender", "body"]``; empty items are dropped, so
    ``--mrs ''`` is an empty list (refused by the block: "at least 1 item")."""
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in str(value).split(",") if part.strip()]


def block_options(
    model: type[BaseModel], fields: Iterable[str] = (), *, aliases: Iterable[Alias] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a stage command ``func(values, typed, **own)``: its CLI options are its own parameters
    (after the first two) plus options generated from ``fields`` of ``model``; it receives the field
    values checked by :func:`validated` (defaults filled in) and ``typed`` (field -> option as typed,
    for messages). An :class:`Alias` may also target one of ``func``'s own parameters."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        options = FieldOptions(model, fields, aliases=aliases)
        hints = typing.get_type_hints(func, include_extras=True)
        own = [
            p.replace(annotation=hints.get(p.name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
            for p in list(inspect.signature(func).parameters.values())[2:]
        ]
        defaults = {p.name: p.default for p in own}

        @functools.wraps(func)
        def call(**kwargs: Any) -> Any:
            values, typed = options.read(kwargs)
            for key in [k for k in values if k not in options.fields]:
                value = values.pop(key)
                if kwargs.get(key) == defaults.get(key):  # an old name of one of func's own options
                    kwargs[key] = value
            for p in own:
                typed.setdefault(p.name, _dashed(p.name))
            return func(validated(model, values, typed), typed, **kwargs)

        call.__signature__ = inspect.Signature(own + options.parameters())  # type: ignore[attr-defined]
        call.__annotations__ = {}
        del call.__wrapped__
        return call

    return decorate


def validated(model: type[BaseModel], values: dict[str, Any], typed: dict[str, str]) -> dict[str, Any]:
    """``values`` checked and converted by the fields of ``model`` (its bounds, types, choices), unset
    ones filled with the field's default: for stage commands that use values outside a run. A bad
    value is one :class:`~fairprobe.errors.UsageError` naming the option as typed."""
    from pydantic import ConfigDict, TypeAdapter, ValidationError

    from fairprobe.errors import UsageError

    result = {}
    for field, value in values.items():
        info = model.model_fields[field]
        if value is None:
            default = default_value(info)
            result[field] = None if default is PydanticUndefined else default
            continue
        adapter = TypeAdapter(
            Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation,
            config=ConfigDict(allow_inf_nan=False),
        )
        try:
            result[field] = adapter.validate_python(value)
        except ValidationError as exc:
            raise UsageError(f"{typed.get(field, _dashed(field))}: {exc.errors()[0]['msg']}") from None
    return result


def fail_on_help(model: type[BaseModel]) -> str:
    example = getattr(model, "example_metric", "") or "METRIC > 0.1"
    return escape(f"fail condition METRIC OP VALUE, e.g. '{example}' (repeatable)")


def run_parameters(model: type[BaseModel], out_help: str = "run folder") -> list[inspect.Parameter]:
    """The options of every technique run: ``--out``, ``--seed``, ``--overwrite``, ``--fail-on``."""
    kw = inspect.Parameter.KEYWORD_ONLY
    return [
        inspect.Parameter(
            "out", kw, default=None, annotation=Annotated[Path | None, typer.Option("--out", help=out_help)]
        ),
        inspect.Parameter(
            "seed", kw, default=0, annotation=Annotated[int, typer.Option(help="seed of every random choice")]
        ),
        inspect.Parameter(
            "overwrite",
            kw,
            default=False,
            annotation=Annotated[
                bool,
                typer.Option(
                    "--overwrite/--no-overwrite",
                    help="replace a run of a different spec in --out",
                    metavar="",
                ),
            ],
        ),
        inspect.Parameter(
            "fail_on",
            kw,
            default=None,
            annotation=Annotated[
                list[str] | None, typer.Option("--fail-on", help=fail_on_help(model), metavar="<condition>")
            ],
        ),
    ]


def technique_command(
    parent: typer.Typer,
    technique: str,
    model: type[BaseModel],
    *,
    name: str | None = None,
    callback: bool = False,
    fields: Iterable[str] | None = None,
    aliases: Iterable[Alias] = (),
    doc: str = "",
    describe: Callable[[dict[str, Any]], str | None] | None = None,
    check: Callable[[dict[str, Any]], None] | None = None,
    needs: str = "",
    required: Iterable[str] = (),
) -> None:
    """Add ``fairprobe <technique> [name]``: every CLI field of ``model`` (or ``fields``) as an option,
    plus ``--out``, ``--seed``, ``--overwrite``, ``--fail-on``; ``--model`` repeatable when the block
    has a model. With ``callback``, the command is ``parent``'s callback (a group such as ``caffe``
    whose sub-commands are stages) and does nothing when a sub-command is invoked.

    ``check(values)`` may refuse a combination before the run; ``required`` names fields this command
    needs though the block does not (``caffe run`` needs ``prompts``); ``needs`` is added to the
    message when ``--out`` is missing."""
    from fairprobe.cli_common import run_technique
    from fairprobe.errors import UsageError

    options = FieldOptions(model, fields, aliases=aliases, repeat_model=True)
    run = run_parameters(model)
    ctx_param = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)]

    def command(**kwargs: Any) -> None:
        ctx = kwargs.pop("ctx", None)
        if ctx is not None and ctx.invoked_subcommand is not None:
            return
        values, typed = options.read(kwargs)
        command_name = " ".join(["fairprobe", technique, *([name] if name else [])])
        for field, info in options.fields.items():
            if (info.is_required() or field in required) and values.get(field) in (None, []):
                what = info.description or "a value"
                raise UsageError(f"{command_name} needs {options.option(field)}: {what}")
        if kwargs["out"] is None:
            raise UsageError(f"{command_name} needs --out: the run folder{needs}")
        if check is not None:
            check(values)
        run_technique(
            technique,
            values,
            kwargs["out"],
            seed=kwargs["seed"],
            overwrite=kwargs["overwrite"],
            fail_on=kwargs["fail_on"],
            describe=describe,
            option_name=lambda field: typed.get(field, option_name(model, field)),
        )

    params = options.parameters()
    command.__signature__ = inspect.Signature((ctx_param if callback else []) + params + run)  # type: ignore[attr-defined]
    command.__doc__ = doc or (model.__doc__ or "").strip().splitlines()[0]
    command.__name__ = name or technique
    if callback:
        parent.callback(invoke_without_command=True)(command)
    else:
        parent.command(name or technique)(command)
