"""The gettext catalogues of what students read: extract the English messages, keep each language's
`.po` files in step, check them, and compile what a release ships (docs/translations.md).

    python -m autograder.translations update [--lang zh]   # extract; merge into the .po files
    python -m autograder.translations check [--lang zh]    # exit 1 and list what is wrong

The English text is the source of every message (the msgid). Messages are extracted with Babel from:

* the kit's Python (`_("...")` and `N_("...")` calls, selfcheck/i18n.py), area `kit_<package>` (`kit` for
  the modules at the top);
* each assignment's suites, public and hidden: their `_`/`N_` calls and the first line of each test's
  docstring (the test's name for students, plugin.describe_test), area `suite_<nn>`;
* each assignment's misconception catalogue: the `bug:` and `fix:` lines of its mutants and degenerate
  entries (what a diagnosis says), area `catalogue_<nn>`;
* each instructor notebook's markdown, block by block (notebook_blocks), and the figure labels of its
  code cells (`tr("...")` calls, solutions/given.py), area `notebook_<nn>`;
* the figure labels of the given toolkit (`tr("...")` calls in solutions/), area `toolkit`;
* the Jinja2 templates of the pages students get (the nbgrader feedback page): their `_` calls, area `pages`.

Each area is one file `autograder/locale/<lang>/LC_MESSAGES/<area>.po`, so that translators of different
parts never edit the same file. `check` fails on a message with no translation (or only a fuzzy one,
which gettext does not use), on a translation that drops, adds or renames a `{placeholder}`, and on a
`.po` file no area extracts.
"""
from __future__ import annotations

import argparse
import ast
import io
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_python
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po
from jinja2.ext import babel_extract

from autograder.selfcheck import i18n

KIT = Path(__file__).resolve().parent  # autograder/
REPO = KIT.parent
KEYWORDS = {"_": None, "N_": None}
#: A message's placeholders: `{name}`, `{0}`, `{name!r}`, `{x:.2f}` (not `{{` escapes).
_PLACEHOLDER = re.compile(r"(?<!\{)\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}")


def placeholders(text: str) -> list[str]:
    """The `{...}` placeholders of a message, sorted (a translation may reorder them)."""
    return sorted(_PLACEHOLDER.findall(text))


def _extracted(path: Path, extractor: Callable[..., Iterable[Any]], keywords: Any) -> Iterator[tuple[str, int]]:
    """The literal messages a Babel extractor finds in a file, with their lines."""
    with path.open("rb") as fh:
        for lineno, _funcname, message, _comments in extractor(fh, keywords, [], {}):
            if isinstance(message, str) and message:
                yield message, lineno


def _python_calls(path: Path) -> Iterator[tuple[str, int]]:
    """The `_("...")` and `N_("...")` calls of a Python file."""
    return _extracted(path, extract_python, KEYWORDS)


def _template_calls(path: Path) -> Iterator[tuple[str, int]]:
    """The `_("...")` calls of a Jinja2 template (Babel's Jinja2 extractor)."""
    return _extracted(path, babel_extract, tuple(KEYWORDS))


def _test_docstrings(path: Path) -> Iterator[tuple[str, int]]:
    """The first line of each test function's docstring: its name for students."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            doc = (ast.get_docstring(node) or "").strip().splitlines()
            if doc and doc[0].strip():
                yield doc[0].strip(), node.lineno


def _catalogue_lines(path: Path) -> Iterator[tuple[str, int]]:
    from autograder.catalogue.index import parse_header

    header = parse_header(path)
    for key in ("bug", "fix"):
        if header.get(key):
            yield header[key], 1


def notebook_blocks(markdown: str) -> list[str]:
    """A markdown cell's blocks, each translated as one message: paragraphs, lists and tables separated
    by blank lines, with display math and code fences kept whole."""
    blocks: list[list[str]] = [[]]
    closing: Optional[str] = None
    for line in markdown.splitlines():
        stripped = line.strip()
        if closing is None and not stripped:
            blocks.append([])
            continue
        blocks[-1].append(line)
        if closing is not None:
            if stripped.endswith(closing):
                closing = None
            continue
        for opening in ("$$", "```"):
            if stripped.startswith(opening):
                rest = stripped[len(opening):]
                if opening == "```" or not rest.endswith("$$"):
                    closing = opening
                break
    return ["\n".join(b) for b in blocks if any(x.strip() for x in b)]


def notebook_markdown(path: Path) -> Iterator[tuple[str, int]]:
    """The markdown cells of a jupytext percent notebook, as (source, line of its header)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start: Optional[int] = None
    for i, line in enumerate([*lines, "# %%"]):
        if line.startswith("# %%"):
            if start is not None:
                body = [x[2:] if x.startswith("# ") else x[1:] if x.startswith("#") else x for x in lines[start + 1:i]]
                yield "\n".join(body).strip("\n"), start + 1
            start = i if line.startswith("# %% [markdown]") else None


def _translatable(block: str) -> bool:
    """Whether a markdown block has words to translate (display math alone has none)."""
    return not (block.startswith("$$") and block.endswith("$$"))


def _notebook_messages(path: Path) -> Iterator[tuple[str, int]]:
    for cell, lineno in notebook_markdown(path):
        for block in notebook_blocks(cell):
            if _translatable(block):
                yield block, lineno


#: The support module's call that labels a figure in the release's language (solutions/given.py `tr`).
FIGURE_KEYWORDS = {"tr": None}


def _figure_labels(path: Path) -> Iterator[tuple[str, int]]:
    """The `tr("...")` labels of a notebook's code cells (its markdown is comments, which Babel skips)."""
    return _extracted(path, extract_python, FIGURE_KEYWORDS)


def translate_markdown(cell: str, catalog: Catalog) -> tuple[str, list[str]]:
    """A markdown cell translated block by block from its notebook's catalogue (`read(lang, area)`): (the
    text, the blocks that have no translation yet, or only a fuzzy one). Display math stays as it is."""
    out, missing = [], []
    for block in notebook_blocks(cell):
        done = _usable(catalog, block) if _translatable(block) else None
        if _translatable(block) and done is None:
            missing.append(block)
        out.append(done or block)
    return "\n\n".join(out), missing


def _usable(catalog: Catalog, msgid: str) -> Optional[str]:
    """The translation gettext would use (a fuzzy one it would not), or None."""
    done = catalog.get(msgid)
    return str(done.string) if done is not None and done.string and not done.fuzzy else None


def notebook_area(assignment_id: str) -> str:
    """The area of an assignment's notebook: `notebook_<nn>`."""
    return "notebook_" + assignment_id.split("_")[0]


def areas() -> dict[str, list[tuple[Path, Callable[[Path], Iterable[tuple[str, int]]]]]]:
    """Every area's sources and how each is read."""
    out: dict[str, list[tuple[Path, Callable[[Path], Iterable[tuple[str, int]]]]]] = {}
    suites, entries = KIT / "suites", KIT / "catalogue" / "entries"
    for path in sorted(KIT.rglob("*.py")):
        if suites in path.parents or entries in path.parents:
            continue
        package = path.relative_to(KIT).parts
        out.setdefault("kit" if len(package) == 1 else f"kit_{package[0]}", []).append((path, _python_calls))
    for path in sorted(suites.glob("*/test_*.py")):
        area = "suite_" + path.stem.split("_")[1]
        out.setdefault(area, []).extend([(path, _python_calls), (path, _test_docstrings)])
    for path in sorted([*entries.glob("*/mutants/*.py"), *entries.glob("*/degenerate/*.py")]):
        area = "catalogue_" + path.parents[1].name.split("_")[0]
        out.setdefault(area, []).append((path, _catalogue_lines))
    for path in sorted((REPO / "assignments").glob("*/*.py")):
        area = notebook_area(path.stem)
        out.setdefault(area, []).extend([(path, _notebook_messages), (path, _figure_labels)])
    for path in sorted((REPO / "solutions").glob("*.py")):
        if any(True for _ in _figure_labels(path)):
            out.setdefault("toolkit", []).append((path, _figure_labels))
    for path in sorted((KIT / "integrations" / "templates").rglob("*.j2")):
        out.setdefault("pages", []).append((path, _template_calls))
    return out


def extract(area: str) -> Catalog:
    """The English messages of one area (a template: no translations)."""
    catalog = Catalog(project="attention-course", domain=area, charset="utf-8", fuzzy=False)
    for path, read in areas()[area]:
        for message, lineno in read(path):
            where = (str(path.relative_to(REPO)), lineno)
            existing = catalog.get(message)
            if existing is None:
                flags = ["python-brace-format"] if placeholders(message) and not area.startswith("notebook_") else []
                catalog.add(message, locations=[where], flags=flags)
            elif where not in existing.locations:
                existing.locations.append(where)
    return catalog


def po_path(lang: str, area: str) -> Path:
    return i18n.LOCALE / lang / "LC_MESSAGES" / f"{area}.po"


def read(lang: str, area: str) -> Catalog:
    path = po_path(lang, area)
    if not path.is_file():
        return Catalog(locale=lang, domain=area, project="attention-course", charset="utf-8")
    with path.open("rb") as fh:
        return read_po(fh, locale=lang, domain=area)


def write(lang: str, area: str, catalog: Catalog) -> None:
    path = po_path(lang, area)
    path.parent.mkdir(parents=True, exist_ok=True)
    catalog.fuzzy = False  # the header: gettext reads it either way
    catalog.revision_date = catalog.creation_date  # a fixed date: an update that changes nothing writes nothing new
    catalog.project, catalog.version, catalog.copyright_holder = "attention-course", "1", "the course kit's authors"
    catalog.msgid_bugs_address, catalog.last_translator = "", "the course kit's authors"
    catalog.language_team = f"{lang} <course kit>"
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=0, ignore_obsolete=True, include_lineno=False, omit_header=False)
    path.write_bytes(buffer.getvalue())


def update(lang: str) -> list[str]:
    """Merge the extracted messages into every area's `.po` (new ones untranslated, changed ones fuzzy,
    removed ones dropped); returns the areas written."""
    written = []
    for area in areas():
        template = extract(area)
        if not len(template) and not po_path(lang, area).is_file():
            continue  # no student-facing message (yet)
        catalog = read(lang, area)
        catalog.update(template, update_creation_date=False)
        write(lang, area, catalog)
        written.append(area)
    return written


def problems(lang: str, only: Optional[Iterable[str]] = None) -> list[str]:
    """What keeps `lang`'s catalogues from being complete: one line per message (empty: complete)."""
    found = []
    known = areas()
    for area in only or known:
        catalog, template = read(lang, area), extract(area)
        for msg in template:
            if not msg.id:
                continue
            where = ":".join(map(str, msg.locations[0])) if msg.locations else area
            done = catalog.get(msg.id)
            if done is None or not done.string:
                found.append(f"{where}: no {lang} translation: {msg.id[:80]!r}")
            elif done.fuzzy:
                found.append(f"{where}: {lang} translation marked fuzzy (the English changed): {msg.id[:80]!r}")
            elif placeholders(str(done.string)) != placeholders(str(msg.id)):
                found.append(f"{where}: {lang} translation has placeholders {placeholders(str(done.string))}, "
                             f"the English {placeholders(str(msg.id))}: {msg.id[:80]!r}")
    folder = i18n.LOCALE / lang / "LC_MESSAGES"
    if only is None and folder.is_dir():
        found += [f"{p.relative_to(REPO)}: no area extracts it" for p in sorted(folder.glob("*.po")) if p.stem not in known]
    return found


def compiled(lang: str, keep: Callable[[str], bool]) -> bytes:
    """A `.mo` holding the translations of the messages found in the files that `keep` accepts (a
    repository-relative path): what a release's bundle can show, and nothing of the hidden tests."""
    out = Catalog(locale=lang, domain="student", charset="utf-8")
    for area in areas():
        catalog = read(lang, area)
        for msg in extract(area):
            done = _usable(catalog, str(msg.id)) if msg.id else None
            if done is not None and any(keep(f) for f, _ in msg.locations):
                out.add(msg.id, done)
    buffer = io.BytesIO()
    write_mo(buffer, out)
    return buffer.getvalue()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.translations", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("update", "check"))
    parser.add_argument("--lang", default="zh", choices=[x for x in i18n.LANGUAGES if x != i18n.SOURCE])
    parser.add_argument("--area", action="append", help="only this area (repeatable); default: all")
    args = parser.parse_args(argv)
    if args.action == "update":
        for area in update(args.lang):
            print(po_path(args.lang, area).relative_to(REPO))
        return 0
    found = problems(args.lang, args.area)
    print("\n".join(found) if found else f"{args.lang}: every message translated")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
