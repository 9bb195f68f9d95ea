"""nbgrader autograde with the course's grader: the `SandboxGrader` preprocessor.

nbgrader_config.py puts it in place of nbgrader's Execute in `Autograde.autograde_preprocessors`.
For each submitted notebook it

1. grades the submitted file (submitted/<student>/<assignment>/<notebook>.ipynb, exactly what
   `course grade` would grade) with `grading.session.grade_file`: student code runs only in the sandbox,
   never in this process or in a Jupyter kernel;
2. writes into each graded cell `test_<component>` the component's feedback (per test: passed or
   the failure message with the smallest failing input; never test source) as a stdout stream,
   and its partial score as the cell's `execute_result`, which is how nbgrader's SaveAutoGrades
   reads a partial grade (`utils.determine_grade`);
3. puts back graded cells the student deleted (from the gradebook's source cells), so every
   component's score lands in the gradebook however the student edited, split or reordered cells.

Nothing else of the notebook is executed; its other cells keep no outputs (ClearOutput ran).
Before grading it writes course.yml's due date and the student's extension into the gradebook
(`sync_deadline`), so that nbgrader's AssignLatePenalties, later in the same pipeline, sees the
submission's lateness and asks `CourseLatePenalty` (nbgrader's LateSubmissionPlugin interface) for
the course's penalty: grading/late.py computes it, as it does for `course grade` and Gradescope.

`DeduplicateIds` replaces nbgrader's preprocessor of that name in the sanitizing step: see there.
`LmsExtractor` and `LmsCollector` are zip_collect's plugins: `lms.collect` files the download, as
for `course collect`, and the collector reads only what it recorded;
`GradesExport` is `nbgrader export`'s plugin: the kit's grades.csv layout from the gradebook, with
overrides and late penalties, and a loud failure for every student whose submission was not
autograded. The feedback page's template and filters are in `feedback/` (nbgrader_config.py).
"""
from __future__ import annotations

import atexit
import datetime as dt
import tempfile
from pathlib import Path
from typing import Any, Optional

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader import utils as nbutils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin, ExtractorPlugin, FileNameCollectorPlugin, LateSubmissionPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Enum, Unicode

from autograder import config as config_mod
from autograder.grading import class_record
from autograder.grading import late as late_mod
from autograder.grading.results import graded_with
from autograder.integrations import lms
from autograder.sandbox import affinity
from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import _

_ZYGOTES: dict[tuple[str, bool], Any] = {}


def zygote(mode: str, optimizers: bool = True) -> Any:
    """One warm sandbox per process (nbgrader autogrades the submissions one after another), with
    torch's optimizers built up front if the assignment trains a model (session.trains)."""
    from autograder.sandbox import bwrap
    from autograder.sandbox.forkserver import Zygote

    if (mode, optimizers) not in _ZYGOTES:
        _ZYGOTES[mode, optimizers] = Zygote(mode, launched=bwrap.launch(mode, warm_optimizers=optimizers))
        atexit.register(_ZYGOTES[mode, optimizers].stop)
    z = _ZYGOTES[mode, optimizers]
    if not z.alive:
        z.start()  # a sandbox that cannot start fails the autograde loudly, rather than scoring 0
    return z


def component_feedback(report: dict[str, Any], component: str, notes: list[str]) -> str:
    """The text of one component's graded cell, from the Gradescope-format results."""
    comp = report["extra_data"]["components"][component]
    tests = [t for t in report["tests"] if t["extra_data"]["component"] == component]
    passed = sum(t["status"] == "passed" for t in tests)
    lines = [_("{component}: {score} / {points} points ({passed} of {total} tests passed; graded by the course's "
               "autograder with the public and hidden tests)").format(
        component=component, score=f"{comp['score']:g}", points=f"{comp['max_score']:g}", passed=passed,
        total=len(tests))]
    if comp.get("dependencies"):
        lines.append("  " + _("graded with {dependencies}").format(dependencies=graded_with(comp["dependencies"])))
    for t in tests:
        name = t["name"].split(": ", 1)[-1]
        lines.append(f"  [{'PASS' if t['status'] == 'passed' else 'FAIL'}] {name}")
        if t["status"] != "passed" and t.get("output"):
            lines += ["        " + line for line in t["output"].splitlines()]
    if notes and comp["score"] < comp["max_score"]:
        lines.append("  " + _("While loading your code:"))
        lines += ["    " + n.splitlines()[-1] for n in notes if n]
    return "\n".join(lines) + "\n"


def graded_outputs(text: str, score: float) -> list[Any]:
    """A stdout stream with the feedback, then the score as the result nbgrader reads (partial credit)."""
    return [nbformat.v4.new_output("stream", name="stdout", text=text),
            nbformat.v4.new_output("execute_result", data={"text/plain": repr(float(score))},
                                   execution_count=None)]


class SubmissionExporter(NotebookExporter):
    """nbgrader autograde's exporter (Autograde.exporter_class): a submitted file that is not a notebook
    (cut short, not JSON) becomes an empty notebook instead of a traceback that fails the student's
    autograde; SandboxGrader then grades the file itself (status unreadable: every graded cell it puts
    back gets 0 and the reason) and autograde carries on."""

    def from_file(self, file_stream: Any, resources: Any = None, **kw: Any) -> Any:
        data = file_stream.read()
        try:
            nb = nbformat.reads(data, as_version=4)
        except Exception as exc:  # nbformat's NotJSONError, a missing key, a wrong type...
            self.log.warning("not a readable notebook (%s; the grader says why): its graded cells get 0 "
                             "and the reason", type(exc).__name__)  # nbformat's message quotes the file
            nb = nbformat.v4.new_notebook()
        return self.from_notebook_node(nb, resources, **kw)


#: The flags of nbgrader's cell metadata that make a cell nbgrader's (its kind, as the release set it).
CELL_KINDS = ("grade", "solution", "task", "locked")


def _is_nbgraders(meta: dict[str, Any]) -> bool:
    return any(meta.get(k) for k in CELL_KINDS)


class DeduplicateIds(NbGraderPreprocessor):
    """nbgrader's DeduplicateIds, fixed; and a cell's nbgrader metadata is the instructor's, never the student's.

    nbgrader 0.9's version leaves `"nbgrader": {}` on a duplicated cell (JupyterLab copies the
    metadata when a cell is split or copied), which CheckCellMetadata then rejects as an outdated
    schema: the whole submission fails to autograde. Here a duplicate (all but the last, as in
    nbgrader) or a cell whose nbgrader metadata does not validate loses its nbgrader metadata: it
    is then ordinary code for the grader, and SandboxGrader puts missing graded cells back.

    A cell that carries a grade id of the released notebook gets that cell's kind back from the
    gradebook (grade, solution, task, locked, points), and one with an id the release never had
    loses its nbgrader metadata. OverwriteCells restores `locked`, `points` and the checksum but not
    `grade` or `solution`, which the checksum covers: a test cell a student flagged `solution: true`,
    or a plain cell given a test's id, raised "Inconsistent checksums", so that the student's autograde
    failed and `nbgrader export` failed for the class (helper-62), while `course grade`, which reads
    only the code, gave full marks.
    """

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        from nbgrader.nbgraderformat import MetadataValidator

        released = self._released_kinds(resources)
        validator = MetadataValidator()
        seen: set[str] = set()
        for cell in reversed(nb.cells):
            if "nbgrader" not in cell.metadata:
                continue
            try:
                validator.upgrade_cell_metadata(cell)
                if released is not None:
                    self._as_released(cell, released)
                validator.validate_cell(cell)
            except Exception as exc:
                self.log.warning("dropping invalid nbgrader metadata of a cell: %s", str(exc).splitlines()[0])
                cell.metadata.pop("nbgrader", None)
                continue
            meta = cell.metadata.get("nbgrader") or {}
            if not _is_nbgraders(meta):
                continue
            if meta.get("grade_id") in seen:
                self.log.warning("Cell with id '%s' exists multiple times!", meta.get("grade_id"))
                cell.metadata.pop("nbgrader", None)
            else:
                seen.add(str(meta.get("grade_id")))
        return nb, resources

    @staticmethod
    def _released_kinds(resources: dict[str, Any]) -> Optional[dict[str, dict[str, Any]]]:
        """{grade id: the nbgrader metadata its released cell has} from the gradebook, or None outside
        nbgrader's pipeline (no gradebook in `resources`)."""
        info = resources.get("nbgrader") or {}
        if not info.get("db_url"):
            return None
        with Gradebook(info["db_url"]) as gb:
            try:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return None
            graded = {c.name: float(c.max_score) for c in notebook.grade_cells}
            solutions = {c.name for c in notebook.solution_cells}
            tasks = {c.name for c in notebook.task_cells}
            return {c.name: {"grade": c.name in graded, "solution": c.name in solutions, "task": c.name in tasks,
                             "locked": bool(c.locked), "points": graded.get(c.name)} for c in notebook.source_cells}

    def _as_released(self, cell: Any, released: dict[str, dict[str, Any]]) -> None:
        """The cell's nbgrader metadata as the release made it: its kind from the released cell of its grade
        id; none for an id the release never had."""
        meta = cell.metadata["nbgrader"]
        kind = released.get(str(meta.get("grade_id")))
        if kind is None:
            if _is_nbgraders(meta):
                self.log.warning("dropping the nbgrader metadata of a cell whose id '%s' the release never had",
                                 meta.get("grade_id"))
                cell.metadata.pop("nbgrader")
            return
        changed = [k for k in CELL_KINDS if bool(meta.get(k)) != kind[k]]
        if changed:
            self.log.warning("cell '%s': %s restored as released", meta.get("grade_id"), ", ".join(changed))
        meta.update({k: kind[k] for k in CELL_KINDS})
        if kind["grade"]:
            meta["points"] = kind["points"]
        else:
            meta.pop("points", None)


class SandboxGrader(NbGraderPreprocessor):
    """Grade the submission with the course's sandboxed grader and put the scores in the graded cells."""

    sandbox = Enum(["auto", "bwrap", "process"], default_value="auto",
                   help="The grader's isolation: bubblewrap, or plain processes.").tag(config=True)
    course_file = Unicode("", help="course.yml to grade with (default: the kit's).").tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        from autograder.grading.results import results_json
        from autograder.grading.session import grade_file, trains

        info = resources["nbgrader"]
        course = config_mod.load(self.course_file) if self.course_file else config_mod.default()
        assignment = course.assignment(info["assignment"])
        with Gradebook(info["db_url"]) as gb:
            sync_deadline(gb, course, assignment, info["student"], self.log)
        path = self._submitted_file(info)
        with tempfile.TemporaryDirectory(prefix="course-nbgrader-") as tmp:
            if path is None:  # not found where nbgrader keeps it: grade the notebook as nbgrader read it
                self.log.warning("grading the sanitized copy of %s/%s", info["student"], info["notebook"])
                path = Path(tmp) / f"{info['notebook']}.ipynb"
                nbformat.write(nb, str(path))
            sandbox = zygote(self.sandbox, trains(assignment.id))
            with affinity.on_one_cpu():  # one notebook at a time: the grader and its children on one CPU
                result = grade_file(sandbox, assignment.id, path, course=course, student=info["student"])
        report = results_json(result)
        self.log.info("course grader: %s %s: %g / %g", info["student"], assignment.id,
                      result.score, result.max_score)
        notes = {c.name: c.notes for c in result.components}
        with Gradebook(info["db_url"]) as gb, i18n.using(course.language):
            self._fill(nb, info, assignment, report, notes, gb)
        return nb, resources

    def _submitted_file(self, info: dict[str, Any]) -> Optional[Path]:
        coursedir = None
        obj = self.parent
        while obj is not None and coursedir is None:
            coursedir = getattr(obj, "coursedir", None)
            obj = getattr(obj, "parent", None)
        if coursedir is None:
            from nbgrader.coursedir import CourseDirectory
            coursedir = CourseDirectory(config=self.config)
        folder = coursedir.format_path(coursedir.submitted_directory, info["student"], info["assignment"])
        path = Path(folder) / f"{info['notebook']}.ipynb"
        return path if path.is_file() else None

    def _fill(self, nb: Any, info: dict[str, Any], assignment: config_mod.Assignment,
              report: dict[str, Any], notes: dict[str, list[str]], gb: Gradebook) -> None:
        wanted = {f"test_{c.name}": c for c in assignment.components}
        found: set[str] = set()
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if not (nbutils.is_grade(cell) and cell.cell_type == "code" and not nbutils.is_solution(cell)):
                continue  # manually graded answers stay with the formgrader
            grade_id = meta.get("grade_id")
            comp = wanted.get(grade_id)
            if comp is None:
                raise ValueError(f"graded cell {grade_id!r} of {info['notebook']} is not test_<component> of a "
                                 f"component of {assignment.id} in course.yml; the course's grader cannot score it")
            if float(meta.get("points", 0)) != float(comp.points):
                raise ValueError(f"graded cell {grade_id} has {meta.get('points')} points, course.yml "
                                 f"{comp.points:g}: regenerate the assignment (`course release`)")
            self._set(cell, report, comp.name, notes.get(comp.name, []), said=bool(found))
            found.add(grade_id)
        for grade_id, comp in wanted.items():
            if grade_id not in found:
                cell = self._restored_cell(gb, grade_id, info)
                self._set(cell, report, comp.name, notes.get(comp.name, []), said=bool(found))
                found.add(grade_id)
                nb.cells.insert(self._insert_at(nb, comp.name), cell)
                self.log.warning("%s: graded cell %s was missing; put it back", info["student"], grade_id)

    @staticmethod
    def _set(cell: Any, report: dict[str, Any], component: str, notes: list[str], said: bool = False) -> None:
        """Put the component's feedback and score into its graded cell; of an unreadable file, the
        reason goes into the first graded cell only (`said`: an earlier cell already has it)."""
        if report["extra_data"].get("status") == "unreadable":  # read by nbgrader, over the grader's limits
            text = _("{component}: 0 points (your submission could not be read: see the first graded cell)").format(
                component=component) if said else _("{component}: 0 points: {output}").format(
                component=component, output=report["output"])
            cell.outputs = graded_outputs(text + "\n", 0.0)
            cell.execution_count = None
            return
        score = report["extra_data"]["components"][component]["score"]
        cell.outputs = graded_outputs(component_feedback(report, component, notes), score)
        cell.execution_count = None

    @staticmethod
    def _restored_cell(gb: Gradebook, grade_id: str, info: dict[str, Any]) -> Any:
        try:
            source = gb.find_source_cell(grade_id, info["notebook"], info["assignment"])
            graded = gb.find_graded_cell(grade_id, info["notebook"], info["assignment"])
        except MissingEntry:
            raise ValueError(f"the gradebook has no cell {grade_id} for {info['assignment']}: run "
                             f"`course release` (nbgrader generate_assignment) first") from None
        cell = nbformat.v4.new_code_cell(
            "# " + _("This graded cell was missing from the submitted notebook; the grader put it back.") + "\n"
            f"{source.source}")
        cell.id = f"restored-{grade_id}"[:64]
        cell.metadata.update({"deletable": False, "editable": False, "nbgrader": {
            "grade": True, "grade_id": grade_id, "locked": True, "points": float(graded.max_score),
            "schema_version": 3, "solution": False, "task": False, "checksum": source.checksum}})
        return cell

    @staticmethod
    def _insert_at(nb: Any, component: str) -> int:
        """After the component's solution or check cell if the student kept one, else at the end."""
        at = len(nb.cells)
        for i, cell in enumerate(nb.cells):
            if cell.metadata.get("nbgrader", {}).get("grade_id") in (component, f"check_{component}"):
                at = i + 1
        return at


# --- deadlines and late penalties ------------------------------------------------------------------

def course_of(cfg: Any) -> config_mod.Course:
    """The course file nbgrader runs with: c.SandboxGrader.course_file, else the kit's course.yml."""
    path = cfg.SandboxGrader.get("course_file", "") if "SandboxGrader" in cfg else ""
    return config_mod.load(path) if path else config_mod.default()


def naive_utc(when: dt.datetime) -> dt.datetime:
    """How nbgrader's gradebook stores times (utils.parse_utc)."""
    return when.astimezone(dt.timezone.utc).replace(tzinfo=None)


def set_due_date(gb: Gradebook, course: config_mod.Course, assignment: config_mod.Assignment) -> Optional[dt.datetime]:
    """The assignment's due date from course.yml into the gradebook (None: no due date)."""
    due = late_mod.due_for(course, assignment)
    gb.update_or_create_assignment(assignment.id, duedate=naive_utc(due.when) if due else None)
    return due.when if due else None


def sync_deadline(gb: Gradebook, course: config_mod.Course, assignment: config_mod.Assignment, student: str,
                  log: Any = None) -> None:
    """course.yml's due date and `student`'s extension into the gradebook, which computes the
    submission's lateness (SubmittedAssignment.total_seconds_late) from them."""
    base = set_due_date(gb, course, assignment)
    own = late_mod.due_for(course, assignment, student)
    try:
        gb.find_submission(assignment.id, student)
    except MissingEntry:
        return
    minutes = (own.when - base).total_seconds() / 60 if own and base else 0.0
    gb.grant_extension(assignment.id, student, minutes=minutes)  # 0 removes an extension no longer granted
    if log is not None and minutes:
        log.info("%s: %s is due %s (%s)", assignment.id, student, course.deadlines.show(own.when if own else None),
                 own.source if own else "")


class CourseLatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission interface with the course's policy (course.yml deadlines.late):
    the penalty `course grade` and Gradescope give for the same lateness and score."""

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> Optional[float]:
        course = course_of(self.config)
        assignment = course.assignment(self.parent.assignment_id)
        points, why = course.deadlines.late.penalty(total_seconds_late, assignment.max_score, score)
        self.log.warning("%s %s: %s", assignment.id, student_id, why or "no late penalty (within the grace period)")
        return points


# --- zip_collect ------------------------------------------------------------------------

class LmsExtractor(ExtractorPlugin):
    """nbgrader zip_collect's extractor: what the LMS gave (archive/: its zips, or its files) is filed
    by `lms.collect`, the rule of `course collect` (the LMS's layout read only where the LMS writes
    it, a student's own files and zips the uploader's whatever they are called, reading bounded by
    CollectLimits, safe student ids), as extracted/<student>/<assignment>.ipynb with who and when
    in extracted/'s lms.COLLECTED. nbgrader's own extractor unpacks every archive, nested ones
    included, without a cap, under names the students chose."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        app = self.parent
        collector = getattr(app, "collector_plugin_inst", None)
        student_id = collector.student_id if isinstance(collector, LmsCollector) else "name"
        try:
            filed, skipped = lms.collect(Path(archive_path), app.coursedir.assignment_id, Path(extracted_path),
                                         student_id, lms.CollectLimits.of(course_of(app.config).limits.collect))
        except lms.LmsError as exc:
            app.fail(str(exc))
        for line in skipped:
            self.log.warning("skipped %s", line)
        for f in sorted(filed, key=lambda f: f.student):
            self.log.info("%s <- %s (%s%s)", f.student, f.source, f.lms.lms, ", LATE mark" if f.lms.late else "")
        # nbgrader's collection walks every file of extracted/, the record too, and counts what the
        # collector does not take as skipped: say which one that is before nbgrader counts it.
        self.log.info("%d submission(s) filed; %s beside them is the record of who and when: nbgrader counts it "
                      "as 1 of the files skipped", len(filed), class_record.COLLECTED)


class LmsCollector(FileNameCollectorPlugin):
    """nbgrader zip_collect's collector for what `LmsExtractor` filed: a file is collected only
    where extracted/'s lms.COLLECTED lists it, as the student it names, with the LMS's time
    (Gradescope's), which becomes nbgrader's timestamp.txt. Nothing is read from a file's name."""

    student_id = Enum(["name", "user_id"], default_value="name",
                      help="Canvas: the student id is the name in the file name, or the Canvas user id"
                      ).tag(config=True)

    def collect(self, submitted_file: str) -> Optional[dict]:
        app = self.parent
        root = Path(app._format_collect_path(app.extracted_directory))
        records = lms.collected(root)
        if not records and not (root / lms.COLLECTED).is_file():
            app.fail(f"{root} was not filed by LmsExtractor: set c.ZipCollectApp.extractor_plugin = "
                     f"'autograder.integrations.nbgrader_bridge.LmsExtractor' (nbgrader_config.py)")
        path = Path(submitted_file)
        rel = path.relative_to(root) if path.is_relative_to(root) else None
        record = records.get(rel.parts[0], {}) if rel is not None and len(rel.parts) == 2 else {}
        if rel is None or record.get("file") != rel.name:
            self.log.debug("not filed by LmsExtractor: %s", submitted_file)
            return None
        if path.suffix not in self.valid_ext:
            self.log.warning("%s submitted %s, not a notebook: not collected", record["student"], record["file"])
            return None
        info: dict[str, Any] = {"student_id": record["student"], "file_id": record["file"]}
        when = class_record.collected_time(record)
        if when is not None:
            info["timestamp"] = when.isoformat()
        return info


# --- nbgrader export ---------------------------------------------------------------------------

def gradebook_rows(db_url: str, course: config_mod.Course, assignment: config_mod.Assignment,
                   submitted: Optional[Path] = None, students: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """One finalized results dict per student of the gradebook (name: the student id), in the
    layout `course grade` writes: the autograded component scores, the formgrader's manual
    scores and the overrides file as overrides (with who and why), the late penalty from the
    gradebook's submission time. `submitted`: nbgrader's submitted/ folder, to tell a student
    whose files were never autograded (a misnamed notebook) from one who submitted nothing."""
    from autograder.grading import final, overrides

    every = overrides.load(course)
    rows = []
    with Gradebook(db_url) as gb:
        try:
            gb.find_assignment(assignment.id)
        except MissingEntry:
            return []
        for student in sorted(s.id for s in gb.students):
            if students and student not in students:
                continue
            res: dict[str, Any] = {"score": 0.0, "max_score": assignment.max_score, "tests": [], "output": "",
                                   "extra_data": {}}
            extra = res["extra_data"]
            files = sorted(p.relative_to(submitted).as_posix()
                           for p in (submitted / student / assignment.id).glob("*.ipynb")) if submitted else []
            when = None
            manual: list[overrides.Override] = []
            try:
                sub = gb.find_submission(assignment.id, student)
            except MissingEntry:
                sub = None
            if sub is None:
                extra["status"] = "NOT AUTOGRADED" if files else "no submission"
                extra["problem"] = (f"{', '.join(files)} is in submitted/ but the gradebook has no grade: run nbgrader "
                                    f"autograde {assignment.id}" if files else "nothing submitted")
            else:
                comps: dict[str, dict[str, Any]] = {}
                missing = []
                for nb in sub.notebooks:
                    for g in nb.grades:
                        comp = g.name[len("test_"):] if g.name.startswith("test_") else g.name
                        if g.auto_score is None and g.manual_score is None:
                            missing.append(g.name)
                        comps[comp] = {"score": float(g.auto_score or 0.0), "max_score": float(g.max_score)}
                        if g.manual_score is not None and g.manual_score != g.auto_score and comp in {
                                c.name for c in assignment.components}:
                            manual.append(overrides.Override(assignment.id, student, comp, float(g.manual_score),
                                                             "formgrader", "manual grade in nbgrader's formgrader"))
                extra["components"] = comps
                extra["gradebook_penalty"] = float(sub.late_submission_penalty or 0.0)
                if missing:
                    names = [n for n in files if Path(n).name != f"{assignment.id}.ipynb"]
                    extra["status"] = "NOT AUTOGRADED"
                    extra["problem"] = (f"submitted/{names[0]} is not named {assignment.id}.ipynb, so nbgrader "
                                         f"autograde skipped it" if names else
                                         f"{', '.join(missing)} have no score: run nbgrader autograde {assignment.id}")
                elif submitted and (path := submitted / student / assignment.id / f"{assignment.id}.ipynb").is_file():
                    from autograder.grading.results import UNREADABLE, unreadable_problem
                    from autograder.grading.submission import SubmissionError, read_cells
                    try:  # what SandboxGrader graded: unreadable there is unreadable here
                        read_cells(path, course.limits)
                    except SubmissionError as exc:
                        extra["status"], extra["problem"] = UNREADABLE, unreadable_problem(str(exc))
                if sub.timestamp is not None:
                    when = late_mod.SubmissionTime(late_mod.utc(sub.timestamp), "nbgrader gradebook")
            # the overrides file wins over a formgrader score of the same component
            from_file = overrides.for_student(every, assignment.id, student)
            mine = [m for m in manual if all(o.component != m.component for o in from_file)] + from_file
            final.finalize(res, course, assignment, student, when, mine)
            if sub is not None and abs(extra["gradebook_penalty"] - extra["late"]["penalty"]) > 1e-6 and not (
                    extra["overrides"]):
                extra["problem"] = (f"the gradebook's late penalty is {extra['gradebook_penalty']:g}, course.yml's "
                                    f"policy gives {extra['late']['penalty']:g}: run nbgrader autograde again")
            rows.append({"name": student, **res})
    return rows


def final_grade(cfg: Any, db_url: str, assignment_id: str, student: str) -> Optional[dict[str, Any]]:
    """What the feedback page shows above nbgrader's per-cell scores: the final grade as grades.csv
    and the Canvas import have it (grading/final.py: the overrides file and formgrader scores, then
    the late penalty), each override with who and why, and the late penalty with how late and the
    policy. None for an assignment course.yml does not have."""
    course = course_of(cfg)
    try:
        assignment = course.assignment(assignment_id)
    except config_mod.ConfigError:
        return None
    rows = gradebook_rows(db_url, course, assignment, students=[student])
    if not rows:
        return None
    extra = rows[0]["extra_data"]
    late = extra.get("late") or {}
    return {"score": rows[0]["score"], "max_score": assignment.max_score, "raw_score": extra.get("raw_score"),
            "overrides": [{"component": o["component"], "score": o["score"], "autograded": o.get("autograded"),
                           "by": o["by"], "reason": o["reason"]} for o in extra.get("overrides") or []],
            "late_penalty": late.get("penalty") or 0.0, "late_reason": late.get("explanation", ""),
            "submitted_at": late.get("submitted_at", ""), "due": late.get("due", "")}


class GradesExport(ExportPlugin):
    """`nbgrader export` in the kit's grades.csv layout (results.write_csv: the same columns as
    `course grade --out`): per component, raw score, overrides with who and why, late penalty,
    final score. Every student whose files are in submitted/ but whose notebook the gradebook
    has no autograded score for is listed in the file (status NOT AUTOGRADED) and on stderr, and
    the export then fails (exit 1): a gradebook that silently gives 0 is impossible to miss."""

    def export(self, gradebook: Gradebook) -> None:
        from autograder.grading.overrides import OverrideError
        try:
            self._export(gradebook)
        except (config_mod.ConfigError, OverrideError, late_mod.DeadlineError, OSError, ValueError) as exc:
            self.log.error("nbgrader export: %s", exc)
            raise SystemExit(1) from None

    def _export(self, gradebook: Gradebook) -> None:
        from autograder.grading.results import write_grades
        from nbgrader.coursedir import CourseDirectory

        course = course_of(self.config)
        coursedir = CourseDirectory(config=self.config)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, ".", ".")).resolve()
        dest = Path(self.to or "grades.csv")
        wanted = [str(a) for a in self.assignment] or [a.name for a in gradebook.assignments
                                                       if self._released(coursedir, gradebook, a.name)]
        sheets = []
        problems = []
        for name in wanted:
            try:
                assignment = course.assignment(name)
            except config_mod.ConfigError:
                self.log.warning("assignment %s is in the gradebook but not in course.yml: not exported", name)
                continue
            rows = gradebook_rows(coursedir.db_url, course, assignment, submitted, [str(s) for s in self.student])
            sheets.append((assignment, rows))
            problems += [f"{r['name']} {assignment.id}: {r['extra_data'].get('problem', '')}" for r in rows
                         if r["extra_data"].get("status") == "NOT AUTOGRADED"]
        write_grades(dest, sheets)
        self.log.info("Exported %s to %s", ", ".join(a.id for a, _ in sheets), dest)
        for problem in problems:
            self.log.error("NOT AUTOGRADED: %s", problem)
        if problems:
            self.log.error("%d submission(s) in submitted/ have no autograded score in the gradebook (listed above, "
                           "status NOT AUTOGRADED in %s)", len(problems), dest)
            raise SystemExit(1)

    def _released(self, coursedir: Any, gradebook: Gradebook, name: str) -> bool:
        """Whether an assignment of the gradebook is out: released (release/<name>/) or submitted to.
        One that is neither is not exported (its rows would all be "no submission", 0), unless named."""
        released = Path(coursedir.format_path(coursedir.release_directory, ".", name)).is_dir()
        if released or gradebook.find_assignment(name).submissions:
            return True
        self.log.info("%s is not released yet (no release/%s/, no submission): not exported; name it with "
                      "--assignment to export it", name, name)
        return False
