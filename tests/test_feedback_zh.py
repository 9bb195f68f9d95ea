"""The Chinese edition's feedback page (issue 27): `nbgrader generate_feedback` in the course's language
(course.yml `language`), its Chinese drawn by a real font in headless Chromium (no tofu boxes), and the
English page as before. One student of 02_attention_scoring, autograded once, its page written in zh
and then, with course.yml switched, in en."""
from __future__ import annotations

import html
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml

from autograder import config
from autograder import translations
from autograder.authoring import release
from autograder.integrations.feedback import MAX_CELL_MARKDOWN
from autograder.selfcheck import i18n
from kit_helpers import headless_chromium
from test_nbgrader import _buggy, _with_solutions, nbgrader

# One worker runs the module: its course is built once (module fixture).
pytestmark = pytest.mark.xdist_group("feedback_zh")

A = "02_attention_scoring"
REPO = config.REPO_ROOT
#: The messages of the page's template (autograder/translations.py, area `pages`).
MESSAGES = [m.id for m in translations.extract("pages") if m.id]
#: A fontconfig that hides every font with Chinese glyphs: the machine as if fonts-noto-cjk were missing.
NO_CJK_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont><pattern><patelt name="lang"><string>zh-cn</string></patelt></pattern></rejectfont></selectfont>
</fontconfig>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Iterator[dict[str, Path]]:
    """amy's feedback page in zh and in en: a buggy masked_softmax, a TA's override, a long markdown cell."""
    with pytest.MonkeyPatch.context() as mp:  # nbgrader's processes load this checkout's kit
        mp.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        yield _pages(tmp_path_factory.mktemp("feedback-zh"))


def _pages(root: Path) -> dict[str, Path]:
    course_file = root / "course.yml"
    raw = yaml.safe_load((REPO / "course.yml").read_text())
    raw.update(language="zh", overrides_file="overrides.csv")
    course_file.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    (root / "overrides.csv").write_text("assignment,student,component,score,by,reason,date\n"
                                        f"{A},amy,masked_softmax,3,ta_li,office hours,2027-01-05\n")
    (root / "nbgrader_config.py").write_text((REPO / "nbgrader_config.py").read_text()
                                             + f"\nc.SandboxGrader.course_file = {str(course_file)!r}\n")
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "--config", str(course_file), "release", A,
                           "--force", "--course-dir", str(root)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    source_dir, release_dir = release.directories(release.nbgrader_config(root))
    notebook = _buggy(_with_solutions(nbformat.read(release_dir / A / f"{A}.ipynb", as_version=4),
                                      nbformat.read(source_dir / A / f"{A}.ipynb", as_version=4)))
    notebook.cells.append(nbformat.v4.new_markdown_cell("long " * (MAX_CELL_MARKDOWN // 4)))  # shown as plain text
    (root / "submitted" / "amy" / A).mkdir(parents=True)
    nbformat.write(notebook, str(root / "submitted" / "amy" / A / f"{A}.ipynb"))
    nbgrader(root, "autograde", A)
    out = {}
    for lang in ("zh", "en"):
        raw["language"] = lang
        course_file.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
        nbgrader(root, "generate_feedback", A, "--force")
        out[lang] = root / f"{lang}.html"
        out[lang].write_bytes((root / "feedback" / "amy" / A / f"{A}.html").read_bytes())
    return out


def _text(page: Path) -> str:
    """The page's text without its tags."""
    body = page.read_text(encoding="utf-8").split("<body>", 1)[1]
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def _pattern(message: str) -> re.Pattern[str]:
    """A message as shown on one line, whatever fills its `{placeholders}`. A leading placeholder is a
    lookbehind (some character of the same line before the rest): the same matches, but a search that
    finds none no longer tries every start of the page's 50,000-character line (22 s of this module)."""
    parts = [re.escape(p) for p in re.split(r"\{[^{}]*\}", message)]
    if len(parts) > 1 and parts[0] == "":
        return re.compile("(?<=[^\\n])" + "[^\\n]+?".join(parts[1:]))
    return re.compile("[^\\n]+?".join(parts))


#: The template's messages amy's page shows (no comments, tasks or late penalty on it).
SHOWN = ("(Score: {score} / {points})", "(Score: {score} / {points}, set by {by}; autograded: {autograded})",
         "{component}: {score} points, set by {by} (autograded: {autograded}): {reason}", "Score: {score} / {points}",
         "(Top)", "Student's answer", "{component} (autograded)")


def test_the_zh_page_says_its_fixed_texts_in_chinese(pages):
    """Each message amy's page shows is there as its translation, and not in English; bound_markdown's note too."""
    assert set(SHOWN) <= set(MESSAGES)
    table = i18n.translations("zh")
    zh = _text(pages["zh"])
    for message in SHOWN:
        assert table.gettext(message) != message, message
        assert _pattern(table.gettext(message)).search(zh), table.gettext(message)
        assert not _pattern(message).search(zh), message
    assert "masked_softmax：3.0 分，由 ta_li 设定（自动评分：" in zh
    assert "此单元格（" in zh and "This cell (" not in zh
    assert '<html lang="zh-CN">' in pages["zh"].read_text(encoding="utf-8")


def test_the_en_page_is_as_before(pages):
    """The English page keeps its texts word for word (its body is the page the template wrote before it had
    messages, docs/translations.md#feedback-pages-and-fonts)."""
    page, text = pages["en"].read_text(encoding="utf-8"), _text(pages["en"])
    assert '<html lang="en">' in page
    assert all(_pattern(message).search(text) for message in SHOWN)
    assert f"{A} (Score: " in text and "masked_softmax (Score: 3.0 / 4.0, set by ta_li; autograded: " in text
    assert re.search(r"masked_softmax: 3\.0 points, set by ta_li \(autograded: [0-9.]+\): office hours", text)
    assert "<code>masked_softmax</code> (autograded)" in page
    assert f"is shown as plain text, its first {MAX_CELL_MARKDOWN:,} characters: the feedback page" in text


#: Draws distinct Han characters of the page (at most 12), then U+FFFF (no font has it: the missing-glyph
#: box, "tofu"), each alone in a cell of its own at whole pixels, inside the element `arguments[0]` (its font).
GLYPH_CELLS = r"""
const el = document.querySelector(arguments[0]);
const style = getComputedStyle(el);
const chars = Array.from(new Set(document.body.innerText.match(/\p{Script=Han}/gu) || [])).slice(0, 12);
const size = Math.ceil(parseFloat(style.fontSize) * 1.6);
// The cells are drawn in the element's font, on top of the page (fixed, opaque): nothing of the page's
// layout may paint over them.
const box = document.createElement('span');
box.style.cssText = `display:block;position:fixed;left:0;top:0;z-index:2147483647;background:#fff;color:#000;` +
                    `height:${size}px;width:${size * (chars.length + 1)}px`;
for (const key of ['fontFamily', 'fontSize', 'fontWeight', 'fontStyle']) box.style[key] = style[key];
[...chars, '\uFFFF'].forEach((ch, i) => {
  const cell = document.createElement('span');
  cell.textContent = ch;
  cell.style.cssText = `position:absolute;top:0;left:${i * size}px;width:${size}px;height:${size}px;line-height:${size}px`;
  box.appendChild(cell);
});
document.body.appendChild(box);
return [box, chars.join(''), size];
"""


def tofu(driver: Any, selector: str) -> tuple[str, str]:
    """The page's Han characters drawn in `selector`'s font, and those of them that Chromium draws as the
    missing-glyph box (the same pixels as U+FFFF, or as another character)."""
    from PIL import Image

    box, chars, size = driver.execute_script(GLYPH_CELLS, selector)
    image = Image.open(io.BytesIO(box.screenshot_as_png)).convert("L")
    cells = [image.crop((i * size, 0, (i + 1) * size, size)).tobytes() for i in range(len(chars) + 1)]
    return chars, "".join(ch for ch, cell in zip(chars, cells) if cell == cells[-1] or cells.count(cell) > 1)


#: Where the page's Chinese is: the headings (sans-serif) and the feedback lines (monospace).
FONTS = ("div.panel-heading h4", "div.output_area pre")


def test_the_zh_page_draws_its_chinese_in_chromium(pages, tmp_path):
    with headless_chromium(tmp_path / "profile", "1200,1400") as driver:
        driver.get(pages["zh"].as_uri())
        for selector in FONTS:
            chars, boxes = tofu(driver, selector)
            assert len(chars) >= 8, chars
            assert boxes == "", (f"{selector}: {boxes} drawn as the missing-glyph box (tofu): no CJK font "
                                 "(`bash .ci/install` as root installs fonts-noto-cjk)")


def test_without_a_cjk_font_the_glyph_check_sees_tofu(pages, tmp_path):
    """The check above fails where the font is missing: Chromium with every Chinese font hidden."""
    conf = tmp_path / "fonts.conf"
    conf.write_text(NO_CJK_FONTS)
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}
    with headless_chromium(tmp_path / "profile", "1200,1400", env=env) as driver:
        driver.get(pages["zh"].as_uri())
        for selector in FONTS:
            chars, boxes = tofu(driver, selector)
            assert len(chars) >= 8 and boxes == chars, (chars, boxes)
