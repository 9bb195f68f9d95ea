"""nbgrader configuration of the course: run nbgrader commands from the repository's root.

    course release [ID]                           # stage build/nbgrader/source/ and generate release/
    nbgrader release_assignment ID                # to the exchange (Exchange.root below)
    nbgrader collect ID   |   nbgrader zip_collect ID   # zip_collect: Canvas, Moodle, Gradescope exports
    nbgrader autograde ID                         # the kit's sandboxed grader, not in-kernel execution;
                                                  # course.yml's due date, extensions and late policy
    nbgrader generate_feedback ID ; nbgrader release_feedback ID   # the course's feedback page
    nbgrader export                               # grades.csv in the kit's layout
    course export ID RESULTS --gradebook gradebook.db   # every difference with `course grade`

The instructor notebooks (assignments/<id>/<id>.py, jupytext) are the source: `course release`
converts each to nbgraders's source folder below, with its support module and self-check bundle,
and runs generate_assignment into release/ (generated output, not committed: what students receive).
"""
import os
import warnings

from sqlalchemy.exc import SAWarning

c = get_config()  # noqa: F821 (defined by traitlets when it loads this file)

# nbgrader 0.9's Gradebook.add_submission builds a new submission's objects while SQLAlchemy 2's
# session autoflushes, which prints an SAWarning ("Object of type <SubmittedAssignment> not in
# session, add operation along 'Student.submissions' will not proceed") for every student's first
# autograde; nbgrader adds the objects right after and nothing is lost. Only that warning, only
# from nbgrader.api, is silenced (tests/test_nbgrader.py checks the logs stay free of SAWarnings).
warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session", category=SAWarning,
                        module=r"nbgrader\.api")

here = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = here
c.CourseDirectory.course_id = "attention"
# Written by `course release` (never edit it: it is regenerated from assignments/ and holds solutions).
c.CourseDirectory.source_directory = os.path.join("build", "nbgrader", "source")
c.CourseDirectory.release_directory = "release"
# Student data (keep out of git): submissions, graded copies, feedback, and the gradebook
# (CourseDirectory.db_url, by default <root>/gradebook.db).
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"

# Where release_assignment / collect / release_feedback exchange files with students (a shared,
# writable folder on the course's JupyterHub server).
# c.Exchange.root = "/srv/nbgrader/exchange"

# zip_collect: put what the LMS gave (zips or files) in downloaded/<assignment>/archive/. The
# extractor files it by `course collect`'s rule (autograder/integrations/lms.py): Canvas
# (`eve_12345_67890_02_attention_scoring.ipynb`, `doejane_LATE_...`), Moodle
# (`Full Name_123_assignsubmission_file_/...`), Gradescope exports (submission_metadata.yml: SIDs and
# submission times, which become timestamp.txt) and plain `<student>_<notebook>.ipynb` names, read
# only where the LMS writes them; a student's own files and zips are the uploader's whatever they
# are called; reading is capped (a zip bomb is skipped); any notebook a student uploaded is filed
# under the assignment's notebook name. The collector takes only what the extractor recorded.
c.ZipCollectApp.extractor_plugin = "autograder.integrations.nbgrader_bridge.LmsExtractor"
c.ZipCollectApp.collector_plugin = "autograder.integrations.nbgrader_bridge.LmsCollector"
# c.LmsCollector.student_id = "user_id"   # Canvas: the Canvas user id as student id (default: the name)

# Late work: `course release` and every autograde write course.yml's due date (deadlines: time of
# day, time zone) and the student's extension into the gradebook; nbgrader measures the lateness
# of timestamp.txt against them and asks this plugin for the course's penalty (deadlines.late).
c.AssignLatePenalties.plugin_class = "autograder.integrations.nbgrader_bridge.CourseLatePenalty"
# `nbgrader export`: the kit's grades.csv layout (per component, raw, override, late penalty, final;
# overrides file applied); it fails, listing them, when a submission in submitted/ was not autograded.
c.ExportApp.plugin_class = "autograder.integrations.nbgrader_bridge.GradesExport"

# Autograding: nbgrader's pipeline with its Execute preprocessor replaced by the course's grader.
# nbgrader would run the student's notebook (and the graded cells) in a Jupyter kernel and score
# the graded cells by their outputs: student code would run with the instructor's rights, next to
# gradebook.db, in the process whose outputs decide the score. SandboxGrader instead grades the
# submitted file with `grade_file` (public and hidden tests, student code only in the bubblewrap
# sandbox), then writes each component's feedback and partial score into its graded cell
# `test_<component>` (putting back graded cells the student deleted), and nbgrader's SaveAutoGrades
# records that score in the gradebook. Nothing of the notebook is executed by nbgrader.
# A submitted file that is not a notebook (an upload cut short) is graded `unreadable` (0, the reason in
# every graded cell), and autograde carries on, instead of a traceback for that student.
c.Autograde.exporter_class = "autograder.integrations.nbgrader_bridge.SubmissionExporter"
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    # nbgrader's own breaks on split or copied cells (duplicate grade ids): see nbgrader_bridge.
    "autograder.integrations.nbgrader_bridge.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "autograder.integrations.nbgrader_bridge.SandboxGrader",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.SandboxGrader.sandbox = "auto"  # "bwrap" to refuse grading without bubblewrap
c.LimitOutput.max_lines = 400

# Feedback pages (generate_feedback): the course's template (autograder/integrations/templates/
# course_feedback, adapted from nbgrader's): components named in the contents and headings, no
# `Out[ ]:` score or True/False echo, math rendered to MathML when the page is written (no MathJax
# from a CDN: it reads offline), long feedback lines wrapped.
import autograder  # noqa: E402
import nbgrader  # noqa: E402

# On FeedbackExporter (feedback.py), generate_feedback's exporter alone: nbgrader's formgrader builds its
# submission view with an HTMLExporter from this same config, and a global HTMLExporter.template_name
# replaced its "formgrade" template (every submission view: HTTP 500, TemplateNotFound: bootstrap.min.css).
c.GenerateFeedback.exporter_class = "autograder.integrations.feedback.FeedbackExporter"
c.FeedbackExporter.template_name = "course_feedback"
c.FeedbackExporter.extra_template_basedirs = [
    os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"),
    os.path.join(os.path.dirname(autograder.__file__), "integrations", "templates"),
]
c.FeedbackExporter.filters = {"offline_math": "autograder.integrations.feedback.offline_math",
                              "untrusted_html": "autograder.untrusted_html.clean"}  # student text made inert
