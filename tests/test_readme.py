"""The README and the documentation site stay true and navigable: the README's test command is the one CI
runs, every path and module the maps ("What is where", in the README and in docs/development.md) name
exists, every page of the site is at most two clicks from the README, and the generated pages keep the
markers their scripts write between."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from autograder import config, generated_docs

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
#: The full map of the tree, module by module (the README's is folder by folder).
DEVELOPMENT = (DOCS / "development.md").read_text(encoding="utf-8")


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    first_block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    demo, tests = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert demo == "bash .ci/install && course demo"
    ci = (REPO / ".ci" / "run").read_text()
    assert tests.startswith("bash .ci/install && ") and "bash .ci/install" in ci
    assert tests.removeprefix("bash .ci/install && ") in ci.splitlines()


def expand(pattern: str) -> list[str]:
    """`a/{b,c}/<id>.py` -> every concrete path (assignment ids for <id>)."""
    ids = [a.id for a in config.default().assignments]
    options = [part.split(",") for part in re.findall(r"\{([^}]*)\}", pattern)]
    template = re.sub(r"\{[^}]*\}", "{}", pattern)
    out = []
    for choice in itertools.product(*options):
        path = template.format(*choice)
        out += [path.replace("<id>", i) for i in ids] if "<id>" in path else [path]
    return out


def map_rows(page: str) -> list[tuple[list[str], str]]:
    section = page.split("## What is where", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) >= 2:
            rows.append((re.findall(r"`([^`]+)`", cells[0]), cells[1]))
    return rows


@pytest.mark.parametrize("page, least", [(README, 12), (DEVELOPMENT, 15)], ids=["README", "development"])
def test_every_path_and_module_in_the_map_exists(page: str, least: int) -> None:
    rows = map_rows(page)
    assert len(rows) >= least
    missing = []
    for paths, what in rows:
        for pattern in paths:
            for path in expand(pattern):
                if not (any(REPO.glob(path)) if "*" in path else (REPO / path).exists()):
                    missing.append(path)
        folder = paths[0]
        if folder.startswith("autograder/") and folder.endswith("/") and "{" not in folder:
            # The folder's modules are listed as "`name` (what it does)", "`a`, `b` and `c`".
            for name in re.findall(r"`([\w<>{},/*.-]+)`(?= \(|,| and\b| \||$)", what):
                if re.fullmatch(r"[a-z_]+/?", name):  # a module or subpackage of the folder
                    if not ((REPO / folder / f"{name}.py").exists() or (REPO / folder / name).is_dir()):
                        missing.append(folder + name)
                elif name.endswith((".py", ".json")):  # a file of the folder
                    missing += [path for path in expand(folder + name) if not any(REPO.glob(path))]
    assert missing == [], f"the map names what is not in the tree: {missing}"


#: A Markdown link to a page: `[text](path.md)` or `[text](path.md#anchor)`.
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)\s]*)?\)")


def links(page: Path) -> set[Path]:
    """The Markdown pages `page` links to (paths relative to its folder, as GitHub and MyST read them)."""
    return {(page.parent / target).resolve() for target in LINK.findall(page.read_text(encoding="utf-8"))}


def test_every_docs_page_is_two_clicks_from_the_readme() -> None:
    """README -> a page -> any page: a newcomer finds every task's page from the README in two clicks."""
    pages = {p.resolve() for p in DOCS.glob("*.md")}
    first = links(REPO / "README.md")
    second = set().union(*(links(p) for p in first if p in pages))
    assert first & pages, "the README links to no page of docs/"
    assert sorted(p.name for p in pages - first - second) == []
    assert sorted(str(p) for p in (first | second) if not p.exists()) == []  # no link to a missing page


def test_the_readmes_links_to_headings_exist() -> None:
    """The README is not part of the site (Sphinx checks the pages' own links): its `page.md#heading` links
    must name a heading of that page, as GitHub and MyST spell anchors."""
    def slug(heading: str) -> str:
        return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")

    broken = []
    for target, heading in re.findall(r"\]\(([^)#\s]+\.md)#([^)\s]+)\)", README):
        headings = re.findall(r"^#{1,6} (.+)$", (REPO / target).read_text(encoding="utf-8"), flags=re.M)
        if heading not in {slug(h) for h in headings}:
            broken.append(f"{target}#{heading}")
    assert broken == []

def test_the_generated_pages_keep_their_markers(tmp_path: Path) -> None:
    """The zoo's and the diagnosis' scripts (--update-docs) write between their page's markers and nowhere
    else; the pages carry those markers."""
    for page, name in [(generated_docs.ZOO_SCORES, "zoo-table"), (generated_docs.DIAGNOSIS_MEASURED, "diagnosis-table")]:
        text = page.read_text(encoding="utf-8")
        assert text.count(f"<!-- {name}:start -->") == 1 and text.count(f"<!-- {name}:end -->") == 1, page
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nbefore\n<!-- t:start -->\nold\n<!-- t:end -->\nafter\n")
    generated_docs.write_between_markers(page, "t", "| new |\n")
    assert page.read_text() == "# Title\n\nbefore\n<!-- t:start -->\n| new |\n<!-- t:end -->\nafter\n"
    with pytest.raises(SystemExit, match="no <!-- u:start -->"):
        generated_docs.write_between_markers(page, "u", "x")

def test_ci_install_changes_nothing_outside_the_environment(tmp_path: Path) -> None:
    """`bash .ci/install` installs into the interpreter's environment only: it never (re)writes the
    user's Jupyter kernels (an `ipykernel install --user --name python3` pointed every other project's
    notebooks at the interpreter that ran the install). Run with stand-ins for Python and the tools
    it checks for, recording what it asks of Python, with an empty HOME."""
    import os
    import stat
    import subprocess

    bin_dir, home, log = tmp_path / "bin", tmp_path / "home", tmp_path / "calls"
    bin_dir.mkdir()
    home.mkdir()
    for tool in ("bwrap", "chromium", "chromedriver"):
        (bin_dir / tool).write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "python").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 0\n')
    for f in bin_dir.iterdir():
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(home),
           "PYTHON": str(bin_dir / "python")}
    proc = subprocess.run(["bash", str(REPO / ".ci" / "install")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    assert any("pip install" in c for c in calls), calls
    assert not [c for c in calls if "ipykernel" in c or "--user" in c or "jupyter" in c], calls
    assert not list(home.rglob("*")), "the install wrote into HOME"
