"""Report writers: the same four files for every technique (DESIGN.md §4)."""

from fairprobe.report.sections import (
    Analysis,
    BarChart,
    Example,
    Examples,
    Group,
    Paragraph,
    Segment,
    Table,
    VennChart,
)

__all__ = [
    "Analysis",
    "BarChart",
    "Example",
    "Examples",
    "Group",
    "Paragraph",
    "Segment",
    "Table",
    "VennChart",
]
