"""Write the README's option table (between ``<!-- options:begin -->`` and ``<!-- options:end -->``)
from the technique blocks, so the README never restates a default by hand.

    python scripts/options_table.py            # rewrite README.md
    python scripts/options_table.py --check    # exit 1 when README.md is out of date (CI)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairprobe.cli.docs import options_markdown, replace_between_markers
from fairprobe.technique.registry import techniques

README = Path(__file__).resolve().parent.parent / "README.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that README.md is up to date")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args()
    text = args.readme.read_text(encoding="utf-8")
    new = replace_between_markers(text, options_markdown(techniques()))
    if args.check:
        if new != text:
            print(f"{args.readme} option table is out of date; run scripts/options_table.py", file=sys.stderr)
            return 1
        return 0
    args.readme.write_text(new, encoding="utf-8")
    print(f"wrote the option table into {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
