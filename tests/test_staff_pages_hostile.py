"""Pages staff open are built from student bytes, and treat every one of them as hostile (issue #22,
classes 6 and 7).

* `course report` on a class mixing correct results with submissions that break an analysis (a
  RecursionError-deep expression, a MemoryError-deep one, a cell source of non-strings, a binary file,
  invalid, NaN, deeply nested and mistyped results JSON, a figure that fails): the page is written,
  the rest of the class is reported, and the problems table names each with its reason.
* The nbgrader feedback page and the report page, built from hostile markdown, math, names and code
  (img onerror, svg onload inside $...$, javascript: links, <script>, CSS url(), meta refresh, base
  href, iframe, object, srcset...), opened in a real headless Chromium with every URL pointing at an
  HTTP server of the test on 127.0.0.1: the server gets no request, no script runs, and the math is
  still drawn as MathML.
"""
from __future__ import annotations

import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import nbformat
import pytest

from autograder import config
from autograder.report import build, figures, page, stats
from autograder.untrusted_html import CSP, clean
from kit_helpers import headless_chromium, reference_source, write_notebook

pytestmark = pytest.mark.xdist_group("report")

A = "02_attention_scoring"
PWNED = "window.pwned=1;document.title='pwned'"


def payloads(url: str) -> list[str]:
    """Markdown/HTML that would fetch from `url` or run a script if any of it stayed live."""
    return [
        f'<img src="{url}/img" onerror="{PWNED}">',
        f'<script>{PWNED}</script><script src="{url}/script.js"></script>',
        f'<a id="js" href="javascript:{PWNED}">click me</a>',
        f'<div style="background-image: url({url}/css-attribute)">styled</div>',
        f"<style>body {{ background: url({url}/css-element) }}</style>",
        f'<meta http-equiv="refresh" content="0; url={url}/refresh">',
        f'<base href="{url}/base/"><img src="relative.png">',
        f'<iframe src="{url}/iframe"></iframe><object data="{url}/object"></object><embed src="{url}/embed">',
        f'<img srcset="{url}/srcset 1x"><picture><source srcset="{url}/source"><img alt="p"></picture>',
        f'<video poster="{url}/poster"></video><audio src="{url}/audio" autoplay></audio>',
        f'<link rel="stylesheet" href="{url}/link"><link rel="prefetch" href="{url}/prefetch">',
        f'<svg><image href="{url}/svg-image"/></svg><svg onload="{PWNED}"></svg>',
        f'<form action="{url}/form"><input type="image" src="{url}/input"></form>',
        f'<details open ontoggle="{PWNED}"><summary>s</summary></details>',
        f'<table background="{url}/table"><tr><td>cell</td></tr></table>',
        f'<a href="{url}/ping" ping="{url}/ping2">a link, not followed</a>',
        f'$\\text{{<svg onload="{PWNED}">}}$ and $$\\text{{<img src={url}/math-img onerror={PWNED}>}}$$',
        "Legitimate math: $\\mathbf q^\\top \\mathbf k$ and $$\\frac{\\exp(a_i)}{\\sum_j \\exp(a_j)}$$",
    ]


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"x")

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def loopback_server() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 (an ephemeral port) recording the paths asked of it; stopped after."""
    handler = type("Recorder", (_Recorder,), {"requests": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def open_and_watch(driver: Any, path: Path, requests: list[str]) -> dict[str, Any]:
    """Open `path` in Chromium, let it settle (a meta refresh, lazy loads), click every link; what it did."""
    driver.get(path.as_uri())
    time.sleep(1.5)
    url_after = driver.current_url
    driver.execute_script("document.querySelectorAll('a[href^=\"javascript\"], #js').forEach(a => a.click())")
    time.sleep(0.5)
    return {"url": url_after, "title": driver.title, "requests": list(requests),
            "pwned": driver.execute_script("return window.pwned === undefined ? null : window.pwned"),
            "math": driver.execute_script("return Array.from(document.querySelectorAll('math')).map("
                                          "m => m.getBoundingClientRect().width)")}


# --- the feedback page ----------------------------------------------------------------------------

def feedback_exporter() -> Any:
    """The exporter `nbgrader generate_feedback` builds in this course: the repository's nbgrader_config.py
    (its GenerateFeedback.exporter_class, the course's feedback.FeedbackExporter) and what GenerateFeedback
    adds (the bootstrap path), made as GenerateFeedback.start makes it."""
    from nbgrader.converters.generate_feedback import GenerateFeedback
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.integrations.feedback import FeedbackExporter

    converter = GenerateFeedback(config=PyFileConfigLoader("nbgrader_config.py", path=str(config.REPO_ROOT)).load_config())
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    assert isinstance(exporter, FeedbackExporter)
    return exporter


def hostile_feedback_notebook(url: str) -> Any:
    nb = nbformat.v4.new_notebook()
    text = "\n\n".join(payloads(url))
    answer = nbformat.v4.new_markdown_cell(text)
    answer.metadata["nbgrader"] = {"solution": True, "grade": True, "grade_id": "written", "points": 2.0,
                                   "score": 1.0, "comment": f'TA: see <img src="{url}/comment">'}
    code = nbformat.v4.new_code_cell("def masked_softmax(X, valid_lens):\n    return '<script>x</script>'")
    code.outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": f"<script>{PWNED}</script><img src='{url}/output'>", "text/plain": "x"}),
        nbformat.v4.new_output("stream", name="stdout", text=f"<img src={url}/stream>")]
    nb.cells = [nbformat.v4.new_markdown_cell(text), answer, code]
    return nb


def test_feedback_page_makes_no_request_and_runs_no_script(loopback_server: tuple[str, list[str]],
                                                           tmp_path: Path) -> None:
    url, requests = loopback_server
    resources = {"nbgrader": {"notebook": A, "score": 1.0, "max_score": 14.0, "late_penalty": 0}}
    body, _ = feedback_exporter().from_notebook_node(hostile_feedback_notebook(url), resources=resources)
    path = tmp_path / "feedback.html"
    path.write_text(body, encoding="utf-8")
    assert f'content="{CSP}"' in body and 'content="no-referrer"' in body
    with headless_chromium(tmp_path / "profile", "1200,1400") as driver:
        seen = open_and_watch(driver, path, requests)
    assert seen["requests"] == [], seen["requests"]
    assert seen["pwned"] is None and seen["title"] == A and seen["url"] == path.as_uri()
    assert len(seen["math"]) >= 6 and all(w > 0 for w in seen["math"]), seen["math"]
    assert "<math" in body and "\U0001d42a" in body  # \mathbf q: MathML with the bold letter


# --- the class report ------------------------------------------------------------------------------

def result(score: float, tests: list[tuple[str, bool]], **extra: Any) -> dict[str, Any]:
    return {"score": score, "max_score": 14.0, "output": "", "tests": [
        {"name": f"masked_softmax: {name}", "score": 1.0 if ok else 0.0, "max_score": 1.0,
         "status": "passed" if ok else "failed", "output": "", "extra_data": {"component": "masked_softmax"}}
        for name, ok in tests], "extra_data": {"assignment": A, **extra}}


def hostile_class(root: Path) -> tuple[Path, Path]:
    results, subs = root / "results", root / "submissions"
    results.mkdir(parents=True)
    subs.mkdir()
    ref = reference_source(A)
    good = {"alice": 14.0, "bob": 10.0, "carol": 7.0}
    for i, (name, score) in enumerate(good.items()):
        (subs / f"{name}.py").write_text(ref + f"\n\nLIMIT_{i} = {i}\n")
        (results / f"{name}.json").write_text(json.dumps(result(score, [("one", True), ("two", i == 0)])))
    deep = ref + "\n\ndef masked_softmax(X, valid_lens):\n    return X" + "[0]" * 200_000 + "\n"
    unary = ref + "\n\ndef masked_softmax(X, valid_lens):\n    return " + "-" * 100_000 + "X\n"
    (subs / "deep.py").write_text(deep)
    (subs / "unary.py").write_text(unary)
    (subs / "binary.py").write_bytes(b"\x00\xff\xfe" + os.urandom(4096))
    write_notebook(subs / "nonstr.ipynb", [("code", ref)])
    nb = json.loads((subs / "nonstr.ipynb").read_text())
    nb["cells"][0]["source"] = [1, None, {"a": [2]}, ["def masked_softmax(): pass"]]
    (subs / "nonstr.ipynb").write_text(json.dumps(nb))
    for name in ("deep", "unary", "binary", "nonstr"):
        (results / f"{name}.json").write_text(json.dumps(result(3.0, [("one", True), ("two", False)])))
    (results / "badjson.json").write_text("{not json")
    (results / "nan.json").write_text(json.dumps(result(3.0, [("one", True)])).replace("3.0", "NaN", 1))
    (results / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (results / "mistyped.json").write_text(json.dumps({**result(1.0, []), "extra_data": {"components": [1, 2]}}))
    (results / "binary_results.json").write_bytes(b"\xff\xfe\x00" + os.urandom(256))
    return results, subs


def test_report_of_a_class_with_hostile_submissions_is_written(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    results, subs = hostile_class(tmp_path / "class")

    def broken_figure(*args: Any) -> bytes:
        raise ValueError("autodetected range of [nan, nan] is not finite")

    monkeypatch.setattr(figures, "item_analysis", broken_figure)
    report = build.write_report([build.Source(A, results, subs)], tmp_path / "out", boilerplate={A: ""}, jobs=1)
    html = report.page.read_text()
    view = report.assignments[0]
    names = {s.name for s in report.students}
    assert {"alice", "bob", "carol", "deep", "badjson", "nested"} <= names
    failed = {(student, i.message) for i in view.problems if i.kind == stats.REPORT_FAILED for student in i.students}
    reasons = {student: message for student, message in failed}
    for name in ("deep", "unary"):  # Python cannot parse it: no code to compare, like the grader's skipped cell
        assert name in view.similarity.no_code or "nested" in reasons.get(name, ""), (name, failed)
    assert "binary" in view.similarity.no_code or reasons["binary"].startswith("reading its submitted file"), failed
    assert "not valid JSON" in reasons["badjson"] and "not UTF-8" in reasons["binary_results"], failed
    assert "not a finite number" in reasons["nan"] and "nested too deeply" in reasons["nested"], failed
    assert reasons["mistyped"].startswith("its results file: AttributeError"), failed
    assert "nonstr" not in reasons or reasons["nonstr"].startswith("reading its submitted file"), failed
    assert view.distribution.n == 12 and view.distribution.ungraded == 5
    assert view.similarity.computed and {"alice", "bob", "carol"} <= set(view.similarity.compared)
    assert any("could not be drawn" in w and "tests.png" in w for w in view.warnings)
    for student in ("deep", "unary", "badjson", "nan", "nested", "mistyped", "binary_results"):
        assert student in html
    assert "could not be drawn" in html and "the report could not use it" in html


def test_report_page_makes_no_request_even_from_unescaped_markup(loopback_server: tuple[str, list[str]],
                                                                 tmp_path: Path) -> None:
    """The report escapes what it shows (Jinja autoescape); if a value ever reaches it as markup (a
    filter that returns Markup, a template that says |safe), the body's sanitiser and the page's
    CSP still keep it inert. Both are tried here: hostile text, and hostile markup."""
    from markupsafe import Markup

    url, requests = loopback_server
    evil = "\n".join(payloads(url))
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "x.json").write_text(json.dumps({**result(0.0, [(evil, False)]), "output": evil}))
    report = build.write_report([build.Source(A, folder)], tmp_path / "out", similarity=False)
    original = page.render

    def with_markup(context: dict[str, Any]) -> str:
        context["assignments"][0].title = Markup(evil)  # as if a template forgot to escape it
        context["assignments"][0].warnings.append(Markup(evil))
        return original(context)

    context_page = tmp_path / "markup.html"
    page.render = with_markup  # type: ignore[assignment]
    try:
        build.write_report([build.Source(A, folder)], tmp_path / "out2", similarity=False)
    finally:
        page.render = original  # type: ignore[assignment]
    context_page.write_text((tmp_path / "out2" / "index.html").read_text())
    assert f'<a href="#{A}"' in context_page.read_text()  # the page's own links survive the sanitiser
    with headless_chromium(tmp_path / "profile", "1366,900") as driver:
        for path in (report.page, context_page):
            requests.clear()
            seen = open_and_watch(driver, path, requests)
            assert seen["requests"] == [], (path.name, seen["requests"])
            assert seen["pwned"] is None and seen["title"].startswith("Class report: "), seen
            assert seen["url"] == path.as_uri()
            assert driver.execute_script("return document.images.length") >= 2  # the figures (data: URIs)
            assert driver.execute_script(
                "return Array.from(document.images).filter(i => i.src.startsWith('data:'))"
                ".every(i => i.complete && i.naturalWidth > 0)")


def test_allow_list_keeps_what_pages_need_and_drops_the_rest() -> None:
    kept = ('<a href="#top">t</a><table><tbody><tr><td class="num" colspan="2">1</td></tr></tbody></table>'
            '<img src="data:image/png;base64,iVBORw0KGgo=" alt="f"><details open=""><summary>s</summary></details>'
            '<math display="block"><mfrac><mi>a</mi><mn>2</mn></mfrac></math><pre class="code"><mark>x</mark></pre>'
            '<span class="bar" aria-hidden="true"><i style="width:12.5%"></i></span>')
    assert clean(kept) == kept
    for attack in ('<img src="//127.0.0.1/x">', '<img src="https://127.0.0.1/x">', '<img src="x.png">',
                   '<img src="data:image/svg+xml;base64,PHN2Zz4=">', '<a href="javascript:alert(1)">',
                   '<a href="data:text/html,x">', '<i style="width: url(http://127.0.0.1/)">',
                   '<i style="width: 1px; background-image: image-set(\'http://127.0.0.1/\' 1x)">',
                   '<i style="width: \\75rl(http://127.0.0.1/)">', '<math><mi href="http://127.0.0.1/">m</mi></math>'):
        out = clean(attack)
        assert "127.0.0.1" not in out and "javascript" not in out and "data:text" not in out, (attack, out)
        assert "x.png" not in out and "svg" not in out and "url" not in out, (attack, out)
