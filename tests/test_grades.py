"""The grade sheet: overrides (who, why, never lost by a regrade), late penalties in results and
grades.csv, one-student regrades into a class's folder, the Canvas export, the gradebook
comparison, and the command line's one-line errors."""
from __future__ import annotations

import csv
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder import cli, config
from autograder.config import load
from autograder.grading import export, final, late, overrides
from autograder.integrations import lms
from kit_helpers import reference_source

A = "02_attention_scoring"
POINTS = {"sequence_mask": 2, "masked_softmax": 4, "AdditiveAttention": 4, "DotProductAttention": 4}


def make_course(tmp_path: Path, **deadlines) -> Path:
    raw = yaml.safe_load(config.DEFAULT_CONFIG.read_text())
    raw["deadlines"] = {"timezone": "UTC", "time": "23:59",
                        "late": {"per": "day", "deduction": 10, "unit": "percent", "cap": 50, "zero_after_days": 7},
                        **deadlines}
    raw["overrides_file"] = "overrides.csv"
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def results(scores: dict[str, float]) -> dict:
    """A results file as `course grade` writes it (Gradescope format), for these component scores."""
    comps = {c: {"score": s, "max_score": POINTS[c]} for c, s in scores.items()}
    return {"score": sum(scores.values()), "max_score": 14.0, "output": "graded", "tests": [],
            "extra_data": {"components": comps, "submission": f"{A}.ipynb"}}


def write_overrides(path: Path, *rows: str) -> None:
    path.write_text("assignment,student,component,score,by,reason,date\n" + "".join(r + "\n" for r in rows))


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with path.open() as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


FULL = dict.fromkeys(POINTS, 0.0) | {"sequence_mask": 2.0, "AdditiveAttention": 4.0, "DotProductAttention": 4.0}


def test_overrides_and_late_penalty_in_results_and_grades_csv_survive_a_regrade(tmp_path):
    course = load(make_course(tmp_path))
    a = course.assignment(A)
    out = tmp_path / "out"
    out.mkdir()
    for name in ("alice", "carol"):
        (out / f"{name}.json").write_text(json.dumps(results(FULL)))
    write_overrides(tmp_path / "overrides.csv",
                    f'{A},carol,masked_softmax,3,ta_dana,"fills with -1e6: accepted",2026-10-02')
    due = dt.datetime(2026, 9, 28, 23, 59, tzinfo=dt.timezone.utc)
    whos = {"alice": export.Who("alice", late.SubmissionTime(due - dt.timedelta(hours=1), "test")),
            "carol": export.Who("carol", late.SubmissionTime(due + dt.timedelta(hours=30), "test"))}
    rows = export.finalize_folder(out, course, a, whos=whos)
    assert [r["name"] for r in rows] == ["alice", "carol"]
    sheet = read_csv(out / "grades.csv")
    assert list(sheet["carol"])[:7] == ["submission", "score", "max_score", *POINTS]
    carol = sheet["carol"]
    assert carol["masked_softmax"] == "3.0" and carol["raw_score"] == "10.0" and carol["override"] == "3.0"
    assert carol["late_penalty"] == "2.8" and carol["score"] == "10.2" and carol["hours_late"] == "30.0"
    assert "override masked_softmax = 3 (autograder: 0) by ta_dana on 2026-10-02: fills with -1e6: accepted" in carol["notes"]
    assert "2 started days × 10% of 14 points = 2.8 points" in carol["notes"]
    assert sheet["alice"]["score"] == "10.0" and sheet["alice"]["late_penalty"] == "0.0" and not sheet["alice"]["notes"]
    saved = json.loads((out / "carol.json").read_text())
    assert saved["score"] == 10.2 and saved["extra_data"]["raw_score"] == 10.0
    assert saved["extra_data"]["late"]["penalty"] == 2.8 and saved["extra_data"]["late"]["due_source"] == "course.yml"
    assert saved["extra_data"]["overrides"][0]["by"] == "ta_dana"
    assert saved["output"].startswith("Override: masked_softmax set to 3") and saved["output"].endswith("graded")

    # A regrade writes a fresh results file (no overrides, no times): the export puts both back.
    (out / "carol.json").write_text(json.dumps(results(FULL | {"sequence_mask": 1.0})))
    export.finalize_folder(out, course, a, whos={"carol": whos["carol"]})
    again = read_csv(out / "grades.csv")["carol"]
    assert again["masked_softmax"] == "3.0" and again["raw_score"] == "9.0" and again["score"] == "9.2"
    # An export from the results alone (no submission folder) keeps the recorded times.
    export.finalize_folder(out, course, a)
    assert read_csv(out / "grades.csv")["carol"] == again
    # Exporting twice gives the same file.
    before = (out / "grades.csv").read_text()
    export.finalize_folder(out, course, a)
    assert (out / "grades.csv").read_text() == before


def test_override_file_errors_name_line_and_field(tmp_path):
    course = load(make_course(tmp_path))
    path = tmp_path / "overrides.csv"
    for row, words in [
        (f"{A},carol,masked_softmax,5,ta,why,", r"line 2: score: 5 is outside 0..4"),
        (f"{A},carol,masked_softmax,x,ta,why,", r"line 2: score: not a number"),
        (f"{A},carol,attention,1,ta,why,", r"line 2: component: 'attention' is not a component of 02"),
        ("03_nope,carol,masked_softmax,1,ta,why,", r"line 2: assignment: '03_nope' is not an assignment"),
        (f"{A},carol,masked_softmax,1,,why,", r"line 2: by: empty: every override says who"),
        (f"{A},carol,masked_softmax,1,ta,,", r"line 2: reason: empty"),
    ]:
        write_overrides(path, row)
        with pytest.raises(overrides.OverrideError, match=words):
            overrides.load(course)
    write_overrides(path, f"{A},carol,masked_softmax,1,ta,a,", f"{A},carol,masked_softmax,2,tb,b,")
    with pytest.raises(overrides.OverrideError, match=r"line 3: component: a second override of masked_softmax"):
        overrides.load(course)
    path.write_text("student,component,score\n")
    with pytest.raises(overrides.OverrideError, match="missing assignment, by, reason"):
        overrides.load(course)


def test_canvas_export_matches_the_roster_and_reports_the_others(tmp_path):
    roster = tmp_path / "canvas.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Attention scoring functions (4567),Other (1)\n"
                      "    Points Possible,,,,,14,10\n"
                      '"Doe, Jane",12345,S001,jdoe,Sec A,,\n'
                      '"Eve, Eve",22222,S002,eve,Sec A,,\n'
                      '"Smith, Mary Ann",33333,S003,msmith,Sec B,,\n')
    _, header = lms.read_canvas_roster(roster)
    column, how = lms.canvas_column(header, "Attention scoring functions", A)
    assert column == "Attention scoring functions (4567)" and how == "by the title 'Attention scoring functions'"
    rows = [{"student_id": "doejane", "score": 12.6, "max_score": 14},  # Canvas's file-name form of the name
            {"student_id": "eve", "score": 14.0, "max_score": 14},  # SIS login
            {"student_id": "whoever", "score": 3.0, "max_score": 14, "lms_user_id": "33333"},  # Canvas user id
            {"student_id": "mallory", "score": 1.0, "max_score": 14}]
    written = lms.canvas_csv(tmp_path / "import.csv", rows, roster, column)
    assert written.unmatched == ["mallory"] and written.absent == []
    lines = list(csv.reader((tmp_path / "import.csv").open()))
    assert lines[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column]
    assert lines[1][0].strip() == "Points Possible" and lines[1][-1] == "14"
    assert sorted(lines[2:]) == [["Doe, Jane", "12345", "S001", "jdoe", "Sec A", "12.6"],
                                 ["Eve, Eve", "22222", "S002", "eve", "Sec A", "14"],
                                 ["Smith, Mary Ann", "33333", "S003", "msmith", "Sec B", "3"]]


CANVAS_HEADER = ("Student,ID,SIS User ID,SIS Login ID,Section,Assignment 01: Kernel regression (771233),"
                 "Assignment 02: Attention scoring functions (771234),Current Score,Final Score\n")


def test_canvas_column_is_found_by_canvas_id_or_title_within_its_name_and_never_invented():
    header = CANVAS_HEADER.strip().split(",")
    assert lms.canvas_column(header, "Attention scoring functions", A) == (
        "Assignment 02: Attention scoring functions (771234)", "by the title 'Attention scoring functions'")
    assert lms.canvas_column(header, "Scoring", A, canvas_id=771234)[0] == header[6]
    with pytest.raises(lms.LmsError, match=r"no column of the roster matches the title 'Bahdanau attention' "
                                           r"\(its assignment columns: 'Assignment 01: .*canvas_id in course.yml"):
        lms.canvas_column(header, "Bahdanau attention", "03_bahdanau")
    with pytest.raises(lms.LmsError, match="no column of the roster matches its Canvas id 9"):
        lms.canvas_column(header, "Attention scoring functions", A, canvas_id=9)
    twice = header + ["Quiz: Attention scoring functions (771299)"]
    with pytest.raises(lms.LmsError, match="2 columns of the roster match the title"):
        lms.canvas_column(twice, "Attention scoring functions", A)


def test_course_export_canvas_names_the_column_and_lists_roster_students_without_a_grade(tmp_path, capsys):
    """Issue #24 item 2: the gradebook's own column (the import updates it instead of adding one), and
    a roster student with no graded submission listed and written per course.yml canvas.missing."""
    out = tmp_path / "results"
    out.mkdir()
    for name in ("jdoe", "eve"):
        (out / f"{name}.json").write_text(json.dumps(results(FULL)))
    cut = {"score": 0.0, "max_score": 14.0, "output": "cut short", "tests": [],
           "extra_data": {"status": "unreadable", "problem": "not a notebook: cut short"}}
    (out / "rroe.json").write_text(json.dumps(cut))
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_HEADER + "    Points Possible,,,,,10,14,,\n"
                      '"Doe, Jane",12345,S001,jdoe,Sec A,,,,\n"Eve, Eve",22222,S002,eve,Sec A,,,,\n'
                      '"Roe, Rick",44444,S004,rroe,Sec B,,,,\n')
    code, printed, err = run_cli(capsys, "export", A, str(out), "--canvas", str(tmp_path / "import.csv"),
                                 "--roster", str(roster))
    assert code == 0, err
    assert "the roster's column 'Assignment 02: Attention scoring functions (771234)', found by the title" in printed
    assert "1 unreadable submission(s), written as 0: ask for a re-upload (rroe)" in printed  # said, not silent
    lines = list(csv.reader((tmp_path / "import.csv").open()))
    assert lines[0][-1] == "Assignment 02: Attention scoring functions (771234)"
    assert {line[0]: line[-1] for line in lines[2:]} == {"Doe, Jane": "10", "Eve, Eve": "10", "Roe, Rick": "0"}
    config_path = make_course(tmp_path)
    raw = yaml.safe_load(config_path.read_text())
    raw["canvas"] = {"missing": "blank"}
    raw["assignments"][1]["canvas_id"] = 555
    config_path.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, printed, err = run_cli(capsys, "--config", str(config_path), "export", A, str(out), "--canvas",
                                 str(tmp_path / "again.csv"), "--roster", str(roster))
    assert code == 2 and err.startswith("course: ") and len(err.strip().splitlines()) == 1, err
    assert "no column of the roster matches its Canvas id 555" in err and not (tmp_path / "again.csv").exists()
    raw["assignments"][1]["canvas_id"] = 771234
    config_path.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, printed, err = run_cli(capsys, "--config", str(config_path), "export", A, str(out), "--canvas",
                                 str(tmp_path / "again.csv"), "--roster", str(roster))
    assert code == 0 and "found by its Canvas id 771234" in printed, err
    (out / "rroe.json").unlink()
    code, printed, err = run_cli(capsys, "--config", str(config_path), "export", A, str(out), "--canvas",
                                 str(tmp_path / "again.csv"), "--roster", str(roster))
    assert code == 0 and "1 roster student(s) with no graded submission, written as an empty cell" in printed, err
    assert "Roe, Rick" in printed
    blank = {line[0]: line[-1] for line in csv.reader((tmp_path / "again.csv").open())}
    assert blank["Roe, Rick"] == ""


def test_disagreements_between_results_and_gradebook_are_listed():
    def row(name, comps, penalty=0.0, status=None):
        res = {"name": name, "score": sum(comps.values()) - penalty, "max_score": 14, "tests": [],
               "extra_data": {"student": name, "components": {c: {"score": s} for c, s in comps.items()},
                              "final_components": comps, "raw_score": sum(comps.values()),
                              "final_score": sum(comps.values()) - penalty, "late": {"penalty": penalty}}}
        if status:
            res["extra_data"] |= {"status": status, "problem": "submitted/eve/x is not named"}
        return res
    ours = [row("alice", FULL), row("carol", FULL, 1.4), row("eve", FULL), row("zed", FULL)]
    book = [row("alice", FULL), row("carol", FULL | {"sequence_mask": 1.0}, 1.4), row("eve", {}, status="NOT AUTOGRADED"),
            row("yan", FULL)]
    problems = export.disagreements(ours, book)
    assert not [p for p in problems if p.startswith("alice")]
    assert "carol: sequence_mask is 2 by `course grade`, 1 in the gradebook" in problems
    assert any(p.startswith("eve: `course grade` gives 10, the gradebook has no grade (submitted/eve/x") for p in problems)
    assert "zed: graded by `course grade` (10) but not in the gradebook" in problems
    assert "yan: in the gradebook (10) but not in the results folder" in problems


# --- the command line ------------------------------------------------------------------------------

def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv, words", [
    (["check", A, "{tmp}/nope.ipynb"], "nope.ipynb: no such file"),
    (["check", A, "{tmp}/notes.txt"], "notes.txt: not a notebook (.ipynb) or Python file (.py)"),
    (["check", A, "{tmp}/empty"], "No notebook found in your submission"),
    (["grade", A, "{tmp}/nope.ipynb"], "nope.ipynb: no such file"),
    (["grade", A, "{tmp}/notes.txt"], "not a notebook (.ipynb) or Python file (.py)"),
    (["grade", A, "{tmp}/empty", "--out", "{tmp}/o"], "empty: nothing to grade (no .ipynb or .py file"),
    (["grade", A, "{tmp}/only-text", "--out", "{tmp}/o"], "only-text: nothing to grade"),
    (["export", A, "{tmp}/nope"], "nope: no such folder"),
    (["export", A, "{tmp}/empty"], "empty: no results files in it"),
    (["collect", A, "{tmp}/nope.zip", "--to", "{tmp}/c"], "nope.zip: no such file or folder"),
    (["collect", A, "{tmp}/notes.txt", "--to", "{tmp}/c"], "notes.txt: not a zip file or a folder"),
    (["collect", A, "{tmp}/only-text", "--to", "{tmp}/c"], "no submission of a known form"),
    (["release", A, "--course-dir", "{tmp}/nope"], "nope: no such folder"),
    (["--config", "{tmp}/nope.yml", "validate"], "nope.yml: no such course file"),
])
def test_bad_paths_get_one_error_line_and_exit_2(tmp_path, capsys, argv, words):
    (tmp_path / "empty").mkdir()
    (tmp_path / "only-text").mkdir()
    (tmp_path / "only-text" / "readme.txt").write_text("hi")
    (tmp_path / "notes.txt").write_text("hi")
    code, out, err = run_cli(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and words in err, (code, out, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith("course: "), err
    assert not (tmp_path / "nope").exists() and not (tmp_path / "o").exists()


def test_check_names_the_assignment_a_wrong_notebook_belongs_to(tmp_path, capsys):
    import jupytext
    nb = jupytext.read(config.REPO_ROOT / "assignments" / "06_transformer" / "06_transformer.py")
    jupytext.write(nb, str(tmp_path / "transformer.ipynb"))
    code, out, err = run_cli(capsys, "check", A, str(tmp_path / "transformer.ipynb"))
    assert code == 2 and not out
    assert "transformer.ipynb looks like the notebook of 06_transformer, not of 02_attention_scoring" in err
    assert "graded cell test_PositionWiseFFN" in err and "course check 06_transformer" in err
    assert "ImportError" not in err
    # A .py that defines this assignment's components (and others') is not refused.
    from autograder.grading.identify import wrong_assignment
    (tmp_path / "all.py").write_text(reference_source(A) + "\n\nclass PositionWiseFFN:\n    pass\n")
    assert wrong_assignment(config.default(), A, tmp_path / "all.py") is None


@pytest.mark.xdist_group("grading-cli")
def test_regrading_one_file_with_out_writes_its_results_and_updates_its_row(tmp_path):
    """`course grade A FILE --out DIR`: that student's <name>.json and row of grades.csv, the other
    rows kept; the submission time comes from nbgrader's timestamp.txt, the late penalty and the
    override from course.yml and the overrides file."""
    course_path = make_course(tmp_path)
    course = load(course_path)
    out = tmp_path / "results"
    out.mkdir()
    (out / "alice.json").write_text(json.dumps(results(FULL)))
    export.finalize_folder(out, course, course.assignment(A), whos={"alice": export.Who("alice", None)})
    alice_row = read_csv(out / "grades.csv")["alice"]
    write_overrides(tmp_path / "overrides.csv", f"{A},carol,sequence_mask,1,ta_dana,style,")
    folder = tmp_path / "submitted" / "carol" / A
    folder.mkdir(parents=True)
    (folder / f"{A}.py").write_text(reference_source(A))
    (folder / "timestamp.txt").write_text("2026-09-30 08:00:00.000000 UTC")  # due 2026-09-28 23:59 UTC
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_path), "grade", A,
                           str(folder / f"{A}.py"), "--out", str(out), "-q"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Final score: 10.2 (autograded 14)" in proc.stdout and "carol: " in proc.stdout
    sheet = read_csv(out / "grades.csv")
    assert set(sheet) == {"alice", "carol"} and sheet["alice"] == alice_row
    carol = sheet["carol"]
    assert (carol["raw_score"], carol["override"], carol["late_penalty"], carol["score"]) == ("14.0", "-1.0", "2.8", "10.2")
    assert carol["submitted_at"] == "2026-09-30T08:00:00+00:00" and carol["due"] == "2026-09-28T23:59:00+00:00"
    saved = json.loads((out / "carol.json").read_text())
    assert saved["extra_data"]["late"]["time_source"] == "nbgrader timestamp.txt" and saved["score"] == 10.2
    assert final.row_status(saved) == "graded"


def test_validate_checks_the_extensions_and_overrides_files(tmp_path, capsys):
    path = make_course(tmp_path, extensions_file="ext.csv")
    (tmp_path / "ext.csv").write_text(f"assignment,student,days\n{A},carol,x\n")
    code, out, err = run_cli(capsys, "--config", str(path), "validate")
    assert code == 2 and "ext.csv line 2: days: Input should be a valid number" in err, err
    (tmp_path / "ext.csv").write_text(f"assignment,student,days\n{A},carol,2\n")
    write_overrides(tmp_path / "overrides.csv", f"{A},carol,masked_softmax,9,ta,why,")
    code, out, err = run_cli(capsys, "--config", str(path), "validate")
    assert code == 2 and "overrides.csv line 2: score: 9 is outside 0..4" in err, err
    write_overrides(tmp_path / "overrides.csv", f"{A},carol,masked_softmax,3,ta,why,")
    code, out, err = run_cli(capsys, "--config", str(path), "validate")
    assert code == 0 and "1 extensions, 1 overrides, OK" in out and "10% per started day late" in out


def test_the_grade_sheet_commands_do_not_load_torch():
    """`course export`, nbgrader's export plugin and the results files need no torch (it had made
    `course export` 2.5 s instead of 1.4 s, `nbgrader export` 3.2 s instead of 1.7 s)."""
    code = ("import sys, autograder.cli, autograder.grading.export, autograder.grading.results, "
            "autograder.integrations.nbgrader_bridge, autograder.integrations.lms\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')[:3])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr[-2000:]


def test_a_corrupt_upload_is_unreadable_everywhere_and_grade_ends_with_the_class(tmp_path):
    """A truncated notebook (not valid JSON) is `unreadable`, with the reason and "ask for a re-upload",
    in grades.csv, in its results (one line for the student, no test lines) and among the report's
    problems (not "No submitted file found"); `course grade DIR` ends with the class: distribution,
    full marks and zeros, and every submission that needs a human by name (unreadable, late,
    overridden), and where the grades are."""
    from kit_helpers import write_notebook

    course_path = make_course(tmp_path)
    write_overrides(tmp_path / "overrides.csv", f"{A},alice,sequence_mask,1,ta_dana,style,")
    submitted = tmp_path / "submitted"
    for student in ("alice", "bob", "carol"):
        (submitted / student / A).mkdir(parents=True)
    (submitted / "alice" / A / f"{A}.py").write_text(reference_source(A))
    (submitted / "carol" / A / f"{A}.py").write_text(reference_source(A))
    (submitted / "carol" / A / "timestamp.txt").write_text("2026-09-30 08:00:00.000000 UTC")  # 32 h late
    notebook = write_notebook(submitted / "bob" / A / f"{A}.ipynb", [("code", reference_source(A))])
    notebook.write_bytes(notebook.read_bytes()[:300])  # an upload cut short
    out, report = tmp_path / "results", tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_path), "grade", A,
                           str(submitted), "--out", str(out), "-q", "--jobs", "1"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    bob = read_csv(out / "grades.csv")["bob"]
    assert bob["status"] == "unreadable" and bob["score"] == "0.0", bob
    assert "is not a readable Jupyter notebook: its JSON breaks off" in bob["notes"], bob
    assert bob["notes"].endswith("ask for a re-upload"), bob
    saved = json.loads((out / "bob.json").read_text())
    assert saved["tests"] == [] and len(saved["output"].splitlines()) == 1 and "[FAIL]" not in saved["output"]
    assert saved["output"].startswith("Your submission could not be read, so nothing was graded: ")
    lines = proc.stdout.splitlines()
    assert f"{A}: 3 submissions, mean 8.07 / 14, median 11.20, 0 full marks, 1 zeros" in lines, proc.stdout
    assert "  scores: 0-20%: 1 | 20-40%: 0 | 40-60%: 0 | 60-80%: 0 | 80-<100%: 2 | 100%: 0" in lines, proc.stdout
    assert "needs a human: 3 of 3 submissions" in lines, proc.stdout
    assert any(line.startswith(f"  unreadable ({A}.ipynb is not a readable") and line.endswith(": bob")
               for line in lines), proc.stdout
    assert "  late: carol (32.0 h, -2.8)" in lines and "  overridden: alice (sequence_mask by ta_dana)" in lines
    assert lines[-1].startswith(f"grades: {out}/grades.csv; ") and f"course report {A} {out}" in lines[-1]

    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_path), "report", A,
                           str(out), "--submissions", str(submitted), "--out", str(report)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with (report / "problems.csv").open() as f:
        problems = list(csv.DictReader(f))
    assert [(p["kind"], p["students"]) for p in problems] == [("unreadable", "bob")], problems
    assert problems[0]["message"].endswith("ask for a re-upload")
    page = (report / "index.html").read_text()
    assert "No submitted file found" not in page and "could not use it" not in page


def test_times_file_one_rule_for_written_times_and_the_late_mark_reaches_the_notes(tmp_path, capsys):
    """Issue #24 item 4: a class's times in one CSV (student,submitted_at), read like --submitted-at
    (without a zone: course.yml's time zone); Canvas's LATE mark is in grades.csv's notes."""
    config_path = make_course(tmp_path, timezone="Europe/Zurich")
    course = load(config_path)
    out = tmp_path / "out"
    out.mkdir()
    for name in ("alice", "carol", "eve"):
        (out / f"{name}.json").write_text(json.dumps(results(FULL)))
    export.finalize_folder(out, course, course.assignment(A),
                           whos={"carol": export.Who("carol", None, "canvas", "2", "LATE mark in the LMS download")})
    assert "LATE mark in the LMS download: no submission time, so no late penalty; give times with --times" \
        in read_csv(out / "grades.csv")["carol"]["notes"]
    from autograder.report.summary import needs_a_human
    rows = [{"name": p.stem, **json.loads(p.read_text())} for p in sorted(out.glob("*.json"))]
    assert ("marked late by the LMS, no submission time (give it with --times)", ["carol"]) in \
        needs_a_human(rows, course.assignment(A))  # the end of `course grade` names her
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at,comment\nalice,2026-09-28 23:50,on time in Zurich\n"
                     "carol,2026-09-30 10:00,the LATE one\neve,2026-09-28T23:50:00+00:00,UTC: 1 h 51 min late in Zurich\n"
                     "zed,2026-09-28 10:00,no such student\n")
    code, _, err = run_cli(capsys, "--config", str(config_path), "export", A, str(out), "--times", str(times))
    assert code == 0, err
    assert f"course: {times}: 'zed' has no graded submission: their time is unused" in err, err
    sheet = read_csv(out / "grades.csv")
    assert sheet["alice"]["late_penalty"] in ("0", "0.0") and sheet["alice"]["submitted_at"] == "2026-09-28T23:50:00+02:00"
    assert float(sheet["eve"]["late_penalty"]) == 1.4 and "1 h" in sheet["eve"]["notes"]  # 1 started day x 10% of 14
    assert float(sheet["carol"]["late_penalty"]) == 2.8
    assert "LATE mark in the LMS download" in sheet["carol"]["notes"] and "no submission time" not in sheet["carol"]["notes"]
    times.write_text("student,submitted_at\nalice,yesterday-ish\n")
    code, _, err = run_cli(capsys, "--config", str(config_path), "export", A, str(out), "--times", str(times))
    assert code == 2 and "times.csv: line 2: submitted_at: not a time" in err and len(err.strip().splitlines()) == 1



def test_a_regrade_keeps_the_time_an_export_gave_and_the_lms_note(tmp_path, capsys):
    """The term review: regrading frank's file alone into the class folder dropped the 2.8 late penalty
    that `course export --times` had given, and Canvas's LATE mark."""
    config_path = make_course(tmp_path)
    course = load(config_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "frank.json").write_text(json.dumps(results(FULL)))
    export.finalize_folder(out, course, course.assignment(A),
                           whos={"frank": export.Who("frank", None, "canvas", "7", "LATE mark in the LMS download")})
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\nfrank,2026-09-30 10:00\n")
    code, _, err = run_cli(capsys, "--config", str(config_path), "export", A, str(out), "--times", str(times))
    assert code == 0, err
    assert float(read_csv(out / "grades.csv")["frank"]["late_penalty"]) == 2.8
    notebook = tmp_path / "class" / "frank" / f"{A}.py"
    notebook.parent.mkdir(parents=True)
    notebook.write_text("# regraded\n")
    export.finish_one(results(FULL), course, course.assignment(A), notebook, out=out, student="frank")
    row = read_csv(out / "grades.csv")["frank"]
    assert float(row["late_penalty"]) == 2.8 and "LATE mark in the LMS download" in row["notes"], row


def test_a_component_at_the_degenerate_share_that_passed_many_tests_needs_a_human(tmp_path) -> None:
    """Helper-72's F6: a mistake the catalogue does not know fails every comparison with the course's, and the
    credit for everything else is in proportion to them. Since session 48 one whose outputs still move as the
    course's do keeps half of its property tests (relu for tanh: 0.92 of 4, dependence tests); one that also fails
    them (scores multiplied by sqrt(d) instead of divided: saturated, its outputs move otherwise) keeps 0 of 4, as
    degenerate code gets, though 12 of its 31 tests pass. The grade stays; the end of `course grade` names it for
    staff. Degenerate code (a masked_softmax that never masks) is not named there."""
    from autograder.grading import session
    from autograder.grading.results import results_json
    from autograder.report.summary import needs_a_human, unknown_mistake_cliffs
    source = reference_source(A)
    scaled = "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)"
    assert scaled in source
    (tmp_path / "times.py").write_text(source.replace(scaled, scaled.replace("/ math.sqrt(d)", "* math.sqrt(d)")))
    (tmp_path / "never_masks.py").write_text(source + "\n\ndef masked_softmax(X, valid_lens):\n"
                                             "    return torch.softmax(X, dim=-1)\n")
    rows = []
    for name, graded in (("times", ["DotProductAttention"]), ("never_masks", ["masked_softmax"])):
        result = session.run_in_process(A, tmp_path / f"{name}.py", components=graded)
        rows.append({"name": name, **json.loads(json.dumps(results_json(result)))})
    times, never = unknown_mistake_cliffs(rows[0]), unknown_mistake_cliffs(rows[1])
    assert len(times) == 1 and times[0].startswith("DotProductAttention "), times
    assert never == []
    flagged = dict(needs_a_human(rows, config.default().assignment(A)))
    assert [who for why, who in flagged.items() if why.startswith("a component kept at most")] == \
        [[f"times ({times[0]})"]]
