"""autograder/grading/submission.py: reading notebooks as the kernel reads them, and picking files."""
from __future__ import annotations

import contextlib
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from autograder.config import Limits
from autograder.grading.session import run_in_process
from autograder.grading.submission import (SubmissionError, find_submissions, pick_file, python_source, read_bounded,
                                          read_cells, read_notebook)

A = "02_attention_scoring"

#: Every form of IPython syntax IPython's documentation lists, as students leave them in notebooks.
IPYTHON_FORMS = {
    "line magic": "%matplotlib inline\n",
    "line magic with assignment": "t = %timeit -o -q sum(range(3))\n",
    "shell escape": "!pip install d2l\n",
    "shell escape with assignment": "files = !ls\n",
    "help": "torch.softmax?\n",
    "more help": "torch.softmax??\n",
    "help before": "?torch.softmax\n",
    "pinfo of own name": "masked_softmax?\n",
    "env magic": "%env OMP_NUM_THREADS=1\n",
}


def notebook(tmp_path: Path, cells: list[str]) -> Path:
    path = tmp_path / f"{A}.ipynb"
    nb = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": None}
                    for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def reference_cells() -> list[str]:
    from solutions import attention_scoring
    source = inspect.getsource(attention_scoring)
    head, _, rest = source.partition("\n\n\ndef sequence_mask")
    parts = ("def sequence_mask" + rest).split("\n\n\n")
    return [head] + parts


@pytest.mark.parametrize("form", sorted(IPYTHON_FORMS))
def test_every_ipython_form_becomes_python(form: str) -> None:
    import ast
    ast.parse(python_source(IPYTHON_FORMS[form]))


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n1 -r1", "%%capture out"])
def test_definitions_under_a_python_cell_magic_load(magic: str) -> None:
    cell = f"{magic}\ndef f(x):\n    return x + 1\n"
    assert "def f(x):" in python_source(cell)
    assert python_source(cell).count("\n") == cell.count("\n")  # line numbers in tracebacks still match


def test_other_cell_magics_are_not_python() -> None:
    assert python_source("%%bash\nls -l\necho hi\n").strip() == ""
    assert python_source("%%writefile x.py\ndef f():\n    pass\n").strip() == ""


def test_a_correct_notebook_full_of_ipython_syntax_gets_full_marks(tmp_path: Path) -> None:
    cells = reference_cells()
    cells[1] = "%%time\n" + cells[1]  # the cell that defines sequence_mask
    cells.insert(2, "files = !ls\nprint(files)\n")
    cells.insert(3, "masked_softmax?\n")
    cells.append("".join(IPYTHON_FORMS.values()))
    result = run_in_process(A, notebook(tmp_path, cells))
    assert result.score == result.max_score, [n for c in result.components for n in c.notes]


def test_pick_file_prefers_the_assignment_notebook(tmp_path: Path) -> None:
    for name in (f"{A}.ipynb", "scratch.py", "attention_support.py", "test_mine.py"):
        (tmp_path / name).write_text("{}")
    assert pick_file(tmp_path, A, "attention_support") == (tmp_path / f"{A}.ipynb", "")
    (tmp_path / f"{A}.ipynb").unlink()
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path == tmp_path / "scratch.py" and problem == ""
    (tmp_path / "other.py").write_text("")
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path is None and "several files" in problem


def test_find_submissions_one_per_student_folder_and_top_level_files(tmp_path: Path) -> None:
    (tmp_path / "alice.py").write_text("")
    (tmp_path / "alice.ipynb").write_text("{}")
    (tmp_path / "bob" / A).mkdir(parents=True)
    (tmp_path / "bob" / A / f"{A}.ipynb").write_text("{}")
    (tmp_path / "carol").mkdir()  # uploaded nothing
    found = {f.name: f for f in find_submissions(tmp_path, A, "attention_support")}
    assert set(found) == {"alice", "alice-py", "bob", "carol"}
    assert found["carol"].path is None and "No notebook" in found["carol"].problem


def test_a_renamed_submission_never_takes_another_s_name(tmp_path: Path) -> None:
    """helper-62: a folder alice/, alice.py and a stub alice-py.py. alice.py was renamed alice-py, the
    stub's name: the stub was never graded and alice.py's score was reported as alice-py's."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / f"{A}.py").write_text("")
    (tmp_path / "alice.py").write_text("")
    (tmp_path / "alice-py.py").write_text("")
    found = {f.name: f.path for f in find_submissions(tmp_path, A, "attention_support")}
    assert found == {"alice": tmp_path / "alice" / f"{A}.py", "alice-py": tmp_path / "alice-py.py",
                     "alice-py-2": tmp_path / "alice.py"}


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(st.tuples(st.sampled_from(["a", "a-py", "a-ipynb", "a-py-2", "a-entry", "b"]),
                                  st.sampled_from([".py", ".ipynb", "/"])), unique=True, max_size=8))
def test_every_entry_of_a_class_folder_is_one_submission_under_a_name_of_its_own(entries) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for name, kind in entries:
            if kind == "/":
                (root / name).mkdir()
            else:
                (root / f"{name}{kind}").write_text("")
        found = find_submissions(root, A, "attention_support")
        assert len({f.name for f in found}) == len(found) == len(entries)
        files = [f.path for f in found if f.path is not None]
        assert len(set(files)) == len(files)


def test_reading_a_notebook_keeps_code_cells_in_order(tmp_path: Path) -> None:
    cells = read_cells(notebook(tmp_path, ["a = 1\n", "b = 2\n"]))
    assert cells == [("cell 1", "a = 1\n"), ("cell 2", "b = 2\n")]


def test_a_cell_is_labelled_as_jupyter_shows_it(tmp_path: Path) -> None:
    """In [n] for a cell that was run (its execution count), else its position among all cells."""
    path = notebook(tmp_path, ["a = 1\n", "b = 2\n"])
    nb = json.loads(path.read_text())
    nb["cells"][1]["execution_count"] = 12
    path.write_text(json.dumps(nb))
    assert [label for label, _ in read_cells(path)] == ["cell 1", "In [12]"]


# ------------------------------------------------------------------ reading within course.yml's limits

def test_ipython_syntax_becomes_what_ipython_makes_of_it() -> None:
    from IPython.core.inputtransformer2 import TransformerManager
    cells = [*IPYTHON_FORMS.values(), "".join(IPYTHON_FORMS.values()),
             'def f():\n    """Why?\n    !not a shell escape\n    """\n    %time g()\n',
             "x = (1,\n%notmagic\n)\n", "s = 'a' \\\n  '%s' % 1\n!echo it's\n", "# why?\nx = 5 % 3\n"]
    for cell in cells:
        assert python_source(cell) == TransformerManager().transform_cell(cell), cell


def test_reading_ipython_syntax_is_linear_in_the_cell() -> None:
    """250,000 blank lines took the old check (a re.M regex with ^\\s*) minutes; magics after long
    cells took IPython's transformer one pass of the cell per magic."""
    import resource

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    for cell in ("\n" * 250_000 + "%time x\n", "x = !ls\n" * 20_000 + "y = 1\n" * 100_000,
                 "'a' " * 200_000 + "\n%x\n", '"\\"' * 200_000 + "\n!ls\n"):
        start = cpu()
        python_source(cell)
        assert cpu() - start < 3, cell[:20]


def limits(**changes: float) -> Limits:
    return Limits(**changes)


def test_the_size_caps_hold_at_their_edges(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n" + "#" * (1024 - 7) + "\n")  # 1024 characters of code, 1024 bytes
    assert read_cells(path, limits(source_kb=1))
    assert read_cells(path, limits(submission_mb=1024 / 2**20))
    path.write_text(path.read_text() + "\n")
    with pytest.raises(SubmissionError, match=r"holds 1025 characters of code, over the limit of 1024 \(1 KiB\)"):
        read_cells(path, limits(source_kb=1))
    with pytest.raises(SubmissionError, match=r"a.py is 1025 bytes, over the 1024 byte limit .*clear the notebook's"):
        read_cells(path, limits(submission_mb=1024 / 2**20))


def nested_notebook(tmp_path: Path, depth: int, items: int = 0) -> Path:
    """A notebook whose JSON nests exactly `depth` levels (metadata) and holds `items` more values."""
    meta: object = [0] * items
    for _ in range(depth - 3):  # the notebook, its metadata and the innermost list are three levels
        meta = [meta]
    path = tmp_path / f"{A}.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {"deep": meta}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_notebooks_json_is_bounded_before_it_is_parsed(tmp_path: Path) -> None:
    assert read_cells(nested_notebook(tmp_path, 20), limits(json_depth=20)) == []
    with pytest.raises(SubmissionError, match=r"not a notebook the grader reads: its JSON nests 21 levels deep, over the limit of 20"):
        read_cells(nested_notebook(tmp_path, 21), limits(json_depth=20))
    path = nested_notebook(tmp_path, 3, 1)
    with pytest.raises(SubmissionError, match=r"holds about \d+ values") as refused:
        read_cells(path, limits(json_items=1))
    count = int(re.search(r"about (\d+) values", str(refused.value)).group(1))
    assert read_cells(path, limits(json_items=count)) == []
    with pytest.raises(SubmissionError, match=rf"holds about {count + 1} values, over the limit of {count}"):
        read_cells(nested_notebook(tmp_path, 3, 2), limits(json_items=count))


def test_reading_runs_under_a_deadline(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["%time x\n" + "\n" * 10_000])
    assert read_cells(path, limits(read_seconds=60))
    with pytest.raises(SubmissionError, match=r"reading it took more than 1e-09 s"):
        read_cells(path, limits(read_seconds=1e-9))


DEEP = "x = " + "[" * 200_000 + "]" * 200_000 + "\n"  # too deep for Python's parser: RecursionError or MemoryError


def test_the_grading_process_parses_student_code_only_through_parse_student_code() -> None:
    """One home: every module of the grading process that parses a submission's code calls
    parse_student_code, which turns the parser's own failures into "not parseable" and parses as the sandbox's
    child does (`loader.parse`: whatever the machine's warnings filter, helper-77)."""
    root = Path(__file__).resolve().parents[1] / "autograder"
    parsers = sorted(str(p.relative_to(root)) for folder in ("grading", "report", "integrations")
                     for p in (root / folder).rglob("*.py") if "ast.parse(" in p.read_text(encoding="utf-8"))
    assert parsers == []
    assert "return loader.parse(source)" in (root / "grading" / "submission.py").read_text(encoding="utf-8")


def test_code_too_deep_for_the_parser_is_no_ones_crash(tmp_path: Path) -> None:
    """A deep expression in a cell: which assignment the file is for and which names it defines are
    still found from its other cells; nothing raises in the grading process."""
    from autograder import config as config_mod
    from autograder.grading import identify
    from autograder.grading.dependencies import defined_names
    from autograder.grading.submission import parse_student_code

    assert parse_student_code(DEEP) is None and parse_student_code("x = 1\0") is None
    cells = [("cell 1", DEEP), ("cell 2", "def masked_softmax(X, valid_lens):\n    return X\n")]
    assert defined_names(cells) == {"masked_softmax"}
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": source, "metadata": {}}
                                              for _, source in cells], "metadata": {}, "nbformat": 4,
                                    "nbformat_minor": 5}))
    course = config_mod.load()
    assert "02_attention_scoring" in identify.evidence(course, notebook)
    nested = tmp_path / "nested.ipynb"
    nested.write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert identify.evidence(course, nested) == {}


# --- F1: the grading process opens a student's file only as a regular file, never through a link ----

REFERENCE = Path(__file__).resolve().parent.parent / "solutions" / "attention_scoring.py"


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block blocks longer than `seconds`: a read of
    /proc/kmsg or of a FIFO without a writer never returns."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"blocked for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def hostile_files(folder: Path) -> dict[str, Path]:
    """A submission that is a link to the reference, to /proc/kmsg (a regular file of size 0 whose
    read blocks), to /proc/self/pagemap (whose read fails), and a FIFO (whose read blocks)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"reference": folder / "reference.py", "kmsg": folder / "kmsg.py", "pagemap": folder / "pagemap.py",
             "fifo": folder / "fifo.py"}
    files["reference"].symlink_to(REFERENCE)
    files["kmsg"].symlink_to("/proc/kmsg")
    files["pagemap"].symlink_to("/proc/self/pagemap")
    os.mkfifo(files["fifo"])
    return files


def test_read_cells_refuses_links_and_special_files_without_reading_them(tmp_path: Path) -> None:
    """Before: the link to the reference read as the student's code, /proc/kmsg and the FIFO blocked
    the grading process for good, /proc/self/pagemap raised OSError (a traceback)."""
    files = hostile_files(tmp_path)
    for kind, path in files.items():
        with within(5), pytest.raises(SubmissionError) as refused:
            read_cells(path)
        expected = "not a regular file" if kind == "fifo" else "is a symbolic link; submit the file itself"
        assert expected in str(refused.value) and str(refused.value).startswith(path.name), (kind, refused.value)
    with within(5):
        assert read_notebook(files["kmsg"].with_suffix(".ipynb")) is None  # no such file: None, no error
        (tmp_path / "k.ipynb").symlink_to("/proc/kmsg")
        assert read_notebook(tmp_path / "k.ipynb") is None
    (tmp_path / "own.py").write_text("x = 1\n")  # a regular file still reads, and a folder is refused
    assert read_cells(tmp_path / "own.py") == [("own.py", "x = 1\n")]
    (tmp_path / "dir.py").mkdir()
    with pytest.raises(SubmissionError, match="not a regular file"):
        read_cells(tmp_path / "dir.py")


def test_the_size_cap_holds_whatever_fstat_says(tmp_path: Path) -> None:
    limits = Limits(submission_mb=0.001)  # 1048 bytes
    cap = int(limits.submission_mb * 1024 * 1024)
    data, size = read_bounded(REFERENCE, cap)
    assert len(data) == 0 and size == REFERENCE.stat().st_size  # over the cap by fstat: nothing read
    (tmp_path / "big.py").write_bytes(b"#" * (cap + 1))
    with pytest.raises(SubmissionError, match="over the"):
        read_cells(tmp_path / "big.py", limits)


def test_pick_file_never_picks_a_link_or_enters_a_linked_folder(tmp_path: Path) -> None:
    """Before: a Gradescope upload that was only `02_attention_scoring.py -> ../source/solutions/...`
    was picked (and got 14/14); a linked folder was searched."""
    upload = tmp_path / "submission"
    upload.mkdir()
    (upload / f"{A}.py").symlink_to(REFERENCE)
    path, problem = pick_file(upload, A, "attention_support")
    assert path is None and problem == f"{A}.py is a symbolic link; submit the file itself"
    (upload / f"{A}.py").unlink()
    os.mkfifo(upload / f"{A}.py")
    with within(5):
        path, problem = pick_file(upload, A, "attention_support")
    assert path is None and "is not a regular file" in problem
    (upload / f"{A}.py").unlink()
    stash = tmp_path / "stash"
    stash.mkdir()
    (stash / f"{A}.py").write_text(REFERENCE.read_text())
    (upload / "work").symlink_to(stash)  # a link to a folder: not entered
    path, problem = pick_file(upload, A, "attention_support")
    assert path is None and "No notebook found" in problem and "work" in problem and "not followed" in problem
    (upload / "mine.py").write_text("x = 1\n")
    assert pick_file(upload, A, "attention_support") == (upload / "mine.py", "")


def test_a_stray_link_beside_the_assignment_s_notebook_leaves_the_notebook_graded(tmp_path: Path) -> None:
    """helper-62: nbgrader's submitted/nina/<id>/ held the notebook and a `notes.py` link; nbgrader graded the
    notebook (14/14) and `course grade` refused the folder (0). The notebook is what either picks: a link
    is refused only where it is, or could be, the file picked."""
    (tmp_path / f"{A}.ipynb").write_text("{}")
    (tmp_path / "notes.py").symlink_to(REFERENCE)
    assert pick_file(tmp_path, A, "attention_support") == (tmp_path / f"{A}.ipynb", "")
    (tmp_path / f"{A}.ipynb").unlink()
    (tmp_path / "mine.py").write_text("x = 1\n")  # two candidates, one a link: which was meant is not known
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path is None and problem == "notes.py is a symbolic link; submit the file itself"
    (tmp_path / f"{A}.py").symlink_to(REFERENCE)  # the file picked by name is a link
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path is None and "is a symbolic link" in problem


def test_the_assignment_s_notebook_wins_over_an_old_copy_in_a_sub_folder(tmp_path: Path) -> None:
    """helper-64: the notebook and an older draft in backup/ (nbgrader copies sub-folders on submit and grades
    the top one): `course grade` refused the folder, saying none was named like the assignment."""
    (tmp_path / "backup").mkdir()
    for path in (tmp_path / f"{A}.ipynb", tmp_path / "backup" / f"{A}.ipynb"):
        path.write_text("{}")
    assert pick_file(tmp_path, A, "attention_support") == (tmp_path / f"{A}.ipynb", "")
    (tmp_path / f"{A}.ipynb").unlink()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / f"{A}.ipynb").write_text("{}")  # two copies, neither above the other
    path, problem = pick_file(tmp_path, A, "attention_support")
    assert path is None and f"several files named {A}" in problem


def test_find_submissions_lists_links_and_special_files_as_problems(tmp_path: Path) -> None:
    """Top-level links and FIFOs, a student's folder that is a link (to /proc, to a folder holding
    the reference), and a link inside a student's folder: each a problem, none opened or entered."""
    cls = tmp_path / "class"
    hostile_files(cls)
    (cls / "alice.py").write_text("x = 1\n")
    (cls / "procfs").symlink_to("/proc")
    stash = tmp_path / "stash"
    stash.mkdir()
    (stash / f"{A}.py").write_text(REFERENCE.read_text())
    (cls / "trudy").symlink_to(stash)
    (cls / "mallory").mkdir()
    (cls / "mallory" / f"{A}.py").symlink_to(REFERENCE)
    (cls / "notes.txt").symlink_to("/proc/kmsg")  # not a submission's name: ignored, as a notes.txt is
    with within(10):
        found = {f.name: f for f in find_submissions(cls, A, "attention_support")}
    assert set(found) == {"alice", "reference", "kmsg", "pagemap", "fifo", "procfs", "trudy", "mallory"}
    assert found["alice"].path == cls / "alice.py" and found["alice"].problem == ""
    for name in ("reference", "kmsg", "pagemap"):
        assert found[name].path is None and found[name].problem == f"{name}.py is a symbolic link; submit the file itself"
    assert found["fifo"].path is None and found["fifo"].problem == "fifo.py is not a regular file; submit the file itself"
    for name in ("procfs", "trudy"):
        assert found[name].path is None and found[name].problem == f"{name} is a symbolic link; submit the folder itself"
    assert found["mallory"].path is None and "is a symbolic link" in found["mallory"].problem


def test_course_grade_dir_grades_the_class_around_links_and_fifos(tmp_path: Path) -> None:
    """`course grade DIR --jobs 1` on a class of one correct student and every kind of link and
    special file: before, /proc/kmsg hung the whole class (nothing graded) and the links to the
    reference got 14/14; now each gets 0 with its message and alice her 14."""
    cls = tmp_path / "class"
    hostile_files(cls)
    (cls / "alice").mkdir()
    (cls / "alice" / f"{A}.py").write_text(REFERENCE.read_text())
    (cls / "mallory").mkdir()
    (cls / "mallory" / f"{A}.py").symlink_to(REFERENCE)
    stash = tmp_path / "stash"
    stash.mkdir()
    (stash / f"{A}.py").write_text(REFERENCE.read_text())
    (cls / "trudy").symlink_to(stash)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", A, str(cls), "--out", str(out),
                           "--jobs", "1", "-q"], capture_output=True, text=True, timeout=300,
                          cwd=REFERENCE.parent.parent)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert set(results) == {"alice", "mallory", "trudy", "reference", "kmsg", "pagemap", "fifo"}
    assert results["alice"]["score"] == 14
    for name in set(results) - {"alice"}:
        assert results[name]["score"] == 0, name
        assert ("is a symbolic link; submit the" if name != "fifo" else "is not a regular file") in \
            results[name]["output"], (name, results[name]["output"])
