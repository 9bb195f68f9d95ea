"""Withheld feedback follows each student's OWN due date (late.reference_release), through `course
grade` on a class folder with a course.yml in tmp_path that grants one student an extension, and
the Gradescope runner's metadata (the student and the due date Gradescope gives them)."""
from __future__ import annotations

import datetime as dt
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder import config as config_mod
from autograder.grading import session
from autograder.sandbox.bwrap import bwrap_available

HOSTILE = Path(__file__).resolve().parent / "hostile"
A = "02_attention_scoring"
UTC = dt.timezone.utc
#: The components whose children are handed the course's masked_softmax when the student's fails.
HOLDING = ("AdditiveAttention", "DotProductAttention")


def _reference_lines() -> set[str]:
    from solutions import attention_scoring
    source = inspect.getsource(attention_scoring.masked_softmax) + inspect.getsource(attention_scoring.sequence_mask)
    return {line.strip() for line in source.splitlines() if len(line.strip()) >= 25}


def _course_with_extension(folder: Path, due: dt.date) -> Path:
    """The kit's course.yml with 02 due on `due` (UTC) and carol given 30 days more."""
    raw = yaml.safe_load(config_mod.DEFAULT_CONFIG.read_text())
    for a in raw["assignments"]:
        if a["id"] == A:
            a["due"] = due.isoformat()
    raw["deadlines"].update({"timezone": "UTC", "extensions": [
        {"assignment": A, "student": "carol", "days": 30, "reason": "ill"}]})
    path = folder / "course.yml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")
def test_course_grade_withholds_until_each_students_own_due_date(tmp_path: Path) -> None:
    """02 was due two days ago; carol has an extension and can still submit, bob has none. Both
    submit the reference leaker (tests/hostile/leak_reference.py): carol's results withhold the
    details of the components graded on the course's masked_softmax (no line of it anywhere in her
    results file), bob's show them (his due date has passed); the scores are the same."""
    course_yml = _course_with_extension(tmp_path, dt.datetime.now(UTC).date() - dt.timedelta(days=2))
    for student in ("bob", "carol"):
        (tmp_path / "class" / student).mkdir(parents=True)
        shutil.copy(HOSTILE / "leak_reference.py", tmp_path / "class" / student / f"{A}.py")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_yml), "grade", A,
                           str(tmp_path / "class"), "--out", str(out), "--jobs", "1", "-q"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    bob, carol = (json.loads((out / f"{s}.json").read_text()) for s in ("bob", "carol"))
    for name in HOLDING:
        assert carol["extra_data"]["components"][name]["withheld"], carol["extra_data"]["components"][name]
        assert not bob["extra_data"]["components"][name]["withheld"], bob["extra_data"]["components"][name]
        assert carol["extra_data"]["components"][name]["score"] == bob["extra_data"]["components"][name]["score"]
    text = json.dumps(carol)
    assert [line for line in _reference_lines() if line in text] == []
    carol_due = config_mod.load(course_yml).deadlines.show(
        dt.datetime.combine(dt.datetime.now(UTC).date() + dt.timedelta(days=28), dt.time(23, 59), tzinfo=UTC)
        + dt.timedelta(minutes=config_mod.load(course_yml).deadlines.late.grace_minutes))
    assert carol_due in text  # the message names her own date
    assert [line for line in _reference_lines() if line in json.dumps(bob)]  # after his due date: shown


def test_gradescope_metadata_names_the_student_and_their_due_date(tmp_path: Path) -> None:
    """Gradescope's submission_metadata.json (beside submission/, where an upload cannot be) gives
    the student and the due date Gradescope holds for them (the runner reads it at its root,
    late.gradescope_runner_metadata, and never beside the file: an upload could plant one there);
    the release is the later of that and course.yml's (with the course.yml extension)."""
    from autograder.grading import late
    course = config_mod.load(_course_with_extension(tmp_path, dt.date(2026, 9, 28)))
    own = "2026-10-20T23:59:00+00:00"
    meta = {"created_at": "2026-09-30T10:00:00+00:00", "assignment": {"due_date": "2026-09-28T23:59:00+00:00"},
            "users": [{"email": "bob@uni.edu", "sid": "bob", "assignment": {"due_date": own}}]}
    (tmp_path / "submission").mkdir()
    path = tmp_path / "submission" / f"{A}.py"
    path.write_text("")
    (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
    found = late.gradescope_runner_metadata(tmp_path)
    assert found is not None and (found.student, found.due) == ("bob", dt.datetime(2026, 10, 20, 23, 59, tzinfo=UTC))
    assert session._who_is_due(course, A, path, None) == (None, None)  # beside the file: not read
    meta["users"][0]["sid"] = "carol"  # her course.yml extension (to 2026-10-28) is later than Gradescope's
    (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
    found = late.gradescope_runner_metadata(tmp_path)
    assert found is not None
    release = late.reference_release(course, course.assignment(A), found.student, found.due)
    assert release.when == dt.datetime(2026, 10, 28, 23, 59, tzinfo=UTC) + dt.timedelta(
        minutes=course.deadlines.late.grace_minutes)
    assert session._who_is_due(course, A, path, "dave")[0] == "dave"  # an explicit --student wins


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")
def test_an_earlier_assignments_reference_waits_for_the_students_own_due_date(zygote, tmp_path: Path) -> None:
    """03's decoder is graded on the course's AdditiveAttention (02). Carol's extension on 02 still
    runs: her 03 feedback is withheld (it could show 02's reference), bob's is not; same scores."""
    course = config_mod.load(_course_with_extension(tmp_path, dt.datetime.now(UTC).date() - dt.timedelta(days=2)))
    from solutions import bahdanau
    submission = tmp_path / "03_bahdanau.py"
    submission.write_text(inspect.getsource(bahdanau).replace("from solutions.attention_scoring import "
                                                              "AdditiveAttention\n", ""))
    graded = {s: session.grade_file(zygote, "03_bahdanau", submission, course=course, student=s)
              for s in ("bob", "carol")}
    carol, bob = (next(c for c in graded[s].components if c.name == "Seq2SeqAttentionDecoder") for s in ("carol", "bob"))
    assert carol.withheld and "AdditiveAttention" in carol.withheld, carol.withheld
    assert not bob.withheld
    assert carol.score == bob.score
