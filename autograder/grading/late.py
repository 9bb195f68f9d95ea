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

Times are compared in UTC. A time written without a zone is UTC, as nbgrader reads its
timestamps (`nbgrader.utils.parse_utc`); course.yml's due dates are in `deadlines.timezone`.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import os
import stat
import zoneinfo
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from autograder.grading import class_record
from autograder.grading.student_files import SubmissionError, read_bounded

if TYPE_CHECKING:
    from autograder.config import Assignment, Course

DAY = 86400.0
HOUR = 3600.0
UTC = dt.timezone.utc


class DeadlineError(Exception):
    """An extensions file or a submission time cannot be read; the message says where."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LatePolicy(_Strict):
    """What a late submission loses. Fields are checked in order, so each message names its field."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    per: Literal["none", "day", "hour"] = Field(
        "none", description="none, or a deduction per started day or hour after the due date")
    deduction: float = Field(0.0, ge=0, description="deducted per started day (hour) late, in `unit`")
    unit: Literal["percent", "points"] = Field("percent", description="percent of the assignment's points, or points")
    cap: Optional[float] = Field(None, ge=0, description="the most a late submission loses, in `unit`")
    zero_after_days: Optional[float] = Field(None, gt=0, description="later than this many days: 0 points")
    grace_minutes: float = Field(0.0, ge=0, description="this close after the deadline counts as on time")

    @field_validator("deduction")
    @classmethod
    def _deduction_needs_per(cls, value: float, info: ValidationInfo) -> float:
        per = info.data.get("per")
        if per == "none" and value:
            raise ValueError("a deduction needs `per: day` or `per: hour` (`per: none` deducts nothing)")
        if per in ("day", "hour") and not value:
            raise ValueError(f"`per: {per}` needs a deduction greater than 0")
        return value

    @field_validator("unit")
    @classmethod
    def _percent_at_most_100(cls, value: str, info: ValidationInfo) -> str:
        if value == "percent" and info.data.get("deduction", 0) > 100:
            raise ValueError(f"percent, but the deduction is {info.data['deduction']:g}% (at most 100)")
        return value

    @field_validator("cap")
    @classmethod
    def _cap_fits(cls, value: Optional[float], info: ValidationInfo) -> Optional[float]:
        if value is None:
            return value
        if info.data.get("per") == "none":
            raise ValueError("a cap limits the deduction, and `per: none` deducts nothing")
        if info.data.get("unit") == "percent" and value > 100:
            raise ValueError(f"{value:g}% is more than the whole score (at most 100)")
        return value

    @property
    def active(self) -> bool:
        return self.per != "none" or self.zero_after_days is not None

    def _amount(self, value: float, max_score: float) -> float:
        return value / 100.0 * max_score if self.unit == "percent" else value

    def _unit_text(self, value: float, max_score: float) -> str:
        return f"{value:g}% of {max_score:g} points" if self.unit == "percent" else f"{value:g} points"

    def describe(self) -> str:
        """The policy in one line, for results files, feedback and the docs."""
        if not self.active:
            return "no late penalty"
        parts = []
        if self.per != "none":
            what = f"{self.deduction:g}%" if self.unit == "percent" else f"{self.deduction:g} points"
            parts.append(f"{what} per started {self.per} late"
                         + (f", at most {self.cap:g}{'%' if self.unit == 'percent' else ' points'}"
                            if self.cap is not None else ""))
        if self.zero_after_days is not None:
            parts.append(f"0 points when more than {self.zero_after_days:g} days late")
        if self.grace_minutes:
            parts.append(f"{self.grace_minutes:g} minutes' grace")
        return "; ".join(parts)

    def penalty(self, seconds_late: float, max_score: float, score: float) -> tuple[float, str]:
        """(points taken off, why) for a submission `seconds_late` after its due date that earned
        `score` of `max_score`. Never more than the score: a late submission does not go below 0."""
        score = max(0.0, score)
        if seconds_late <= self.grace_minutes * 60 or seconds_late <= 0:
            return 0.0, ""
        late = describe_duration(seconds_late)
        if self.zero_after_days is not None and seconds_late > self.zero_after_days * DAY:
            return round(score, 4), f"{late} late, more than {self.zero_after_days:g} days: 0 points"
        if self.per == "none":
            return 0.0, ""
        units = math.ceil(seconds_late / (DAY if self.per == "day" else HOUR) - 1e-9)
        amount = self._amount(self.deduction * units, max_score)
        why = f"{late} late: {units} started {self.per}{'s' if units != 1 else ''} × " \
              f"{self._unit_text(self.deduction, max_score)}"
        if self.cap is not None and amount > self._amount(self.cap, max_score):
            amount = self._amount(self.cap, max_score)
            why += f", capped at {self._unit_text(self.cap, max_score)}"
        points = min(round(amount, 4), score)
        why += f" = {round(amount, 4):g} points" + (f", of which the {score:g} earned" if amount > score else "")
        return points, why


def describe_duration(seconds: float) -> str:
    """'2 days 3 h', '56 days 45 min', '5 h 20 min', '12 min' (zero parts left out)."""
    minutes = round(seconds / 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = ([f"{days} day{'s' if days != 1 else ''}"] if days else []) + ([f"{hours} h"] if hours else []) \
        + ([f"{mins} min"] if mins else [])
    return " ".join(parts) if parts else ("1 min" if seconds > 0 else "0 min")


class Extension(_Strict):
    """One student's own due date for one assignment: `due`, or the course's plus days/hours."""

    assignment: str
    student: str
    due: Optional[Union[dt.datetime, dt.date]] = None
    days: float = Field(0.0, ge=0)
    hours: float = Field(0.0, ge=0)
    reason: str = ""

    @field_validator("due", mode="before")
    @classmethod
    def _parse_due(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                return None
            try:
                return dt.date.fromisoformat(value) if len(value) == 10 else parse_time(value, naive_ok=True)
            except ValueError:
                raise ValueError(f"not a date or a time: {value!r} (write 2026-10-01 or 2026-10-01 12:00)") from None
        return value

    @model_validator(mode="after")
    def _one_way(self) -> Extension:
        if self.due is None and not (self.days or self.hours):
            raise ValueError("give the student's own `due` date, or `days`/`hours` of extra time")
        if self.due is not None and (self.days or self.hours):
            raise ValueError("give either `due` or `days`/`hours`, not both")
        return self


class Deadlines(_Strict):
    """course.yml's `deadlines:` block."""

    timezone: str = "UTC"
    time: dt.time = dt.time(23, 59)
    late: LatePolicy = LatePolicy()
    extensions: tuple[Extension, ...] = ()
    extensions_file: Optional[str] = None

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r} (an IANA name such as Europe/Zurich or UTC)") from None
        return value

    @field_validator("time", mode="before")
    @classmethod
    def _time_of_day(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            # YAML 1.1 reads an unquoted 23:59 as the sexagesimal number 1439
            return dt.time(*divmod(value, 60)) if 0 <= value < 24 * 60 else value
        return value

    @field_validator("extensions_file")
    @classmethod
    def _resolve(cls, value: Optional[str], info: ValidationInfo) -> Optional[str]:
        if value and info.context and info.context.get("course_dir"):
            return str(Path(info.context["course_dir"]) / value)
        return value

    @property
    def zone(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)

    def local(self, when: dt.date | dt.datetime) -> dt.datetime:
        """A course.yml date (this time of that day) or time (naive: in the course's zone), in UTC."""
        if not isinstance(when, dt.datetime):
            when = dt.datetime.combine(when, self.time)
        if when.tzinfo is None:
            when = when.replace(tzinfo=self.zone)
        return when.astimezone(UTC)

    def show(self, when: Optional[dt.datetime]) -> str:
        """A time as the course reads it: ISO 8601 in the course's zone."""
        return when.astimezone(self.zone).isoformat(timespec="seconds") if when else ""

    def all_extensions(self, assignment_ids: Optional[set[str]] = None) -> dict[tuple[str, str], Extension]:
        """Every extension, from course.yml and the extensions file; one per student and assignment."""
        out: dict[tuple[str, str], Extension] = {}
        where: dict[tuple[str, str], str] = {}
        entries: list[tuple[str, Extension]] = [(f"deadlines.extensions[{i}]", e) for i, e in enumerate(self.extensions)]
        if self.extensions_file:
            entries += read_extensions(Path(self.extensions_file))
        for place, ext in entries:
            key = (ext.assignment, ext.student)
            if assignment_ids is not None and ext.assignment not in assignment_ids:
                raise DeadlineError(f"{place}: assignment {ext.assignment!r} is not in course.yml")
            if key in out:
                raise DeadlineError(f"{place}: a second extension for {ext.student} on {ext.assignment} "
                                    f"(the first: {where[key]}); keep one")
            out[key] = ext
            where[key] = place
        return out


def read_extensions(path: Path) -> list[tuple[str, Extension]]:
    """The extensions CSV: a header row with assignment, student (or student_id), and due or
    days/hours; reason optional. Returns (where, extension) per row."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DeadlineError(f"{path}: no such extensions file (deadlines.extensions_file in course.yml)") from None
    rows = list(csv.DictReader(text.splitlines()))
    out = []
    for i, row in enumerate(rows, start=2):
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        if "student_id" in clean and "student" not in clean:
            clean["student"] = clean.pop("student_id")
        fields = {k: v for k, v in clean.items() if k in Extension.model_fields and v != ""}
        unknown = sorted(k for k in clean if k not in Extension.model_fields and k)
        if unknown:
            raise DeadlineError(f"{path}: unknown column(s) {', '.join(unknown)}; expected assignment, student, "
                                f"due or days/hours, reason")
        try:
            out.append((f"{path.name} line {i}", Extension.model_validate(fields)))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors())
            raise DeadlineError(f"{path} line {i}: {problems}") from None
    return out


# --- times --------------------------------------------------------------------------------------

def parse_time(text: str, naive_ok: bool = True) -> dt.datetime:
    """A timestamp as nbgrader, Gradescope and LMS exports write it, as an aware datetime.

    Without a zone it is returned naive when `naive_ok` (the caller decides the zone), else UTC.
    nbgrader's `timestamp.txt` ('2026-09-28 21:05:00.123456 UTC' or '... +0200' or an ISO string)
    reads as nbgrader.utils.parse_utc reads it.
    """
    import dateutil.parser
    import dateutil.tz

    text = text.strip()
    parts = text.split(" ")
    try:
        if len(parts) == 3 and not parts[2].startswith(("+", "-")) and dateutil.tz.gettz(parts[2]) is not None:
            when = dateutil.parser.parse(" ".join(parts[:2]), tzinfos=None)
            when = when.replace(tzinfo=dateutil.tz.gettz(parts[2]))
        else:
            when = dateutil.parser.parse(text)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"not a time: {text!r} ({exc})") from None
    if when.tzinfo is None and not naive_ok:
        when = when.replace(tzinfo=UTC)
    return when


def utc(when: dt.datetime) -> dt.datetime:
    """Aware UTC; a naive time is taken as UTC (nbgrader's convention)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


@dataclass(frozen=True)
class SubmissionTime:
    """When a submission was made, and (Gradescope) the student's own due date, with where from."""

    submitted_at: dt.datetime  # aware, UTC
    source: str  # "nbgrader timestamp.txt", "Gradescope submission_metadata.json", ...
    due: Optional[dt.datetime] = None  # the platform's due date for this student (Gradescope), aware
    student: str = ""  # the platform's identity of the student, when it says


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


def written_time(text: str, deadlines: Deadlines, source: str) -> SubmissionTime:
    """A submission time a person wrote (--submitted-at, a --times file): without a zone it is in
    course.yml's deadlines.timezone, like the due dates. ValueError names what is wrong."""
    when = parse_time(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=deadlines.zone)
    return SubmissionTime(when.astimezone(UTC), source)


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
