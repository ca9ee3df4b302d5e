"""``python -m fairprobe.cli``: the same as the ``fairprobe`` command."""

from fairprobe.cli.commands import main

main()
