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

`DeduplicateIds` replaces nbgrader's preprocessor of that name in the sanitizing step: see there.
"""
from __future__ import annotations

import atexit
import tempfile
from pathlib import Path
from typing import Any, Optional

import nbformat
from nbgrader import utils as nbutils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Enum, Unicode

from autograder import config as config_mod

_ZYGOTES: dict[str, Any] = {}


def zygote(mode: str) -> Any:
    """One warm sandbox per process (nbgrader autogrades the submissions one after another)."""
    from autograder.sandbox.forkserver import Zygote

    if mode not in _ZYGOTES:
        _ZYGOTES[mode] = Zygote(mode)
        atexit.register(_ZYGOTES[mode].stop)
    z = _ZYGOTES[mode]
    if not z.alive:
        z.start()  # a sandbox that cannot start fails the autograde loudly, rather than scoring 0
    return z


def component_feedback(report: dict[str, Any], component: str, notes: list[str]) -> str:
    """The text of one component's graded cell, from the Gradescope-format results."""
    comp = report["extra_data"]["components"][component]
    tests = [t for t in report["tests"] if t["extra_data"]["component"] == component]
    passed = sum(t["status"] == "passed" for t in tests)
    lines = [f"{component}: {comp['score']:g} / {comp['max_score']:g} points "
             f"({passed} of {len(tests)} tests passed; graded by the course's autograder with the public "
             f"and hidden tests)"]
    for t in tests:
        name = t["name"].split(": ", 1)[-1]
        lines.append(f"  [{'PASS' if t['status'] == 'passed' else 'FAIL'}] {name}")
        if t["status"] != "passed" and t.get("output"):
            lines += ["        " + line for line in t["output"].splitlines()]
    if notes and comp["score"] < comp["max_score"]:
        lines.append("  While loading your code:")
        lines += ["    " + n.splitlines()[-1] for n in notes if n]
    return "\n".join(lines) + "\n"


def graded_outputs(text: str, score: float) -> list[Any]:
    """A stdout stream with the feedback, then the score as the result nbgrader reads (partial credit)."""
    return [nbformat.v4.new_output("stream", name="stdout", text=text),
            nbformat.v4.new_output("execute_result", data={"text/plain": repr(float(score))},
                                   execution_count=None)]


class DeduplicateIds(NbGraderPreprocessor):
    """nbgrader's DeduplicateIds, fixed, and tolerant of nbgrader metadata a student broke.

    nbgrader 0.9's version leaves `"nbgrader": {}` on a duplicated cell (JupyterLab copies the
    metadata when a cell is split or copied), which CheckCellMetadata then rejects as an outdated
    schema: the whole submission fails to autograde. Here a duplicate (all but the last, as in
    nbgrader) or a cell whose nbgrader metadata does not validate loses its nbgrader metadata: it
    is then ordinary code for the grader, and SandboxGrader puts missing graded cells back.
    """

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        from nbgrader.nbgraderformat import MetadataValidator

        validator = MetadataValidator()
        seen: set[str] = set()
        for cell in reversed(nb.cells):
            if "nbgrader" not in cell.metadata:
                continue
            try:
                validator.upgrade_cell_metadata(cell)
                validator.validate_cell(cell)
            except Exception as exc:
                self.log.warning("dropping invalid nbgrader metadata of a cell: %s", str(exc).splitlines()[0])
                cell.metadata.pop("nbgrader", None)
                continue
            meta = cell.metadata.get("nbgrader") or {}
            if not (meta.get("grade") or meta.get("solution") or meta.get("locked") or meta.get("task")):
                continue
            if meta.get("grade_id") in seen:
                self.log.warning("Cell with id '%s' exists multiple times!", meta.get("grade_id"))
                cell.metadata.pop("nbgrader", None)
            else:
                seen.add(str(meta.get("grade_id")))
        return nb, resources


class SandboxGrader(NbGraderPreprocessor):
    """Grade the submission with the course's sandboxed grader and put the scores in the graded cells."""

    sandbox = Enum(["auto", "bwrap", "process"], default_value="auto",
                   help="The grader's isolation: bubblewrap, or plain processes.").tag(config=True)
    course_file = Unicode("", help="course.yml to grade with (default: the kit's).").tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        from autograder.grading.results import results_json
        from autograder.grading.session import grade_file

        info = resources["nbgrader"]
        course = config_mod.load(self.course_file) if self.course_file else config_mod.default()
        assignment = course.assignment(info["assignment"])
        path = self._submitted_file(info)
        with tempfile.TemporaryDirectory(prefix="course-nbgrader-") as tmp:
            if path is None:  # not found where nbgrader keeps it: grade the notebook as nbgrader read it
                self.log.warning("grading the sanitized copy of %s/%s", info["student"], info["notebook"])
                path = Path(tmp) / f"{info['notebook']}.ipynb"
                nbformat.write(nb, str(path))
            result = grade_file(zygote(self.sandbox), assignment.id, path, course=course)
        report = results_json(result)
        self.log.info("course grader: %s %s: %g / %g", info["student"], assignment.id,
                      result.score, result.max_score)
        notes = {c.name: c.notes for c in result.components}
        with Gradebook(info["db_url"]) as gb:
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
            self._set(cell, report, comp.name, notes.get(comp.name, []))
            found.add(grade_id)
        for grade_id, comp in wanted.items():
            if grade_id not in found:
                cell = self._restored_cell(gb, grade_id, info)
                self._set(cell, report, comp.name, notes.get(comp.name, []))
                nb.cells.insert(self._insert_at(nb, comp.name), cell)
                self.log.warning("%s: graded cell %s was missing; put it back", info["student"], grade_id)

    @staticmethod
    def _set(cell: Any, report: dict[str, Any], component: str, notes: list[str]) -> None:
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
            f"# This graded cell was missing from the submitted notebook; the grader put it back.\n"
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
