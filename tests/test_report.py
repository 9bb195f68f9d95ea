"""The class report (`course report`, autograder/report/): its numbers against a class whose answers
are known, graded by the real grader; the similarity ranking of near-copies; the page in a real
browser (headless Chromium through chromedriver); the released code it excludes as boilerplate.

The known class (02_attention_scoring, 30 submissions, from the catalogue):
* alice: the reference; bob, cody, carol: correct alternatives of the zoo (full marks);
* dave and erin: carol's code with her local variables renamed (dave a .py file; erin a notebook,
  reformatted, one cell per definition, and an experiment): the similarity section must rank the
  three pairs of carol, dave and erin first;
* frank: every body a stub; grace: the released notebook untouched; heidi: a syntax error (zeros);
* ivan: no DotProductAttention (a missing name); judy: DotProductAttention ends the process
  (os._exit: "your code was stopped");
* 19 students with one zoo mutant each, none in sequence_mask, so every sequence_mask test is
  failed by exactly the three zeros; their other components are the reference or the zoo's correct
  alternatives, in turn.
A second class (05_positional_encoding, same students) feeds the multi-assignment report: only
frank, grace and heidi score 0 in both, so they alone are at risk.
"""
from __future__ import annotations

import ast
import base64
import csv
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from autograder import cli
from autograder.authoring.samples import disguised_copy, stub_source
from autograder.catalogue import zoo
from autograder.grading.pool import grade_directory
from autograder.grading.results import GRADER_FAILED, failed_results
from autograder.report import build, loading, page, similarity, stats
from kit_helpers import headless_chromium, looks_blank, reference_source, screenshot, write_notebook

pytestmark = pytest.mark.xdist_group("report")

A, B = "02_attention_scoring", "05_positional_encoding"
CORRECT = {
    "bob": ["sm_book_in_place", "ms_masked_fill_inf", "add_einsum_functional_dropout", "dot_einsum_mT"],
    "cody": ["ms_where_finfo"],
    "carol": ["sm_where_loop", "ms_loops_logsumexp", "add_loop_over_queries", "dot_matmul_sqrt_tensor"],
}
MUTANTS = {  # one zoo mutant each (no two alike: identical code would tie with the copies)
    "kate": "ms_fill_zero", "leo": "ms_off_by_one", "mia": "ms_in_place", "ned": "ms_mask_after_softmax",
    "olga": "ms_repeat_not_interleave", "cal": "ms_none_dim1",
    "pat": "add_bias", "quin": "add_no_tanh", "rita": "add_qk_swapped", "sam": "add_ignores_valid_lens",
    "tess": "add_dropout_on_output", "uma": "add_squeeze_all",
    "vic": "dot_no_scale", "walt": "dot_scale_by_d", "xena": "dot_keys_as_values", "yuri": "dot_ignores_valid_lens",
    "zoe": "dot_reshape_not_transpose", "abe": "dot_dropout_on_values", "bea": "dot_weights_after_dropout",
}
#: Correct versions of each component (None: the reference), from which each mutant student's other
#: components are drawn, so that the class is not twenty copies of the reference. Not the book's
#: in-place sequence_mask: with the book's masked_softmax (ms_book_minus_1e6), which hands it a view
#: of the caller's X, the pair writes into the caller's tensor and masked_softmax loses points.
POOLS = {
    "sequence_mask": [None, "sm_where_loop"],
    "masked_softmax": [None, "ms_book_minus_1e6", "ms_loops_logsumexp", "ms_masked_fill_inf", "ms_where_finfo"],
    "AdditiveAttention": [None, "add_einsum_functional_dropout", "add_loop_over_queries"],
    "DotProductAttention": [None, "dot_einsum_mT", "dot_matmul_sqrt_tensor"],
}
FULL = {"alice", "bob", "cody", "carol", "dave", "erin"}
ZEROS = {"frank", "grace", "heidi"}
COPIES = {"carol", "dave", "erin"}
STUDENTS = FULL | ZEROS | {"ivan", "judy"} | set(MUTANTS)
MUTANTS_05 = {"kate": "pe_no_dropout", "pat": "pe_sin_cos_swapped", "vic": "pe_positions_from_one"}
CRASH = '''

class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        import os
        os._exit(3)
'''


def with_entries(assignment: str, names: list[str]) -> str:
    """The reference followed by zoo entries, as zoo.compose writes one."""
    by_name = {e.name: e for e in zoo.entries(assignment)}
    return reference_source(assignment) + "".join(
        "\n\n# ---- zoo entry ----\n" + by_name[n].path.read_text() for n in names)


def write_class_02(folder: Path, course: Any) -> None:
    folder.mkdir(parents=True)
    ref = reference_source(A)
    files = {"alice.py": ref, "frank.py": stub_source(ref), "heidi.py": ref.replace("def ", "def (", 1),
             "ivan.py": ref.split("class DotProductAttention")[0], "judy.py": ref + CRASH}
    for student, names in CORRECT.items():
        files[f"{student}.py"] = with_entries(A, names)
    owner = {e.name: e.component for e in zoo.entries(A)}
    for i, (student, name) in enumerate(MUTANTS.items()):
        others = [pool[(i + k) % len(pool)] for k, (comp, pool) in enumerate(POOLS.items()) if comp != owner[name]]
        files[f"{student}.py"] = with_entries(A, [p for p in others if p] + [name])
    files["dave.py"] = disguised_copy(files["carol.py"], "my_")
    for name, text in files.items():
        (folder / name).write_text(text)
    cells: list[tuple[str, str]] = [("markdown", "# Attention scoring (erin)")]
    body = ast.parse(disguised_copy(files["carol.py"], "v_", reformat=True)).body
    imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
    cells.append(("code", "\n".join(ast.unparse(s) for s in imports)))
    cells += [("code", ast.unparse(s)) for s in body if s not in imports]
    cells.append(("code", "X = torch.ones(2, 3)\nprint(sequence_mask(X, torch.tensor([1, 2])))  # try it"))
    write_notebook(folder / "erin.ipynb", cells)
    released, _ = similarity.released_cells(course, A)
    write_notebook(folder / "grace.ipynb", [("code", c) for c in released])


def write_class_05(folder: Path) -> None:
    folder.mkdir(parents=True)
    ref = reference_source(B)
    for student in sorted(STUDENTS):
        text = ref
        if student in ("frank", "grace"):
            text = stub_source(ref)
        elif student == "heidi":
            text = ref.replace("def ", "def (", 1)
        elif student in MUTANTS_05:
            text = with_entries(B, [MUTANTS_05[student]])
        (folder / f"{student}.py").write_text(text)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, course: Any) -> Path:
    """ROOT/<assignment>/{submissions,results}/ for both classes, graded by `course grade`'s pool."""
    root = tmp_path_factory.mktemp("report-class")
    write_class_02(root / A / "submissions", course)
    write_class_05(root / B / "submissions")
    for assignment in (A, B):
        rows = grade_directory(assignment, root / assignment / "submissions", root / assignment / "results",
                               jobs=2, progress=False)
        assert len(rows) == len(STUDENTS)
    return root


@pytest.fixture(scope="module")
def report02(graded: Path, tmp_path_factory: pytest.TempPathFactory) -> build.Report:
    out = tmp_path_factory.mktemp("report02")
    return build.write_report([build.Source(A, graded / A / "results", graded / A / "submissions")], out)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def results(graded: Path, assignment: str = A) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((graded / assignment / "results").glob("*.json"))}


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- the class is what it claims to be -------------------------------------------------------------

def test_the_known_class_grades_as_built(graded: Path) -> None:
    res = results(graded)
    assert set(res) == STUDENTS
    comps = {s: {c: v["score"] for c, v in r["extra_data"]["components"].items()} for s, r in res.items()}
    for s in FULL:
        assert res[s]["score"] == pytest.approx(14), s
    for s in ZEROS:
        assert res[s]["score"] == 0, s
    assert comps["ivan"]["DotProductAttention"] == 0 and res["ivan"]["score"] == pytest.approx(10)
    assert comps["judy"]["DotProductAttention"] == 0 and res["judy"]["score"] == pytest.approx(10)
    points = {"sequence_mask": 2, "masked_softmax": 4, "AdditiveAttention": 4, "DotProductAttention": 4}
    owner = {e.name: e.component for e in zoo.entries(A)}
    for s, name in MUTANTS.items():
        lost = [c for c, v in comps[s].items() if v < points[c] - 1e-6]
        assert lost == [owner[name]], (s, name, comps[s])


# --- the numbers ----------------------------------------------------------------------------------

def test_scores_full_marks_and_zeros(report02: build.Report) -> None:
    view = report02.assignments[0]
    d = view.distribution
    assert (d.n, d.full, d.zeros, d.ungraded) == (30, len(FULL), len(ZEROS), 0)
    fails = {"sequence_mask": 0, "masked_softmax": 6, "AdditiveAttention": 6, "DotProductAttention": 7 + 2}
    for comp in view.components:
        assert comp.full == 30 - len(ZEROS) - fails[comp.name], comp.name
        assert comp.zeros >= len(ZEROS)
    html = report02.page.read_text()
    assert f"<b>{len(FULL)}</b><span>full marks</span>" in html
    assert f"<b>{len(ZEROS)}</b><span>zeros</span>" in html
    assert "<b>30</b><span>submissions</span>" in html
    rows = {r["student"]: r for r in read_csv(report02.page.parent / "students.csv")}
    assert set(rows) == STUDENTS
    assert {s for s, r in rows.items() if float(r[f"{A} score"]) == 14} == FULL
    assert {s for s, r in rows.items() if r["at_risk"] == "yes"} == ZEROS  # below 50% of one assignment


def test_pass_rates_discrimination_and_cost(report02: build.Report, graded: Path) -> None:
    res = results(graded)
    outcomes: dict[str, list[tuple[bool, float, float, float]]] = {}  # test -> (passed, score, max, total)
    for r in res.values():
        for t in r["tests"]:
            outcomes.setdefault(t["name"], []).append((t["status"] == "passed", t["score"], t["max_score"], r["score"]))
    # a parametrised test's cases are one row: passed when every case passed, its points the cases' sum
    grouped: dict[str, list[tuple[bool, float, float, float]]] = {}
    for name, mine in outcomes.items():
        group = stats.test_group(name)
        if group not in grouped:
            grouped[group] = list(mine)
        else:
            grouped[group] = [(p and q, s + t, m + n, total) for (p, s, m, total), (q, t, n, _)
                              in zip(grouped[group], mine)]
    assert len(grouped) < len(outcomes)  # the suites have parametrised tests
    outcomes = grouped
    rows = read_csv(report02.page.parent / "tests.csv")
    assert len(rows) == len(outcomes)
    assert sum(int(r["cases"]) for r in rows) == len({n for r in res.values() for n in (t["name"] for t in r["tests"])})
    assert [float(r["points_lost"]) for r in rows] == sorted((float(r["points_lost"]) for r in rows), reverse=True)
    for r in rows:
        mine = outcomes[f"{r['component']}: {r['test']}"]
        passed = sum(p for p, *_ in mine)
        assert (int(r["submissions"]), int(r["passed"])) == (30, passed)
        assert float(r["pass_rate"]) == pytest.approx(passed / 30, abs=1e-4)
        assert float(r["points_lost"]) == pytest.approx(sum(m - s for _, s, m, _ in mine), abs=1e-3)
        x = [1.0 if p else 0.0 for p, *_ in mine]
        if 0 < passed < 30:
            expected = statistics.correlation(x, [total - s for _, s, _, total in mine])
            assert float(r["discrimination"]) == pytest.approx(expected, abs=1e-3)
        else:
            assert r["discrimination"] == ""
        if r["component"] == "sequence_mask":  # no mutant there: exactly the three zeros fail each test
            assert int(r["passed"]) == 27 and float(r["pass_rate"]) == pytest.approx(0.9)
        if r["component"] == "DotProductAttention":  # the zeros, ivan and judy fail every one of them
            assert 30 - int(r["passed"]) >= len(ZEROS) + 2
    lost = sum(float(r["points_lost"]) for r in rows)
    assert lost == pytest.approx(30 * 14 - sum(r["score"] for r in res.values()), abs=0.05)


def test_the_near_copies_rank_first(report02: build.Report) -> None:
    pairs = read_csv(report02.page.parent / "similarity.csv")
    top = [{p["a"], p["b"]} for p in pairs[:3]]
    assert sorted(map(sorted, top)) == [["carol", "dave"], ["carol", "erin"], ["dave", "erin"]]
    scores = [float(p["score"]) for p in pairs]
    assert scores[0] == 1.0  # carol and dave: only names differ, which copydetect does not see
    assert min(scores[:3]) >= 0.95 and scores[3] < min(scores[:3])  # erin is also reformatted
    assert scores == sorted(scores, reverse=True)
    sim = report02.assignments[0].similarity
    assert sim.computed and not sim.screened and sim.total_pairs == len(sim.compared) * (len(sim.compared) - 1) // 2
    assert set(sim.no_code) == {"frank", "grace", "heidi"}  # stubs; the release untouched; nothing parses
    html = report02.page.read_text()
    assert "Similarity is a reason to look, not a verdict." in html
    first = html.split('<div class="pair"')[1]  # the first pair's box
    assert "<mark>" in first and first.count('<pre class="code">') == 2


def test_crashes_and_load_notes(report02: build.Report) -> None:
    view = report02.assignments[0]
    stopped = [i for i in view.problems if i.kind == "stopped"]
    assert len(stopped) == 1 and stopped[0].students == ["judy"]
    assert stopped[0].components == ["DotProductAttention"] and "exit code 3" in stopped[0].message
    assert not [i for i in view.problems if i.kind in ("grader error", "not graded")]
    notes = {(i.kind, i.message): set(i.students) for i in view.load_notes}
    assert notes[("missing name", "`DotProductAttention` is not defined in your submission")] == {"ivan", "heidi"}
    for comp in ("sequence_mask", "masked_softmax", "AdditiveAttention", "DotProductAttention"):
        assert notes[("not implemented", f"{comp} raises NotImplementedError")] == {"frank", "grace"}
    assert {"heidi"} in [s for (kind, _), s in notes.items() if kind == "cell not parsed"]
    rows = read_csv(report02.page.parent / "problems.csv")
    assert any(r["kind"] == "stopped" and r["students"] == "judy" for r in rows)
    assert "your code was stopped" in report02.page.read_text()


def test_misconceptions_recorded_or_not(report02: build.Report, graded: Path) -> None:
    """Whatever this kit's grader records, the table is the results' own diagnoses, counted."""
    expected: dict[tuple[str, str], set[str]] = {}
    recorded = False
    for name, r in results(graded).items():
        for comp, c in r["extra_data"]["components"].items():
            if "misconceptions" in c:
                recorded = True
                for m in c["misconceptions"]:
                    expected.setdefault((comp, m["id"]), set()).add(name)
    rows = read_csv(report02.page.parent / "misconceptions.csv")
    assert {(r["component"], r["id"]): set(r["students"].split(";")) for r in rows} == expected
    assert all(int(r["count"]) == len(r["students"].split(";")) for r in rows)
    text = text_of(report02.page.read_text())
    assert ("No diagnoses recorded" in text) == (not recorded)


def test_misconceptions_absent_then_present(graded: Path, tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    for name, r in results(graded).items():
        for c in r["extra_data"]["components"].values():
            c.pop("misconceptions", None)
        (folder / f"{name}.json").write_text(json.dumps(r))
    out = build.write_report([build.Source(A, folder)], tmp_path / "absent", similarity=False)
    assert "No diagnoses recorded" in out.page.read_text()
    assert read_csv(out.page.parent / "misconceptions.csv") == []
    diagnosis = {"kate": ("masked_softmax", "fill-zero"), "leo": ("masked_softmax", "fill-zero"),
                 "pat": ("AdditiveAttention", "linear-bias"), "vic": ("DotProductAttention", "no-scale")}
    for name, r in results(graded).items():
        for comp, c in r["extra_data"]["components"].items():
            found = [(cc, i) for cc, i in [diagnosis.get(name, ("", ""))] if cc == comp]
            c["misconceptions"] = [{"id": i, "summary": f"summary of {i}", "fix": f"fix <{i}>"} for _, i in found]
        (folder / f"{name}.json").write_text(json.dumps(r))
    out = build.write_report([build.Source(A, folder)], tmp_path / "present", similarity=False)
    rows = read_csv(out.page.parent / "misconceptions.csv")
    assert [(r["component"], r["id"], r["count"], r["students"]) for r in rows] == [
        ("masked_softmax", "fill-zero", "2", "kate;leo"), ("AdditiveAttention", "linear-bias", "1", "pat"),
        ("DotProductAttention", "no-scale", "1", "vic")]
    html = out.page.read_text()
    assert "No diagnoses recorded" not in html and "fix &lt;fill-zero&gt;" in html and "summary of no-scale" in html


def test_all_assignments_and_students_at_risk(graded: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "all"
    assert cli.main(["report", "--all", str(graded), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{A}: 30 submissions" in printed and f"{B}: 30 submissions" in printed
    rows = {r["student"]: r for r in read_csv(out / "students.csv")}
    at_risk = {s for s, r in rows.items() if r["at_risk"] == "yes"}
    # At risk: a mean share below 50% over the assignments (the zeros, and any student whose mistakes in
    # both assignments cost that much; which mutants do depends on the scoring policy, not on the report).
    assert at_risk == {s for s, r in rows.items() if float(r["mean_percent"]) < 50} and ZEROS <= at_risk
    assert not at_risk & FULL
    assert f"students at risk: {len(at_risk)} of 30" in printed and str(out / "index.html") in printed
    assert rows["frank"][f"{B} score"] == "0.0" and float(rows["alice"]["mean_percent"]) == 100
    assert {r["assignment"] for r in read_csv(out / "tests.csv")} == {A, B}
    assert (out / "overview.png").is_file() and (out / f"{B}-scores.png").is_file()
    html = (out / "index.html").read_text()
    assert 'id="students">Students at risk' in html and f'id="{B}"' in html


def test_cli_one_assignment_and_refusals(graded: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "one"
    assert cli.main(["report", B, str(graded / B / "results"), "--out", str(out),
                     "--submissions", str(graded / B / "submissions")]) == 0
    assert "report: " in capsys.readouterr().out
    assert {p.name for p in out.iterdir()} >= {"index.html", "tests.csv", "misconceptions.csv", "similarity.csv",
                                               "students.csv", "problems.csv", f"{B}-scores.png"}
    assert cli.main(["report", B, str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert cli.main(["report", "--all", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert cli.main(["report", B, "--out", str(out)]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_demo_ends_with_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", B, "--out", str(tmp_path), "--jobs", "2"]) == 0
    printed = capsys.readouterr().out
    assert f"class report (course report {B} " in printed and str(tmp_path / "report" / "index.html") in printed
    html = (tmp_path / "report" / "index.html").read_text()
    assert f'id="{B}"' in html and (tmp_path / "report" / "similarity.csv").is_file()
    rows = read_csv(tmp_path / "report" / "students.csv")
    assert {"reference", "stubs", "broken"} <= {r["student"] for r in rows}


# --- the page in a browser ------------------------------------------------------------------------

def test_page_renders_in_chromium(report02: build.Report, tmp_path: Path) -> None:
    from selenium.webdriver.common.print_page_options import PrintOptions

    with headless_chromium(tmp_path / "profile", "1366,900", browser_log=True) as driver:
        driver.get(report02.page.as_uri())
        assert driver.title.startswith("Class report: ")
        assert driver.execute_script(
            "return Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
        assert driver.execute_script("return document.images.length") >= 4
        assert driver.execute_script("return document.querySelectorAll('pre.code mark').length") > 0
        # what to act on is on the first screen; the side-by-side code wraps instead of scrolling sideways
        assert driver.execute_script("return document.querySelector('section.act').getBoundingClientRect().top"
                                     " < window.innerHeight")
        assert driver.execute_script("return Array.from(document.querySelectorAll('pre.code'))"
                                     ".every(p => p.scrollWidth <= p.clientWidth + 1)")
        shot = screenshot(driver)
        assert shot.size[0] >= 1200 and not looks_blank(shot), "the screenshot looks blank"
        pdf = base64.b64decode(driver.print_page(PrintOptions()))
        assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= 3
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors


# --- what is excluded -----------------------------------------------------------------------------

def test_released_cells_are_the_release_builds(course: Any, tmp_path: Path) -> None:
    """The boilerplate (ClearSolutions on the instructor notebook) has the code cells of the notebook
    `course release` builds with nbgrader, for every assignment."""
    import nbformat

    from autograder.authoring import release
    built = release.release(course, [], force=True, course_dir=tmp_path, echo=lambda s: None)
    assert built == [a.id for a in course.assignments]
    _, release_dir = release.directories(release.nbgrader_config(tmp_path))
    for a in course.assignments:
        assert similarity._sources(a.id) == (release.notebook_path(a.id), release.NBGRADER_CONFIG)
        nb = nbformat.read(str(release_dir / a.id / f"{a.id}.ipynb"), as_version=4)
        expected = [c.source for c in nb.cells if c.cell_type == "code"]
        assert similarity.released_cells(course, a.id, use_cache=False)[0] == expected, a.id
        assert similarity.released_cells(course, a.id)[0] == expected, a.id


# --- small parts ----------------------------------------------------------------------------------

def test_graded_code_is_the_last_definitions_and_their_helpers() -> None:
    cells = [("cell 1", "import torch\ndef helper(x):\n    return x + 1\n"),
             ("cell 2", "def sequence_mask(X, l):\n    return X\nprint(sequence_mask(1, 2))\n"),
             ("cell 3", "def unused():\n    pass\n%time x = 1\n"),
             ("cell 4", "def sequence_mask(X, valid_len, value=0):\n    return helper(X)\n"),
             ("cell 5", "def broken(:\n")]
    code = similarity.graded_code(cells, ["sequence_mask", "masked_softmax"])
    assert code == "def sequence_mask(X, valid_len, value=0):\n    return helper(X)\n\n\ndef helper(x):\n    return x + 1"


def test_scores_repeat_and_renaming_changes_nothing() -> None:
    code = reference_source(A)
    codes = {"a": code, "b": disguised_copy(code, "z_"), "c": disguised_copy(code, "y_", reformat=True)}
    first = similarity.compare(codes, "")
    again = similarity.compare(codes, "")
    assert [(p.a, p.b, p.score) for p in first[0]] == [(p.a, p.b, p.score) for p in again[0]]
    assert (first[0][0].a, first[0][0].b, first[0][0].score) == ("a", "b", 1.0)
    assert 0.9 < first[0][1].score < 1.0  # reformatted: other parentheses
    # with the code itself as boilerplate nothing is left to compare
    assert similarity.compare({"a": code, "b": code}, code)[1] == []


def test_screen_picks_the_pairs_to_score() -> None:
    # one entry per component and kind: unlike two mutants of one component, no two of them are near copies
    firsts = {(e.component, e.kind): e for e in reversed(zoo.entries(A))}
    entries = [e.path.read_text() for e in sorted(firsts.values(), key=lambda e: e.id)]
    codes = {f"s{i}": text for i, text in enumerate(entries)}
    codes["copy"] = disguised_copy(entries[3], "q_")
    pairs, names, total, screened, _ = similarity.compare(codes, "", max_pairs=10)
    assert screened and total == len(names) * (len(names) - 1) // 2 and len(pairs) <= 10
    assert {pairs[0].a, pairs[0].b} == {"copy", "s3"}


def test_statistics_of_ungraded_and_finalized_results(course: Any) -> None:
    assignment = course.assignment(A)
    ungraded = loading.parse("nofile", failed_results(assignment, "No notebook found in your submission: upload it."), A)
    crashed = loading.parse("boom", failed_results(assignment, GRADER_FAILED, grader_error="Traceback\nValueError: x"), A)
    finalized = loading.parse("fin", {"score": 3.0, "max_score": 14.0, "tests": [], "output": "late",
                                      "extra_data": {"raw_score": 5.0, "student": "<script>alert(1)</script>",
                                                     "graded_output": "graded"}}, A)
    assert (finalized.score, finalized.grade, finalized.output) == (5.0, 3.0, "graded")
    cls = loading.ClassResults(A, "t", [(c.name, c.points) for c in assignment.components],
                               [ungraded, crashed, finalized], Path("."))
    finalized.who = finalized.student
    kinds = {(i.kind, i.message): i.students for i in stats.problems(cls)}
    assert kinds[("not graded", "No notebook found in your submission: upload it.")] == ["nofile"]
    assert kinds[("not graded", "graded")] == ["<script>alert(1)</script>"]
    assert kinds[("grader error", f"{GRADER_FAILED} (ValueError: x)")] == ["boom"]
    d = stats.score_distribution(cls)
    assert (d.n, d.zeros, d.ungraded) == (3, 2, 3)
    assert stats.point_biserial([True, False, True, False], [4.0, 1.0, 3.0, 2.0]) == pytest.approx(
        statistics.correlation([1.0, 0.0, 1.0, 0.0], [4.0, 1.0, 3.0, 2.0]))
    assert stats.point_biserial([True, True], [1.0, 2.0]) is None


def test_a_failed_test_counts_as_one_problem_the_most_specific_its_message_says(course: Any) -> None:
    assignment = course.assignment(A)
    said = {"t1": "your code was stopped: the whole submission ran past its time limit (600 s)",
            "t2": "your code was stopped: the test ran past its time limit (10 s)",
            "t3": "loading your code failed: it ran past the time limit for loading (60 s)",
            "t4": "your code ran out of memory (limit: 1024 MB above the interpreter): no room"}
    tests = [{"name": f"masked_softmax: {name}", "output": text, "score": 0.0, "max_score": 1.0, "status": "failed",
              "extra_data": {"component": "masked_softmax"}} for name, text in said.items()]
    sub = loading.parse("cut", {"score": 0.0, "max_score": 14.0, "tests": tests, "output": ""}, A)
    cls = loading.ClassResults(A, "t", [(c.name, c.points) for c in assignment.components], [sub], Path("."))
    assert sorted((i.kind, i.message) for i in stats.problems(cls)) == [
        ("loading failed", said["t3"]), ("out of memory", "your code ran out of memory (limit: 1024 MB above the interpreter)"),
        ("stopped", said["t2"]), ("submission time limit", "the whole submission ran past its time limit (600 s)")]


def test_page_escapes_what_it_shows(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "x.json").write_text(json.dumps({
        "score": 0.0, "max_score": 14.0, "tests": [], "output": evil,
        "extra_data": {"student": evil, "raw_score": 0.0}}))
    out = build.write_report([build.Source(A, folder)], tmp_path / "out", similarity=False)
    html = out.page.read_text()
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert str(page.highlighted("a <mark>b</mark> &lt;c")) == "a <mark>b</mark> &lt;c"
    assert str(page.highlighted("<b>x</b>")) == "&lt;b&gt;x&lt;/b&gt;"


# --- what an instructor acts on -------------------------------------------------------------------

def test_the_page_leads_with_what_to_act_on(report02: build.Report, graded: Path) -> None:
    from html import unescape

    view = report02.assignments[0]
    html = report02.page.read_text()
    act = html.split('<section class="act"', 1)[1].split("</section>", 1)[0]
    assert html.index('<section class="act"') < html.index(f'id="{A}-scores"')  # before the scores
    for m in view.misconceptions[:build.ACT_SHOWN]:  # re-teach: by number of students, with the fix
        assert f"<b>{m.count} student" in act and m.fix and " ".join(m.fix.split()) in text_of(unescape(act))
    counts = [m.count for m in view.misconceptions]
    assert counts == sorted(counts, reverse=True) and view.misconceptions
    # who needs help: below half the points or not graded, each with a why
    helped = {h.name: h for h in view.help}
    assert set(helped) == {s.who for s in loading.load_class(A, graded / A / "results").submissions
                           if s.fraction < 0.5 or not s.graded}
    assert ZEROS <= set(helped) and not set(helped) & FULL
    assert all(h.why for h in view.help)
    assert "not implemented" in " ".join(helped["frank"].why)
    for h in view.help[:build.ACT_SHOWN]:
        assert f"<b>{h.name}</b>" in act
    rows = {r["student"]: r for r in read_csv(report02.page.parent / "students.csv")}
    assert all(r["reasons"].count(";") >= 1 for r in rows.values() if r["at_risk"] == "yes")  # the mean and why
    # the pairs to look at, by name, in the act box and the overview
    top = view.similarity.pairs[0]
    assert f"<b>{top.a}</b> and <b>{top.b}</b>" in act and f"{top.a} and {top.b}: 100%" in html


def test_a_parametrised_test_is_one_row(course: Any) -> None:
    assignment = course.assignment(A)

    def result(name: str, outcomes: list[bool]) -> loading.Submission:
        tests = [{"name": f"sequence_mask: shapes [{case}]", "score": 0.5 * ok, "max_score": 0.5,
                  "status": "passed" if ok else "failed", "extra_data": {"component": "sequence_mask"}}
                 for case, ok in zip("abc", outcomes)]
        tests.append({"name": "sequence_mask: dtype", "score": 0.5, "max_score": 0.5, "status": "passed"})
        return loading.parse(name, {"score": sum(t["score"] for t in tests), "max_score": 2.0, "tests": tests}, A)

    subs = [result("x", [True, True, True]), result("y", [True, False, True]), result("z", [False, False, False])]
    cls = loading.ClassResults(A, "t", [(c.name, c.points) for c in assignment.components], subs, Path("."))
    rows = {t.title: t for t in stats.test_stats(cls)}
    assert set(rows) == {"shapes", "dtype"}
    shapes = rows["shapes"]
    assert (shapes.cases, shapes.n, shapes.passed, shapes.max_score, shapes.points_lost) == (3, 3, 1, 1.5, 2.0)
    assert rows["dtype"].cases == 1 and stats.test_group("c: t[a-b]") == "c: t"


def test_scatter_labels_do_not_overlap() -> None:
    from autograder.report import figures

    fig = figures._figure(3.4)
    ax = fig.subplots()
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-1.05, 1.05)
    points = [(0.9, 0.5)] * 5 + [(1.0, 1.0), (0.0, -1.0), (0.91, 0.52)]
    notes = figures.labels(ax, points, [f"#{i}" for i in range(1, len(points) + 1)])
    renderer = fig.canvas.get_renderer()
    boxes = [figures.text_box(n, renderer) for n in notes]
    assert not [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]
    inside = ax.get_window_extent(renderer)
    assert all(inside.contains(b.x0, b.y0) and inside.contains(b.x1, b.y1) for b in boxes)


# --- similarity of a class of correct solutions ---------------------------------------------------

#: Three correct solutions written independently (the attention classes), each with the course text's
#: sequence_mask and masked_softmax (the catalogue's book entries), each typed into the starter notebook.
BOOK = ["sm_book_in_place", "ms_book_minus_1e6"]
INDEPENDENT = {"kim": [], "lee": ["add_einsum_functional_dropout", "dot_einsum_mT"],
               "max": ["add_loop_over_queries", "dot_matmul_sqrt_tensor"]}


@pytest.fixture(scope="module")
def correct_class(tmp_path_factory: pytest.TempPathFactory, course: Any) -> Path:
    """ROOT/{submissions,results}/ of the class, graded by `course grade`; ROOT/book.py: the book's code."""
    root = tmp_path_factory.mktemp("correct-class")
    released, _ = similarity.released_cells(course, A)
    by_name = {e.name: e for e in zoo.entries(A)}
    ref = ast.parse(reference_source(A))
    ref_classes = "\n\n".join(ast.get_source_segment(reference_source(A), n) or "" for n in ref.body
                              if isinstance(n, ast.ClassDef))
    subs = root / "submissions"
    subs.mkdir()
    for student, own in INDEPENDENT.items():
        code = "".join("\n\n" + by_name[n].path.read_text() for n in BOOK + own)
        cells = [("code", c) for c in released] + [("code", code if own else code + "\n\n" + ref_classes)]
        write_notebook(subs / f"{student}.ipynb", cells)
    (root / "book.py").write_text("\n\n".join(by_name[n].path.read_text() for n in BOOK))
    grade_directory(A, subs, root / "results", jobs=2, progress=False)
    return root


def test_starter_and_book_code_are_boilerplate(correct_class: Path, tmp_path: Path) -> None:
    """Through the command, without --submissions (found beside the results): the book's code given
    with --boilerplate takes every pair of independent correct solutions below half (from 51-63% to 30-46%)."""
    def scores(*extra: str) -> dict[frozenset[str], float]:
        out = tmp_path / ("book" if extra else "starter")
        assert cli.main(["report", A, str(correct_class / "results"), "--out", str(out), *extra]) == 0
        html = (out / "index.html").read_text()
        assert f"found in {correct_class / 'submissions'}" in html
        return {frozenset((r["a"], r["b"])): float(r["score"]) for r in read_csv(out / "similarity.csv")}

    starter = scores()
    book = scores("--boilerplate", str(correct_class / "book.py"))
    assert len(starter) == 3 and min(starter.values()) >= 0.4  # the book's code makes them look alike
    assert max(book.values(), default=0.0) < 0.5  # what remains: the constructors the contract names
    assert all(book.get(pair, 0.0) < score - 0.1 for pair, score in starter.items())


def test_similarity_skipped_is_said(correct_class: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    results = tmp_path / "elsewhere" / "results"
    shutil.copytree(correct_class / "results", results)
    assert cli.main(["report", A, str(results), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "similarity skipped: no submissions folder given, and none found next to the results" in printed
    assert "Similarity skipped: no submissions folder given" in (tmp_path / "out" / "index.html").read_text()
    with pytest.raises(SystemExit):
        cli.main(["report", A, str(results), "--out", str(tmp_path / "out"), "--boilerplate"])
    assert cli.main(["report", A, str(results), "--out", str(tmp_path / "out"),
                     "--boilerplate", str(tmp_path / "nope.py")]) == 2
