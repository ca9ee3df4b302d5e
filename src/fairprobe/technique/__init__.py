"""The technique contract: what a technique package provides and what it gets.

A technique is one package under ``fairprobe.methods`` (or a third-party package) that exposes a
:class:`~fairprobe.technique.registry.Technique` (its stages and metadata) through the
``fairprobe.techniques`` entry point. It builds on three things from here, and on nothing from the
run engine, the command line or another technique:

- :class:`~fairprobe.technique.block.BlockBase` (:mod:`.block`): the base of its spec block;
- :class:`~fairprobe.technique.context.RunContext` (:mod:`.context`): what ``execute`` receives;
- :class:`~fairprobe.technique.registry.Technique` (:mod:`.registry`): the contract itself, with every
  stage documented in one place.

:mod:`.spec` reads a spec file into validated blocks (:class:`~fairprobe.technique.spec.BlockSpec`).
"""
