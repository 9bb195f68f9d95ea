"""nbgrader's formgrader submission view under the kit's nbgrader_config.py (docs/nbgrader.md, "Review in Formgrader").

The view (nbgrader.server_extensions.formgrader.handlers.SubmissionHandler.get) renders the autograded
notebook with `HTMLExporter(config=...).from_filename(filename, resources=...)`, the exporter built from
FormgradeExtension's config: its own extra config (template "formgrade") overridden by the course's
nbgrader_config.py. This test makes that exact exporter call with the config built the same way (no
Jupyter server: the handler adds nothing but the resources below). A global HTMLExporter.template_name
in nbgrader_config.py (the feedback template) made it fail with TemplateNotFound: bootstrap.min.css.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter
from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[1]


def _formgrader_config() -> Config:
    config = Config()
    config.merge(FormgradeExtension().build_extra_config())  # initialize(): update_config(build_extra_config())
    config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config())  # then the config file
    return config


def test_formgrader_submission_view_renders_under_the_course_config(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Attention $\\alpha$"),
                nbformat.v4.new_code_cell("def f():\n    return 1", metadata={"nbgrader": {
                    "grade": False, "solution": True, "locked": False, "grade_id": "f", "schema_version": 3}})]
    path = tmp_path / "02_attention_scoring.ipynb"
    nbformat.write(nb, path)
    resources = {"assignment_id": "02_attention_scoring", "notebook_id": "02_attention_scoring", "submission_id": "x",
                 "index": 0, "total": 1, "base_url": "", "student": "alice", "last_name": None, "first_name": None,
                 "notebook_path": "autograded/alice/02_attention_scoring/02_attention_scoring.ipynb"}
    exporter = HTMLExporter(config=_formgrader_config())
    assert exporter.template_name == "formgrade"
    html, _ = exporter.from_filename(str(path), resources=resources)
    assert "/formgrader/" in html and "Attention" in html and "alice" in html


def test_generate_feedback_keeps_the_course_template_and_filters() -> None:
    from nbgrader.converters.generate_feedback import GenerateFeedback

    from autograder.integrations.feedback import FeedbackExporter

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    converter = GenerateFeedback(config=config)
    assert converter.exporter_class is FeedbackExporter
    exporter = converter.exporter_class(parent=converter, config=converter.config)  # as GenerateFeedback.start
    assert exporter.template_name == "course_feedback"
    assert set(exporter.filters) >= {"offline_math", "untrusted_html"}
