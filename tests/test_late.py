"""Deadlines and late work (autograder/grading/late.py): the policy, its validation, extensions,
submission times from nbgrader and Gradescope, and that nbgrader's LateSubmissionPlugin interface
gives the policy's numbers."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import config
from autograder.config import ConfigError, load
from autograder.grading import late
from autograder.grading.late import DAY, HOUR, LatePolicy

A = "02_attention_scoring"
UTC = dt.timezone.utc


def course_file(tmp_path: Path, deadlines: dict | None = None, **extra) -> Path:
    raw = yaml.safe_load(config.DEFAULT_CONFIG.read_text())
    if deadlines is not None:
        raw["deadlines"] = deadlines
    raw.update(extra)
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


POLICY = LatePolicy(per="day", deduction=10, unit="percent", cap=50, zero_after_days=7, grace_minutes=15)


def test_policy_numbers():
    assert POLICY.penalty(0, 14, 14) == (0.0, "")
    assert POLICY.penalty(14 * 60, 14, 14)[0] == 0  # within the grace
    points, why = POLICY.penalty(16 * 60, 14, 14)  # after the grace: counted from the due date
    assert points == 1.4 and "1 started day" in why
    assert POLICY.penalty(DAY + 1, 14, 14)[0] == 2.8
    assert POLICY.penalty(6.5 * DAY, 14, 14)[0] == 7.0  # 7 days x 10% = 70%, capped at 50%
    points, why = POLICY.penalty(7 * DAY + 1, 14, 11)
    assert points == 11 and "0 points" in why  # zero after 7 days: everything earned
    assert POLICY.penalty(DAY, 14, 1.0)[0] == 1.0  # never below 0
    hourly = LatePolicy(per="hour", deduction=0.5, unit="points")
    assert hourly.penalty(2.5 * HOUR, 10, 10)[0] == 1.5
    assert LatePolicy().penalty(100 * DAY, 14, 14) == (0.0, "")


@settings(max_examples=200, deadline=None, database=None)
@given(seconds=st.floats(0, 40 * DAY), score=st.floats(0, 14), deduction=st.floats(0.5, 100),
       cap=st.one_of(st.none(), st.floats(0, 100)), per=st.sampled_from(["day", "hour"]))
def test_policy_properties(seconds, score, deduction, cap, per):
    policy = LatePolicy(per=per, deduction=deduction, unit="percent", cap=cap)
    points, _ = policy.penalty(seconds, 14, score)
    assert 0 <= points <= score + 1e-9
    if cap is not None:
        assert points <= cap / 100 * 14 + 5e-5  # penalties are rounded to 1e-4, as scores are
    later, _ = policy.penalty(seconds + HOUR, 14, score)
    assert later >= points - 1e-9  # later never costs less


@pytest.mark.parametrize("late_block, field, words", [
    ({"per": "week", "deduction": 1}, "deadlines.late.per", "'none', 'day' or 'hour'"),
    ({"per": "day"}, "deadlines.late.deduction", "needs a deduction greater than 0"),
    ({"per": "none", "deduction": 5}, "deadlines.late.deduction", "needs `per: day` or `per: hour`"),
    ({"per": "day", "deduction": 150}, "deadlines.late.unit", "at most 100"),
    ({"per": "day", "deduction": 10, "cap": 120}, "deadlines.late.cap", "more than the whole score"),
    ({"per": "day", "deduction": -1}, "deadlines.late.deduction", "greater than or equal to 0"),
    ({"per": "day", "deduction": 10, "zero_after_days": 0}, "deadlines.late.zero_after_days", "greater than 0"),
    ({"per": "day", "deduction": 10, "penalty": 3}, "deadlines.late.penalty", "Extra inputs"),
])
def test_policy_errors_name_the_field(tmp_path, late_block, field, words):
    with pytest.raises(ConfigError) as err:
        load(course_file(tmp_path, {"late": late_block}))
    assert field in str(err.value) and words in str(err.value), str(err.value)


def test_deadline_settings_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"deadlines\.timezone.*unknown time zone 'Mars/Olympus'"):
        load(course_file(tmp_path, {"timezone": "Mars/Olympus"}))
    with pytest.raises(ConfigError, match=r"deadlines\.extensions\.0.*either `due` or `days`"):
        load(course_file(tmp_path, {"extensions": [{"assignment": A, "student": "x", "days": 1, "due": "2026-10-01"}]}))
    with pytest.raises(ConfigError, match=r"deadlines\.extensions\[0\]: assignment '99_nope' is not in course.yml"):
        load(course_file(tmp_path, {"extensions": [{"assignment": "99_nope", "student": "x", "days": 1}]}))


def test_due_dates_time_zone_and_extensions(tmp_path):
    (tmp_path / "extensions.csv").write_text("assignment,student_id,due,days,hours,reason\n"
                                             f"{A},carol,2026-10-02 12:00,,,surgery\n{A},erin,,,36,\n")
    course = load(course_file(tmp_path, {
        "timezone": "Europe/Zurich", "time": "23:59", "late": {"per": "day", "deduction": 10},
        "extensions": [{"assignment": A, "student": "dave", "days": 2, "reason": "ill"}],
        "extensions_file": "extensions.csv"}))
    a = course.assignment(A)  # due 2026-09-28
    base = late.due_for(course, a)
    assert base.when == dt.datetime(2026, 9, 28, 21, 59, tzinfo=UTC) and base.source == "course.yml"  # CEST = UTC+2
    assert late.due_for(course, a, "dave").when == base.when + dt.timedelta(days=2)
    assert late.due_for(course, a, "dave").source == "extension: ill"
    assert late.due_for(course, a, "carol").when == dt.datetime(2026, 10, 2, 10, 0, tzinfo=UTC)
    assert late.due_for(course, a, "erin").when == base.when + dt.timedelta(hours=36)
    gs = dt.datetime(2026, 10, 9, tzinfo=UTC)
    assert late.due_for(course, a, "dave", platform_due=gs).when == gs  # Gradescope's own due date wins


def test_extensions_file_errors_name_line_and_field(tmp_path):
    bad = {"extensions_file": "ext.csv"}
    path = course_file(tmp_path, bad)
    course = load(path)
    for text, words in [
        (f"assignment,student,due\n{A},carol,2026-13-45\n", r"ext.csv line 2: due: .*not a date"),
        (f"assignment,student\n{A},carol\n", r"ext.csv line 2: row: .*give the student's own `due`"),
        (f"assignment,student,days,color\n{A},carol,1,red\n", r"unknown column\(s\) color"),
        (f"assignment,student,days\n{A},carol,1\n{A},carol,2\n", r"ext.csv line 3: a second extension for carol"),
        ("assignment,student,days\n01_nope,carol,1\n", r"ext.csv line 2: assignment '01_nope' is not in course.yml"),
    ]:
        (tmp_path / "ext.csv").write_text(text)
        with pytest.raises(late.DeadlineError, match=words):
            course.deadlines.all_extensions({a.id for a in course.assignments})
    (tmp_path / "ext.csv").unlink()
    with pytest.raises(late.DeadlineError, match="no such extensions file"):
        late.due_for(course, course.assignment(A), "carol")


@pytest.mark.parametrize("text", ["2026-09-28 21:05:00.123456 UTC", "2026-09-28 21:05:00.123456",
                                  "2026-09-28T23:05:00.123456+02:00", "2026-09-28 21:05:00.123456+00:00",
                                  "2026-09-28 23:05:00.123456 Europe/Zurich"])
def test_timestamps_read_as_nbgrader_reads_them(tmp_path, text):
    from nbgrader.utils import parse_utc
    (tmp_path / "timestamp.txt").write_text(text)
    ours = late.read_timestamp_txt(tmp_path / "timestamp.txt").submitted_at
    assert ours == parse_utc(text).replace(tzinfo=UTC) == dt.datetime(2026, 9, 28, 21, 5, 0, 123456, tzinfo=UTC)


def test_gradescope_metadata_gives_time_and_the_students_own_due_date(tmp_path):
    meta = {"id": 1, "created_at": "2026-09-30T10:00:00.000000-07:00",
            "assignment": {"due_date": "2026-09-28T23:59:00.000000-07:00", "title": "x", "late_due_date": None},
            "users": [{"email": "carol@uni.edu", "id": 7, "name": "Carol",
                       "assignment": {"due_date": "2026-10-01T23:59:00.000000-07:00", "late_due_date": None}}]}
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "hw.ipynb").write_text("{}")
    (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
    when = late.gradescope_runner_metadata(tmp_path)  # the runner's root, where Gradescope writes it
    assert when.submitted_at == dt.datetime(2026, 9, 30, 17, 0, tzinfo=UTC)
    assert when.due == dt.datetime(2026, 10, 2, 6, 59, tzinfo=UTC) and when.student == "carol@uni.edu"
    del meta["users"][0]["assignment"]  # older metadata: the assignment's due date
    (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
    assert late.gradescope_runner_metadata(tmp_path).due == dt.datetime(2026, 9, 29, 6, 59, tzinfo=UTC)
    assert late.gradescope_runner_metadata(tmp_path / "submission") is None  # none there: no time
    # Never found from the submitted file: only the runner reads it, and passes it on.
    assert late.submission_time(tmp_path / "submission" / "hw.ipynb", A) is None


def test_a_planted_gradescope_metadata_file_is_never_read(tmp_path):
    """F3: an upload holding submission_metadata.json and submission/<file> (the nearest metadata to
    the picked file) dated nothing and named no one before; now submission_time looks for no
    Gradescope metadata at all, so neither the planted file nor the real one beside it is read."""
    real = {"created_at": "2026-10-05T10:00:00Z", "users": [{"email": "mallory@uni.edu"}]}
    planted = {"created_at": "2020-01-01T00:00:00Z", "users": [{"email": "alice@uni.edu"}]}
    (tmp_path / "submission" / "submission").mkdir(parents=True)
    (tmp_path / "submission_metadata.json").write_text(json.dumps(real))
    (tmp_path / "submission" / "submission_metadata.json").write_text(json.dumps(planted))
    picked = tmp_path / "submission" / "submission" / f"{A}.py"
    picked.write_text("x = 1\n")
    assert late.submission_time(picked, A) is None
    assert late.gradescope_runner_metadata(tmp_path).student == "mallory@uni.edu"


def test_gradescope_metadata_is_read_bounded(tmp_path):
    """F9: 200,000 nested brackets raised RecursionError out of `course grade`; a link to /proc
    was followed; a huge file was read whole. Each is now the DeadlineError that names the file."""
    path = tmp_path / "submission_metadata.json"
    for content, words in ((b"[" * 200_000 + b"]" * 200_000, "no readable submission time"),
                           (b'{"created_at": []}', "no readable submission time"),
                           (b"\xff\xfe not json", "no readable submission time"),
                           (b" " * ((1 << 20) + 1), "over the")):
        path.write_bytes(content)
        with pytest.raises(late.DeadlineError, match=words):
            late.read_gradescope_metadata(path)
    path.unlink()
    path.symlink_to("/proc/self/pagemap")
    with pytest.raises(late.DeadlineError, match="symbolic link"):
        late.read_gradescope_metadata(path)


def test_a_student_folders_own_records_and_links_date_nothing(tmp_path):
    """In a class folder, a course-collect record inside a student's folder (for a sub-folder of it)
    and a timestamp.txt that is a symbolic link (to /proc/kmsg: a read that blocks) are not read."""
    from autograder.grading import class_record
    sub = tmp_path / "class" / "mallory" / "work"
    sub.mkdir(parents=True)
    (sub / f"{A}.py").write_text("x = 1\n")
    (sub.parent / class_record.COLLECTED).write_text(json.dumps(
        {"work": {"student": "work", "file": f"{A}.py", "lms": "canvas", "submitted_at": "2020-01-01T00:00:00"}}))
    assert late.submission_time(sub / f"{A}.py", A, stop=sub.parent) is None
    nb = tmp_path / "class" / "eve" / A
    nb.mkdir(parents=True)
    (nb / f"{A}.py").write_text("x = 1\n")
    (nb / "timestamp.txt").symlink_to("/proc/kmsg")
    assert late.submission_time(nb / f"{A}.py", A, stop=nb.parent) is None


def test_only_timestamps_a_course_tool_wrote_are_read(tmp_path):
    """A timestamp.txt in nbgrader's submitted/<student>/<assignment>/ is the submission time; one in
    any other folder, even beside an lms.json, may be the student's own upload (course collect's
    times are in its class record: tests/test_collected_identity.py)."""
    stamp = "2026-09-28 21:05:00 UTC"
    nbgrader_layout = tmp_path / "submitted" / "carol" / A
    moodle = tmp_path / "Carol Chen_991_assignsubmission_file_"
    collected = tmp_path / "class" / "carol"
    for folder in (nbgrader_layout, moodle, collected):
        folder.mkdir(parents=True)
        (folder / f"{A}.ipynb").write_text("{}")
        (folder / "timestamp.txt").write_text(stamp)
    (collected / "lms.json").write_text("{}")
    assert late.submission_time(nbgrader_layout / f"{A}.ipynb", A).source == "nbgrader timestamp.txt"
    assert late.submission_time(collected / f"{A}.ipynb", A) is None
    assert late.submission_time(moodle / f"{A}.ipynb", A) is None
    (tmp_path / "submission").mkdir()  # Gradescope: an uploaded metadata file inside submission/ is not read
    (tmp_path / "submission" / "submission_metadata.json").write_text('{"created_at": "2020-01-01T00:00:00Z"}')
    assert late.submission_time(tmp_path / "submission" / f"{A}.ipynb", A) is None


def test_nbgrader_plugin_gives_the_policys_penalty(tmp_path):
    """nbgrader's AssignLatePenalties calls plugin.late_submission_penalty(student, score, seconds)."""
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config import Config

    from autograder.integrations.nbgrader_bridge import CourseLatePenalty
    path = course_file(tmp_path, {"late": {"per": "hour", "deduction": 5, "unit": "percent", "cap": 40}})
    cfg = Config()
    cfg.SandboxGrader.course_file = str(path)
    pre = AssignLatePenalties(config=cfg)
    pre.assignment_id = A
    plugin = CourseLatePenalty(parent=pre, config=cfg)
    policy = load(path).deadlines.late
    for seconds, score in [(0, 14), (1, 14), (3 * HOUR + 5, 12.5), (30 * HOUR, 14), (2 * HOUR, 0.3)]:
        assert plugin.late_submission_penalty("carol", score, seconds) == policy.penalty(seconds, 14, score)[0]


# --- when reference-derived material may reach a student (late.reference_release) ------------------

def extended_course(tmp_path: Path, zone: str = "Europe/Zurich", grace: float = 15):
    """02 due 2026-09-28 23:59 in `zone`; carol has 3 days more, dave his own due date 2026-10-05 12:00."""
    return load(course_file(tmp_path, {
        "timezone": zone, "time": "23:59", "late": {"per": "day", "deduction": 10, "grace_minutes": grace},
        "extensions": [{"assignment": A, "student": "carol", "days": 3, "reason": "ill"},
                       {"assignment": A, "student": "dave", "due": "2026-10-05 12:00"},
                       {"assignment": "03_bahdanau", "student": "erin", "days": 30}]}))


def test_reference_release_is_the_latest_due_instant_of_the_student(tmp_path):
    course = extended_course(tmp_path)
    a = course.assignment(A)
    base = late.due_for(course, a).when
    grace = dt.timedelta(minutes=15)
    assert late.reference_release(course, a, "bob").when == base + grace  # no extension: the class's
    assert late.reference_release(course, a, "carol").when == base + dt.timedelta(days=3) + grace
    assert late.reference_release(course, a, "dave").when == dt.datetime(2026, 10, 5, 10, 0, tzinfo=UTC) + grace
    # class-wide (or a student the grader cannot name): the last of every student of the assignment;
    # erin's extension is on another assignment and does not count
    assert late.reference_release(course, a).when == dt.datetime(2026, 10, 5, 10, 0, tzinfo=UTC) + grace
    # the platform's own due date for the student counts when it is later, never earlier
    gs_late, gs_early = base + dt.timedelta(days=5), base - dt.timedelta(days=5)
    assert late.reference_release(course, a, "bob", platform_due=gs_late).when == gs_late + grace
    assert late.reference_release(course, a, "carol", platform_due=gs_early).when == base + dt.timedelta(days=3) + grace
    # an extension given as an EARLIER own due date does not release earlier than the class's
    early = load(course_file(tmp_path, {"extensions": [{"assignment": A, "student": "fay", "due": "2026-09-01"}]}))
    assert late.reference_release(early, early.assignment(A), "fay").when == late.due_for(early, early.assignment(A)).when \
        + dt.timedelta(minutes=early.deadlines.late.grace_minutes)


def test_feedback_is_withheld_until_each_students_own_due_instant(tmp_path):
    course = extended_course(tmp_path)
    a = course.assignment(A)
    base = late.due_for(course, a).when
    day_after = base + dt.timedelta(days=1)
    assert late.reference_release(course, a, "bob").passed(day_after)
    assert not late.reference_release(course, a, "carol").passed(day_after)  # carol may still submit
    assert not late.reference_release(course, a).passed(day_after)
    assert not late.reference_release(course, a, "bob").passed(base + dt.timedelta(minutes=10))  # within the grace
    assert late.reference_release(course, a, "carol").passed(base + dt.timedelta(days=3, minutes=16))
    never = load(course_file(tmp_path, {"timezone": "UTC"}))
    undated = never.assignment(A).model_copy(update={"due": None})
    assert late.reference_release(never, undated, "bob") == late.Release(None, f"{A} has no due date in course.yml", "bob")
    assert not late.reference_release(never, undated, "bob").passed(dt.datetime(2100, 1, 1, tzinfo=UTC))


def test_reference_release_compares_instants_not_dates(tmp_path):
    """Near midnight a date comparison is wrong in one direction or the other: in Los Angeles the due
    instant 2026-09-28 23:59 is 06:59 UTC on the 29th, so a grader whose clock reads the 29th (UTC)
    at 02:00 is still five hours before the deadline."""
    course = extended_course(tmp_path, zone="America/Los_Angeles", grace=0)
    a = course.assignment(A)
    assert a.due == dt.date(2026, 9, 28)
    release = late.reference_release(course, a, "bob")
    assert release.when == dt.datetime(2026, 9, 29, 6, 59, tzinfo=UTC)
    assert not release.passed(dt.datetime(2026, 9, 29, 2, 0, tzinfo=UTC))  # the 29th in UTC, the 28th there
    assert release.passed(dt.datetime(2026, 9, 29, 7, 0, tzinfo=UTC))
    noon = load(course_file(tmp_path, {"timezone": "Europe/Zurich", "time": "12:00"}))
    at_noon = late.reference_release(noon, noon.assignment(A), "bob")
    assert at_noon.passed(dt.datetime(2026, 9, 28, 10, 30, tzinfo=UTC))  # 12:30 in Zurich on the due date itself


def _nbgrader_class(root: Path, stamps: dict[str, str], nested: bool = False) -> Path:
    """submitted/<student>/<A>/{A.ipynb, timestamp.txt} as nbgrader lays it out (nested: the student
    put a second <A>/ folder with a timestamp.txt of their own inside, and the notebook in it)."""
    for student, stamp in stamps.items():
        folder = root / student / A
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(stamp)
        if nested:
            folder = folder / A
            folder.mkdir()
            (folder / "timestamp.txt").write_text("2020-01-01 00:00:00")
        (folder / f"{A}.py").write_text("x = 1\n")
    return root


def test_one_students_timestamp_is_that_students_problem(tmp_path: Path) -> None:
    """An unreadable or absurd timestamp.txt (a student's folder in a plain class folder) costs the
    class nothing: identify names the student, with no time and a note saying so (it used to raise,
    and `course grade DIR` stopped for everyone)."""
    from autograder.grading.export import identify
    root = _nbgrader_class(tmp_path / "submitted", {"alice": "x", "bob": "9999-12-31 23:59:59 -1400",
                                                    "carol": "2026-09-20 10:00:00"})
    whos = {s: identify(s, root / s / A / f"{A}.py", root, A) for s in ("alice", "bob", "carol")}
    for s in ("alice", "bob"):
        assert whos[s].student == s and whos[s].when is None and "could not be read" in whos[s].note
    assert whos["carol"].when is not None and whos["carol"].when.submitted_at == dt.datetime(2026, 9, 20, 10, tzinfo=dt.timezone.utc)


def test_a_timestamp_deeper_than_nbgraders_is_not_read(tmp_path: Path) -> None:
    """nbgrader writes <student>/<assignment>/timestamp.txt beside the notebook; one a student nested
    deeper (with their notebook beside it) is their own upload: no time is read from it."""
    from autograder.grading.export import identify
    root = _nbgrader_class(tmp_path / "submitted", {"mallory": "2026-10-10 10:00:00"}, nested=True)
    who = identify("mallory", root / "mallory" / A / A / f"{A}.py", root, A)
    assert who.when is not None and who.when.submitted_at == dt.datetime(2026, 10, 10, 10, tzinfo=dt.timezone.utc)


def test_a_notebook_moved_deeper_keeps_nbgraders_time(tmp_path: Path) -> None:
    """Moving the notebook into a subfolder of <student>/<assignment>/ (nbgrader submit copies it)
    does not escape the late penalty: nbgrader's timestamp.txt beside the subfolder is read."""
    from autograder.grading.export import identify
    root = tmp_path / "submitted"
    folder = root / "dora" / A
    (folder / "work").mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00")
    (folder / "work" / f"{A}.py").write_text("x = 1\n")
    who = identify("dora", folder / "work" / f"{A}.py", root, A)
    assert who.when is not None and who.when.submitted_at == dt.datetime(2026, 11, 20, 10, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("machine_zone", ["UTC", "Europe/Zurich", "America/New_York"])
def test_a_timestamp_reads_the_same_whatever_zone_the_machine_is_in(machine_zone: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """helper-77: nbgrader writes `%Z` stamps (`... CEST`) where a course sets Exchange.timezone, and dateutil read an
    abbreviation of the machine's own zone as that zone, else as no zone at all (UTC): under TZ=Europe/Zurich a
    stamp of 01:30 CEST was on time, under TZ=UTC 1 h 31 min late (a penalty of 1 point). A zone is now read by its
    key in the zone database only; an abbreviation no key names is an error that says what to write."""
    import time

    from autograder.deadlines import parse_time
    monkeypatch.setenv("TZ", machine_zone)
    time.tzset()
    try:
        read = {text: parse_time(text).isoformat() for text in (
            "2026-09-28 21:05:00.123456 UTC", "2026-09-28 21:05:00.123456 +0200", "2026-09-28T21:05:00+02:00",
            "2026-09-28 21:05:00 Europe/Zurich", "2026-07-01 12:00:00 EST", "2026-09-28 21:05:00")}
        assert read == {"2026-09-28 21:05:00.123456 UTC": "2026-09-28T21:05:00.123456+00:00",
                        "2026-09-28 21:05:00.123456 +0200": "2026-09-28T21:05:00.123456+02:00",
                        "2026-09-28T21:05:00+02:00": "2026-09-28T21:05:00+02:00",
                        "2026-09-28 21:05:00 Europe/Zurich": "2026-09-28T21:05:00+02:00",
                        "2026-07-01 12:00:00 EST": "2026-07-01T12:00:00-05:00",  # the database's EST, not New York's EDT
                        "2026-09-28 21:05:00": "2026-09-28T21:05:00"}
        for abbreviation in ("CEST", "EDT"):
            with pytest.raises(ValueError, match=rf"the zone '{abbreviation}' is an abbreviation .* write the time "
                                                 r"with its offset \(\+0200\) or in UTC"):
                parse_time(f"2026-09-22 01:30:00.000000 {abbreviation}")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
