"""course.yml's `deadlines:` block: due dates' zone and time of day, the late policy, extensions,
and how a written time is read. The course description (config.py) holds it; grading/late.py
applies it to submissions. It imports nothing of the kit, so config never imports grading.

One rule for a time without a zone: one a person writes (course.yml's due dates and extensions,
`--submitted-at`, a `--times` file: `written_time`) is in `deadlines.timezone`; one a tool writes
follows the tool (nbgrader's timestamp.txt is UTC, as `nbgrader.utils.parse_utc` reads it).
Times are compared in UTC.
"""
from __future__ import annotations

import csv
import datetime as dt
import math
import zoneinfo
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

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
    reads as nbgrader.utils.parse_utc reads it. A zone named in the text is read the same on every machine
    (`zone_named`): never as the machine's own zone, whatever TZ says.
    """
    import dateutil.parser

    text = text.strip()
    parts = text.split(" ")
    try:
        zone = zone_named(parts[2]) if len(parts) == 3 and not parts[2].startswith(("+", "-")) else None
        if zone is not None:  # '... UTC', '... Europe/Zurich'
            when = dateutil.parser.parse(" ".join(parts[:2])).replace(tzinfo=zone)
        else:
            when = dateutil.parser.parse(text, tzinfos=_tzinfo)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"not a time: {text!r} ({exc})") from None
    if when.tzinfo is None and not naive_ok:
        when = when.replace(tzinfo=UTC)
    return when


def zone_named(name: str) -> Optional[dt.tzinfo]:
    """The zone a timestamp names, by its key in the IANA database (`UTC`, `Europe/Zurich`, `EST`, `CET`), the same
    on every machine; None where no key is that name (an abbreviation of a zone with daylight saving, `CEST`,
    `EDT`). dateutil alone reads an abbreviation of the machine's own zone as that zone (`CEST` under
    TZ=Europe/Zurich, but no zone at all, so UTC, under TZ=UTC: a late penalty of 1 point or none, helper-77)."""
    if name.upper() in ("UTC", "GMT", "Z", "UT"):
        return UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _tzinfo(name: Optional[str], offset: Optional[int]) -> Optional[dt.tzinfo]:
    """dateutil's `tzinfos`: consulted for every zone a text names, before dateutil's own reading of the machine's
    zone (`zone_named`); a numeric offset as written; a name that names no zone anywhere is an error, not a guess."""
    zone = zone_named(name) if name else None
    if zone is not None:
        return zone
    if offset is not None:
        return dt.timezone(dt.timedelta(seconds=offset))
    if name:
        raise ValueError(f"the zone {name!r} is an abbreviation that names no zone the same on every machine: "
                         "write the time with its offset (+0200) or in UTC")
    return None


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


def written_time(text: str, deadlines: Deadlines, source: str) -> SubmissionTime:
    """A submission time a person wrote (--submitted-at, a --times file): without a zone it is in
    course.yml's deadlines.timezone, like the due dates. ValueError names what is wrong."""
    when = parse_time(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=deadlines.zone)
    return SubmissionTime(when.astimezone(UTC), source)
