"""The documentation site builds, offline, without a warning, and every link in it resolves.

``mkdocs build --strict`` (what ``make docs`` runs) already refuses a link to a missing page or anchor
and a page left out of the navigation (mkdocs.yml's ``validation``); the built site is then walked
link by link, images and the theme's own files included, so a link mkdocs does not check (raw HTML,
an image, a file beside the pages) cannot break either. The README is the start page on GitHub and is
not part of the site: its links into ``docs/`` are checked here too, and its length is kept."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_MAX_LINES = 400


class _Links(HTMLParser):
    """Every ``href``/``src`` of a page, and every ``id`` it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.loaded: list[str] = []  # what a browser fetches to show the page: scripts, styles, images
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src"):
                self.links.append(value)
                if name == "src" or tag == "link":
                    self.loaded.append(value)
            elif name == "id":
                self.ids.add(value)


def _nav_pages(nav: object) -> list[str]:
    """The Markdown files named anywhere in mkdocs.yml's ``nav``."""
    if isinstance(nav, str):
        return [nav] if nav.endswith(".md") else []
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    return []


def _config() -> dict:
    # mkdocs.yml may hold python tags (``!!python/name``) in other projects; this one is plain YAML
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_nav_page_exists_and_every_page_is_in_the_nav() -> None:
    nav = _nav_pages(_config()["nav"])
    missing = [page for page in nav if not (DOCS / page).is_file()]
    assert not missing, f"mkdocs.yml's nav names pages that docs/ does not have: {missing}"
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(nav)) == pages, f"pages in docs/ not in the nav: {sorted(set(pages) - set(nav))}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install 'fairprobe[docs]'")
    pytest.importorskip("material", reason="the docs extra is not installed: pip install 'fairprobe[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml")]
        + ["--site-dir", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "WARNING" not in log, log
    return out


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    for page in _nav_pages(_config()["nav"]):
        assert (site / Path(page).with_suffix(".html")).is_file(), page


def test_every_internal_link_of_the_built_site_resolves(site: Path) -> None:
    pages: dict[Path, _Links] = {}
    for html in site.rglob("*.html"):
        parser = _Links()
        parser.feed(html.read_text(encoding="utf-8"))
        pages[html.resolve()] = parser
    assert len(pages) >= 10, "the site has fewer pages than the nav names"
    broken = []
    for html, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue  # external: the site must not need them, and the offline build has none it needs
            if not parts.path:
                target = html
            elif parts.path.startswith("/"):  # 404.html links from the server's root
                target = (site / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (html.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{html.relative_to(site.resolve())}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{html.relative_to(site.resolve())}: {link} (no such anchor)")
    assert not broken, "\n".join(broken)


def test_the_built_site_loads_nothing_from_the_network(site: Path) -> None:
    """No script, style sheet, font or image comes from another host: the site reads offline."""
    remote = []
    for html in site.rglob("*.html"):
        parser = _Links()
        parser.feed(html.read_text(encoding="utf-8"))
        remote += [f"{html.name}: {url}" for url in parser.loaded if urlsplit(url).netloc]
    assert not remote, remote


def test_readme_is_a_start_page_whose_links_resolve() -> None:
    """README.md stays short, and each of its relative links names a file of the repository."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert any(link.startswith("docs/") for link in links), "the README points to the documentation"
    broken = []
    for link in links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or link.startswith("#"):
            continue
        if not (ROOT / unquote(parts.path)).exists():
            broken.append(link)
    assert not broken, f"README.md links to files that do not exist: {broken}"
