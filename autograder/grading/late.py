"""Deadlines and late work: when an assignment is due for one student, when they submitted, and
what the course's late policy takes off for it.

course.yml's `deadlines:` block (validated on load, field by field):

    deadlines:
      timezone: Europe/Zurich   # due dates are read in this time zone
      time: "23:59"             # a due date (a day) means this time of that day
      late:
        per: day                # none | day | hour: a deduction per started day (hour) late
        deduction: 10           # per started day (hour)
        unit: percent           # percent (of the assignment's points) | points
        cap: 50                 # at most this much in all (same unit); omit: no cap
        zero_after_days: 7      # more than this many days late: 0; omit: any time is accepted
        grace_minutes: 5        # this close after the deadline counts as on time
      extensions:               # one student's own due date: `due` (a day or a time) or extra time
        - {assignment: 02_attention_scoring, student: carol, days: 2, reason: ill}
      extensions_file: extensions.csv   # the same as a CSV the instructor keeps:
                                        # assignment,student,due,days,hours,reason

One function turns lateness into points (`LatePolicy.penalty`): `course grade`, nbgrader (through
its LateSubmissionPlugin interface, integrations/nbgrader_bridge.py) and Gradescope all call it,
so the same submission time gives the same numbers everywhere. Submission times come from the
files the course tools leave (`submission_time`): nbgrader's `timestamp.txt`, `course collect`'s
record and a Gradescope export's `submission_metadata.yml`; on Gradescope, from its own
`/autograder/submission_metadata.json` (which also carries the student's own due date, extensions
included), which the Gradescope runner reads and passes on (`gradescope_runner_metadata`).

The `deadlines:` block itself, and the one rule for reading a time without a zone, are in
autograder/deadlines.py.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

# The course's deadlines and how a time is read live in autograder/deadlines.py (config holds them);
# they are named here too because every user of the late rules reads them as late.<name>.
from autograder.deadlines import (DAY, HOUR, UTC, DeadlineError, Deadlines, Extension, LatePolicy,  # noqa: F401
                                   SubmissionTime, describe_duration, parse_time, read_extensions, utc, written_time)
from autograder.grading import class_record
from autograder.grading.student_files import SubmissionError, read_bounded

if TYPE_CHECKING:
    from autograder.config import Assignment, Course

#: The most a submission-time file (timestamp.txt, Gradescope's submission_metadata.json) may hold.
METADATA_MAX_BYTES = 1 << 20


def _read_small(path: Path) -> str:
    """A metadata file's text, read as a student's file is (grading/student_files.read_bounded: no
    symbolic link, a regular file only, at most METADATA_MAX_BYTES), or a DeadlineError."""
    try:
        data, size = read_bounded(path, METADATA_MAX_BYTES, str(path))
    except SubmissionError as exc:
        raise DeadlineError(str(exc)) from None
    if size > METADATA_MAX_BYTES:
        raise DeadlineError(f"{path}: {size} bytes, over the {METADATA_MAX_BYTES} byte limit of a metadata file")
    return data.decode("utf-8", errors="replace")


def _regular_file(path: Path) -> bool:
    """Whether `path` itself (lstat: not a symbolic link's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_timestamp_txt(path: Path) -> SubmissionTime:
    """nbgrader's timestamp.txt, read as nbgrader reads it: nbgrader writes UTC without a zone, so a
    time without one is UTC (times written by hand belong in a --times file, in the course's zone)."""
    try:
        return SubmissionTime(utc(parse_time(_read_small(path))), "nbgrader timestamp.txt")
    except (ValueError, OverflowError) as exc:
        raise DeadlineError(f"{path}: {exc}") from None


def read_gradescope_metadata(path: Path) -> SubmissionTime:
    """Gradescope's /autograder/submission_metadata.json: `created_at`, and the due date of the
    submitter (`users[].assignment.due_date`, extensions included), else the assignment's.

    Read only where Gradescope writes it, by the Gradescope runner (integrations/gradescope.py,
    `gradescope_runner_metadata`), never found from a submitted file's folder: a student's upload
    can hold a file of that name. Read bounded (METADATA_MAX_BYTES); anything unreadable, nested too
    deep or not of Gradescope's shape is a DeadlineError."""
    try:
        meta = json.loads(_read_small(path))
        created = utc(parse_time(str(meta["created_at"])))
        dues = []
        for user in meta.get("users") or []:
            own = (user.get("assignment") or {}).get("due_date") if isinstance(user, dict) else None
            if own:
                dues.append(utc(parse_time(str(own))))
        if not dues and (meta.get("assignment") or {}).get("due_date"):
            dues.append(utc(parse_time(str(meta["assignment"]["due_date"]))))
        users = [u for u in meta.get("users") or [] if isinstance(u, dict)]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise DeadlineError(f"{path}: no readable submission time (created_at): "
                            f"{type(exc).__name__}: {str(exc)[:200]}") from None
    student = ""
    if users:
        first = users[0]
        student = str(first.get("sid") or first.get("email") or first.get("id") or "")
    # A group's submission is due when the latest of its members' own due dates is.
    return SubmissionTime(created, "Gradescope submission_metadata.json", max(dues) if dues else None, student)


def gradescope_runner_metadata(root: Path) -> Optional[SubmissionTime]:
    """What Gradescope says of the submission it runs the autograder for: its own
    `<root>/submission_metadata.json` (root: /autograder, or the runner's GRADESCOPE_ROOT), beside
    `<root>/submission/` and never inside it; None when there is none (a run outside Gradescope)."""
    path = root / "submission_metadata.json"
    if not os.path.lexists(path):
        return None
    return read_gradescope_metadata(path)


def submission_time(path: Path, assignment_id: str, stop: Optional[Path] = None) -> Optional[SubmissionTime]:
    """The submission time the course tools left beside a submitted file: what `course collect`
    recorded for the file's folder (in the record at the class folder's root, class_record.COLLECTED),
    or a `timestamp.txt` (in the file's folder or a parent up to `stop`) in nbgrader's
    `submitted/<student>/<assignment_id>/`, where nbgrader writes it. Nothing else in a student's
    folder is read: it could be their upload. Gradescope's metadata is not looked for here (a
    `submission_metadata.json` found from the file's folder could be the student's own upload): the
    Gradescope runner reads Gradescope's (gradescope_runner_metadata) and passes it on."""
    folder = path if path.is_dir() else path.parent
    # The record at the class folder's root, for a student's own folder: with `stop` (a student's
    # folder, or the class folder), never a record inside it (a student could have uploaded one).
    own = stop is None or folder == stop
    record = class_record.collected_record(folder, None if path.is_dir() else path.name) if own else {}
    if record:
        when = class_record.collected_time(record)
        return SubmissionTime(when, f"course collect ({record.get('lms')})") if when is not None else None
    # nbgrader's layout: the notebook directly in <student>/<assignment>/, beside its timestamp.txt
    # (with `stop`, the student's folder, exactly one level below it: a deeper one is the student's).
    # A notebook the student moved deeper into <student>/<assignment>/ still has nbgrader's time (a
    # timestamp.txt of their own down there is never read).
    nbgrader = stop / assignment_id if stop is not None else folder
    if nbgrader.name == assignment_id and (folder == nbgrader or nbgrader in folder.parents) \
            and _regular_file(nbgrader / "timestamp.txt"):
        return read_timestamp_txt(nbgrader / "timestamp.txt")
    return None


def read_times_csv(path: Path, deadlines: Deadlines) -> dict[str, SubmissionTime]:
    """A --times file: a CSV with the columns `student` and `submitted_at` (more are ignored), one
    row per student, each time as `written_time` reads it. DeadlineError names the file and line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeadlineError(f"{path}: cannot be read ({exc})") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("student", "submitted_at") if c not in (reader.fieldnames or [])]
    if missing:
        raise DeadlineError(f"{path}: no {' or '.join(missing)} column (the header must be student,submitted_at)")
    out: dict[str, SubmissionTime] = {}
    for row in reader:
        line = reader.line_num
        student = (row.get("student") or "").strip()
        if not student:
            raise DeadlineError(f"{path}: line {line}: student: empty")
        if student in out:
            raise DeadlineError(f"{path}: line {line}: student: {student!r} has a time already")
        try:
            out[student] = written_time(row.get("submitted_at") or "", deadlines, f"{path.name} line {line}")
        except ValueError as exc:
            raise DeadlineError(f"{path}: line {line}: submitted_at: {exc}") from None
    return out


def recorded_time(record: dict[str, Any]) -> Optional[SubmissionTime]:
    """The time of a class record (class_record.COLLECTED), as a SubmissionTime, when the LMS gave one."""
    when = class_record.collected_time(record)
    return SubmissionTime(when, f"course collect ({record.get('lms')})") if when is not None else None


# --- a student's deadline -----------------------------------------------------------------------

@dataclass(frozen=True)
class Due:
    when: dt.datetime  # aware, UTC
    source: str  # "course.yml", "extension (course.yml: ill)", "Gradescope"


def due_for(course: Course, assignment: Assignment, student: str = "",
            platform_due: Optional[dt.datetime] = None) -> Optional[Due]:
    """When `assignment` is due for `student`: the platform's own due date for them when it gives
    one (Gradescope: extensions granted there included), else course.yml's with their extension."""
    if platform_due is not None:
        return Due(utc(platform_due), "Gradescope (the student's own due date)")
    deadlines = course.deadlines
    if assignment.due is None:
        return None
    base = deadlines.local(assignment.due)
    ext = deadlines.all_extensions().get((assignment.id, student)) if student else None
    if ext is None:
        return Due(base, "course.yml")
    why = f"extension{': ' + ext.reason if ext.reason else ''}"
    if ext.due is not None:
        return Due(deadlines.local(ext.due), why)
    return Due(base + dt.timedelta(days=ext.days, hours=ext.hours), why)


@dataclass(frozen=True)
class Release:
    """When material derived from reference code may reach a student: after `when` (aware, UTC);
    None: never by date (the assignment has no due date)."""

    when: Optional[dt.datetime]
    source: str
    student: Optional[str] = None  # whom it was asked for (None: the class)

    def passed(self, now: Optional[dt.datetime] = None) -> bool:
        """Whether `now` (aware; default: this instant) is after the release instant."""
        return self.when is not None and utc(now or dt.datetime.now(UTC)) > self.when


def reference_release(course: Course, assignment: Assignment, student: Optional[str] = None,
                      platform_due: Optional[dt.datetime] = None) -> Release:
    """When material derived from `assignment`'s reference code (the feedback of a child that held
    it, solutions, a support module that contains it) may reach `student`: after the LATEST due
    instant that applies to them (course.yml's, their extension, the platform's own due date for
    them), plus the grace period, during which a submission still counts as on time.

    `student=None` is the class-wide rule (a release for everyone, or a submission whose student
    is not known): the latest such instant of any student of the assignment. The one home of this
    rule: every withholding of feedback and every release gate asks it."""
    deadlines = course.deadlines
    if student is None:
        students = [s for (a, s) in deadlines.all_extensions() if a == assignment.id]
    else:
        students = [student]
    candidates = [due_for(course, assignment), *(due_for(course, assignment, s) for s in students),
                  due_for(course, assignment, platform_due=platform_due) if platform_due else None]
    dues = [d for d in candidates if d is not None]
    if not dues:
        return Release(None, f"{assignment.id} has no due date in course.yml", student)
    latest = max(dues, key=lambda d: d.when)
    grace = deadlines.late.grace_minutes
    return Release(latest.when + dt.timedelta(minutes=grace),
                   latest.source + (f", plus {grace:g} minutes' grace" if grace else ""), student)


@dataclass(frozen=True)
class Lateness:
    """How late one submission was and what it costs, as recorded in results and grades.csv."""

    submitted_at: Optional[dt.datetime]
    due: Optional[Due]
    seconds_late: float
    penalty: float
    explanation: str
    policy: str
    time_source: str = ""

    def to_json(self, deadlines: Deadlines) -> dict[str, Any]:
        return {"submitted_at": deadlines.show(self.submitted_at), "time_source": self.time_source,
                "due": deadlines.show(self.due.when) if self.due else "",
                "due_source": self.due.source if self.due else "",
                "seconds_late": round(self.seconds_late, 3), "penalty": self.penalty,
                "explanation": self.explanation, "policy": self.policy}


def assess(course: Course, assignment: Assignment, student: str, when: Optional[SubmissionTime],
           score: float) -> Lateness:
    """Lateness and penalty of a submission that earned `score` (after overrides)."""
    policy = course.deadlines.late
    due = due_for(course, assignment, student, when.due if when else None)
    if when is None:
        return Lateness(None, due, 0.0, 0.0, "no submission time recorded: no late penalty", policy.describe())
    if due is None:
        return Lateness(when.submitted_at, None, 0.0, 0.0, "no due date: no late penalty", policy.describe(),
                        when.source)
    seconds = max(0.0, (when.submitted_at - due.when).total_seconds())
    points, why = policy.penalty(seconds, assignment.max_score, score)
    if seconds > 0 and not why:
        why = f"{describe_duration(seconds)} late" + (" (within the grace period)" if policy.active else "")
    return Lateness(when.submitted_at, due, seconds, points, why, policy.describe(), when.source)
