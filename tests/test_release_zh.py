"""The Chinese edition of a release (`course release ID --lang zh`): the same notebook with its markdown
from notebook_<nn>.po, the same code cells, a compiled catalogue without hidden tests, and figures that
draw their Chinese labels.

Two assignments keep the cost small (01 and 02: no training); all six are run by hand with
`course release --lang zh --force` and nbclient (docs/term.md).
"""
from __future__ import annotations

import gettext
import inspect
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from babel.messages.catalog import Catalog

from autograder import config
from autograder import translations
from autograder.authoring import release
from kit_helpers import this_python_kernel
from test_release import _execute

# One worker runs the module: its releases (`both`, module scope) are built once, not once per worker.
pytestmark = pytest.mark.xdist_group("release_zh")

IDS = ["01_kernel_regression", "02_attention_scoring"]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> Path:
    """One course folder with the English release (release/, the course's language) and the Chinese one
    (release-zh/) of IDS."""
    root = tmp_path_factory.mktemp("release-zh")
    course = config.default()
    assert course.language == "en"
    for lang in ("en", "zh"):
        assert release.release(course, IDS, force=True, course_dir=root, lang=lang, echo=lambda s: None) == IDS
    return root


def _notebook(root: Path, folder: str, assignment: str):
    return nbformat.read(root / folder / assignment / f"{assignment}.ipynb", as_version=4)


@pytest.mark.parametrize("assignment", IDS)
def test_code_cells_are_the_same_and_every_markdown_cell_is_chinese(both, assignment):
    """nbgrader sees the same notebook: the same cells in the same order, the code byte for byte, the same
    ids and nbgrader metadata (points, checksums); only the markdown is translated, all of it."""
    en, zh = _notebook(both, "release", assignment), _notebook(both, "release-zh", assignment)
    assert [c.cell_type for c in en.cells] == [c.cell_type for c in zh.cells]
    assert [c.get("id") for c in en.cells] == [c.get("id") for c in zh.cells]
    assert [c.metadata for c in en.cells] == [c.metadata for c in zh.cells]
    code = [(a.source, b.source) for a, b in zip(en.cells, zh.cells) if a.cell_type == "code"]
    assert code and all(a == b for a, b in code)
    markdown = [(a.source, b.source) for a, b in zip(en.cells, zh.cells) if a.cell_type == "markdown"]
    assert markdown and all(CJK.search(b) and a != b for a, b in markdown)
    assert all(not CJK.search(a) for a, _ in markdown)


@pytest.mark.parametrize("assignment", IDS)
def test_the_bundle_speaks_its_language_and_shows_no_hidden_test(both, assignment):
    """The zh bundle carries selfcheck/i18n.py, its language in signatures.json and a .mo that holds the
    notebook's words and none of the hidden suite's messages; the English bundle has no catalogue."""
    en, zh = both / "release" / assignment, both / "release-zh" / assignment
    known = {lang: json.loads((folder / "autograder" / "selfcheck" / "signatures.json").read_text())
             for lang, folder in (("en", en), ("zh", zh))}
    assert known["en"]["language"] == "en" and known["zh"]["language"] == "zh"
    assert (zh / "autograder" / "selfcheck" / "i18n.py").is_file()
    assert not (en / "autograder" / "locale").exists()
    assert (en / "attention_support.py").read_text() + "\n\nuse_language('zh')\n" == (zh / "attention_support.py").read_text()
    with (zh / "autograder" / "locale" / "zh.mo").open("rb") as fh:
        shipped = set(gettext.GNUTranslations(fh)._catalog)  # type: ignore[attr-defined]
    area = "suite_" + assignment[:2]
    suite = [m for m in translations.extract(area) if m.id]
    # a message of the hidden tests that nothing shown to students also says ("keys", a figure label)
    elsewhere = {m.id for other in translations.areas() if other != area for m in translations.extract(other)}
    hidden = {m.id for m in suite if all("/suites/hidden/" in f for f, _ in m.locations)} - elsewhere
    public = {m.id for m in suite if any("/suites/public/" in f for f, _ in m.locations)}
    translated = {m.id for m in translations.read("zh", area) if m.id and m.string and not m.fuzzy}
    assert hidden and not hidden & shipped
    assert public & translated <= shipped
    assert {"keys", "epoch"} & shipped  # the figure labels of the notebook
    assert "loss per token" in shipped  # and of the toolkit in the support module


def test_the_other_language_has_its_own_folders_and_the_same_gradebook(tmp_path):
    """A language other than course.yml's goes to nbgrader's source-<lang>/ and release-<lang>/; the
    gradebook stays the course's (the graded cells are the same)."""
    from nbgrader.coursedir import CourseDirectory

    course, other = release.nbgrader_config(tmp_path), release.nbgrader_config(tmp_path, "zh")
    (source, released), (source_zh, released_zh) = release.directories(course), release.directories(other)
    assert (source_zh, released_zh) == (source.with_name(source.name + "-zh"), tmp_path.resolve() / "release-zh")
    assert released == tmp_path.resolve() / "release"
    assert CourseDirectory(config=course).db_url == CourseDirectory(config=other).db_url


def test_a_block_without_translation_stops_the_release(monkeypatch):
    """A notebook is never half translated: the release names the first block that has no translation."""
    course = config.default()
    monkeypatch.setattr(translations, "read", lambda lang, area: Catalog(locale=lang))
    with pytest.raises(release.ReleaseError, match=r"01_kernel_regression: no zh translation of the notebook's "
                                                     r"'# Assignment 01.*and \d+ more.*--area notebook_01"):
        release.student_notebook(course, course.assignment("01_kernel_regression"), lang="zh")


def test_figures_warn_when_no_chinese_font_is_installed(monkeypatch):
    from matplotlib import font_manager

    from solutions import given

    monkeypatch.setattr(font_manager.fontManager, "ttflist", [])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *args, **kwargs: [])
    with pytest.warns(UserWarning, match="fonts-noto-cjk"):
        assert given.cjk_font() is None


#: Appended to an executed notebook: every figure's texts, drawn again with warnings as errors (a missing
#: glyph is a UserWarning), and the font of the first one.
DRAW_AGAIN = """\
import json, warnings
import matplotlib.pyplot as plt
from matplotlib import font_manager
texts = []
for number in plt.get_fignums():
    figure = plt.figure(number)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure.canvas.draw()
    texts += [t.get_text() for t in figure.findobj(lambda a: hasattr(a, "get_text")) if t.get_text()]
print(json.dumps({"texts": texts, "font": font_manager.findfont(font_manager.FontProperties(family=plt.rcParams["font.family"]))}))
"""


@pytest.mark.parametrize("assignment", IDS)
def test_zh_notebook_runs_top_to_bottom_with_chinese_figures(both, assignment, tmp_path, monkeypatch):
    """Completed with the reference code, the zh release runs end to end; every check() prints Chinese; its
    figures carry Chinese labels drawn with a CJK font and matplotlib reports no missing glyph."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    folder = tmp_path / assignment
    shutil.copytree(both / "release-zh" / assignment, folder)
    nb = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    course = config.default()
    components = {c.name for c in course.assignment(assignment).components}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in components:
            cell.source = inspect.getsource(course.reference_object(meta["grade_id"]))
    nb.cells.append(nbformat.v4.new_code_cell(DRAW_AGAIN))
    assert not _execute(folder, nb, this_python_kernel(tmp_path, monkeypatch))
    streams = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "missing from font" not in streams and "Glyph" not in streams
    # every check() cell printed its report in Chinese: test names and the closing count
    reports = [line for line in streams.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert reports and all(CJK.search(line) for line in reports), reports[:5]
    assert "公开测试通过" in streams and "public tests passed" not in streams
    drawn = json.loads(nb.cells[-1].outputs[-1]["text"].strip().splitlines()[-1])
    assert "CJK" in drawn["font"] or "wqy" in drawn["font"].lower(), drawn["font"]
    assert [t for t in drawn["texts"] if CJK.search(t)], drawn["texts"]
