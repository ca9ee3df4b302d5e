"""Write the documentation's option tables (``docs/options.md``, between ``<!-- options:begin -->`` and
``<!-- options:end -->``) from the technique blocks, so the docs never restate a default by hand.

    python scripts/options_table.py            # rewrite docs/options.md
    python scripts/options_table.py --check    # exit 1 when docs/options.md is out of date (CI)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairprobe.cli.docs import options_markdown, replace_between_markers
from fairprobe.technique.registry import techniques

PAGE = Path(__file__).resolve().parent.parent / "docs" / "options.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the page is up to date")
    parser.add_argument("--page", "--readme", dest="page", type=Path, default=PAGE)
    args = parser.parse_args()
    text = args.page.read_text(encoding="utf-8")
    new = replace_between_markers(text, options_markdown(techniques()))
    if args.check:
        if new != text:
            print(f"{args.page} option table is out of date; run scripts/options_table.py", file=sys.stderr)
            return 1
        return 0
    args.page.write_text(new, encoding="utf-8")
    print(f"wrote the option table into {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
