"""The Chinese edition of what a student reads (issue 27): graded in zh, every line of the feedback is
Chinese, and the grades are those of the English edition (selfcheck/i18n.py, docs/translations.md)."""
from __future__ import annotations

import ast
import functools
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

from autograder import config
from autograder.authoring.samples import write_samples
from autograder.grading.results import format_result, results_json
from autograder.grading.session import grade_file
from autograder.sandbox.forkserver import Zygote

#: Chinese characters and the full-width punctuation of Chinese text.
_CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
#: A word of English prose: lower case, not part of a name or a call (`valid_lens`, `torch.bmm(`, `W_q`).
_WORD = re.compile(r"(?<![\w.])[a-z]{2,}(?![\w.(])")


#: The labels that stay as they are in every language (docs/translations.md).
_LABEL = re.compile(r"^\s*(diagnosis|fix|where|signature|hint):\s*")


def _code(line: str) -> bool:
    """A line of Python: a statement, an expression, or a `def` line (a fix's signature)."""
    line = _LABEL.sub("", line).strip()
    for text in (line, line + ": pass"):
        try:
            ast.parse(text)
            return True
        except SyntaxError:
            continue
    return False


def untranslated(text: str) -> list[str]:
    """The lines of `text` a student reads in English: no Chinese in them, not a line of Python, and two
    words of prose or more (outside `code spans`), which numbers, shapes and names do not have."""
    return [line for line in text.splitlines() if not _CHINESE.search(line) and not _code(line)
            and len(_WORD.findall(re.sub(r"`[^`]*`", "", line))) >= 2]


def test_the_check_finds_english_sentences_and_lets_code_numbers_and_names_pass():
    assert untranslated("your code raised RuntimeError: boom") == ["your code raised RuntimeError: boom"]
    assert untranslated("  expected shape (2, 3), got (2, 4)") == ["  expected shape (2, 3), got (2, 4)"]
    assert untranslated("你的代码抛出了 RuntimeError：size mismatch in the last axis") == []
    code = ["scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)", "PASS  masked_softmax: 掩蔽",
            "  input X = (2, 3, 4)", "[0.25, 0.5, 0.25]", "masked_softmax(X, valid_lens)", "`two words`", ""]
    assert untranslated("\n".join(code + ["  fix: def masked_softmax(X, valid_lens)"])) == []
    assert untranslated("  fix: keep the positions with index strictly less") == [
        "  fix: keep the positions with index strictly less"]


# One worker runs the module: its gradings (`graded`, module scope) are made once, not once per worker.
pytestmark = pytest.mark.xdist_group("i18n_grading")

ASSIGNMENTS = ("01_kernel_regression", "02_attention_scoring")


def _samples(assignment_id: str, folder: Path) -> list[Path]:
    """The demo's samples (reference, stubs, a syntax error, two zoo mutants), and: a crash in the
    student's code, a memory limit, an unreadable notebook, a wrong signature."""
    from solutions import attention_scoring, kernel_regression
    paths = write_samples(assignment_id, folder)
    if assignment_id == "01_kernel_regression":
        source = inspect.getsource(kernel_regression)
        extra = {"limit.py": source + "\n\ndef nadaraya_watson(queries, keys, values):\n"
                                      "    x = torch.zeros(10**12)\n    return x, x\n",
                 "unreadable.ipynb": '{"cells": [{"cell_type": "code", "source": "import torch'}
    else:
        source = inspect.getsource(attention_scoring)
        head = "def masked_softmax(X: torch.Tensor, valid_lens: Optional[torch.Tensor])"
        assert head in source
        extra = {"crash.py": source + "\n\ndef masked_softmax(X, valid_lens):\n"
                                      "    return torch.softmax(X.reshape(-1, 7), dim=-1)\n",
                 "signature.py": source.replace(head, "def masked_softmax(valid_lens: Optional[torch.Tensor], "
                                                      "X: torch.Tensor)")}
    for name, text in extra.items():
        (folder / name).write_text(text)
        paths.append(folder / name)
    return paths


@functools.cache
def _course(language: str) -> config.Course:
    return config.default().model_copy(update={"language": language})


@pytest.fixture(scope="module")
def graded(zygote: Zygote, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], Any]:
    """(assignment, sample, language) -> (results JSON, format_result's text, what the code printed) of
    every sample in en and zh."""
    out = {}
    for assignment_id in ASSIGNMENTS:
        for path in _samples(assignment_id, tmp_path_factory.mktemp(assignment_id)):
            for language in ("en", "zh"):
                result = grade_file(zygote, assignment_id, path, course=_course(language))
                out[assignment_id, path.name, language] = (results_json(result), format_result(result), result.output)
    return out


def test_every_line_a_student_reads_of_a_zh_grading_is_chinese(graded):
    """The results' output (Gradescope's text too), each test's name and output, and the plain report:
    each line Chinese, or code, numbers, shapes and names only (what the student's code printed is theirs)."""
    seen = set()
    found = []
    for (assignment_id, sample, language), (results, report, printed) in graded.items():
        if language != "zh":
            continue
        texts = [results["output"].replace(printed, ""), report] + [f"{t['name']}\n{t['output']}" for t in results["tests"]]
        for line in untranslated("\n".join(texts)):
            if line not in seen:
                seen.add(line)
                found.append(f"{assignment_id}/{sample}: {line}")
    assert not found, "\n".join(found[:40])
    kinds = {s for (_, s, language) in graded if language == "zh"}
    assert {"crash.py", "limit.py", "unreadable.ipynb", "signature.py", "stubs.py", "broken.py"} <= kinds


def test_the_same_samples_get_the_same_grades_in_en_and_zh(graded):
    """Per test (by its English name, extra_data.test) the same score and status; the same total."""
    for (assignment_id, sample, language), (results, _, _) in graded.items():
        if language != "en":
            continue
        zh = graded[assignment_id, sample, "zh"][0]
        mine = [(t["extra_data"]["test"], t["score"], t["status"]) for t in results["tests"]]
        theirs = [(t["extra_data"]["test"], t["score"], t["status"]) for t in zh["tests"]]
        assert mine == theirs, (assignment_id, sample)
        assert (results["score"], results["max_score"]) == (zh["score"], zh["max_score"]), (assignment_id, sample)
        assert results["extra_data"].get("status") == zh["extra_data"].get("status")
    mutants = [s for (a, s, lang) in graded if lang == "en" and s not in ("reference.py", "stubs.py", "broken.py")]
    assert mutants and any(graded[a, s, "en"][0]["score"] > 0 for (a, s, lang) in graded if lang == "en"
                           and s in mutants)


def test_check_on_a_buggy_namespace_speaks_the_release_language(monkeypatch, capsys, tmp_path):
    """check() follows the language of its release's symptoms.json (in the kit, course.yml's): a known
    mistake named, and a crash in the student's own code with where it happened."""
    from autograder import selfcheck
    from autograder.authoring.release import bundled_signatures
    from autograder.selfcheck import check, symptoms
    from test_selfcheck import A, namespace_with
    course = config.default()
    known = json.loads(bundled_signatures(course, course.assignment(A), selfcheck.PUBLIC / f"test_{A}.py"))
    monkeypatch.setattr(symptoms, "load", lambda: {**known, "language": "zh"})
    monkeypatch.setattr(selfcheck, "_PRINTED", {})
    assert not check("masked_softmax", namespace_with("ms_fill_zero"), assignment=A)
    named = capsys.readouterr().out
    assert "diagnosis: 你的 masked_softmax 的行为与" in named and "公开测试通过" in named
    crashing, mine = namespace_with(), tmp_path / "mine.py"
    mine.write_text("def sequence_mask(X, valid_len, value=0):\n    return X.reshape(-1, 7)\n")
    crashing["__file__"] = str(mine)
    exec(compile(mine.read_text(), str(mine), "exec"), crashing)
    assert not check("sequence_mask", crashing, assignment=A)
    crashed = capsys.readouterr().out
    assert "where: mine.py，第 2 行，在 sequence_mask 中" in crashed
    assert untranslated(named + crashed) == [], named + crashed


def test_a_zh_gradescope_zip_carries_the_messages_of_what_it_grades(tmp_path):
    """The zip holds no .po files: a zh course's carries one compiled catalogue (i18n.translations reads it)
    with the kit's messages and this assignment's, and no other assignment's."""
    import gettext
    import io
    import zipfile

    from autograder import translations
    from autograder.integrations import gradescope
    out = gradescope.build("02_attention_scoring", tmp_path / "ag.zip", course=_course("zh"))
    with zipfile.ZipFile(out) as z:
        assert not [n for n in z.namelist() if n.endswith(".po")]
        table = gettext.GNUTranslations(io.BytesIO(z.read("autograder/locale/zh.mo")))
    assert table.gettext("expected shape {expected}, got {actual}") == "形状应为 {expected}，实际为 {actual}"
    own = {m.id for area in ("suite_02", "kit_selfcheck") for m in translations.extract(area)}  # shared words too
    other = [m.id for m in translations.extract("suite_04") if m.id and all("test_04" in f for f, _ in m.locations)
             and m.id not in own]
    assert other and all(table.gettext(m) == m for m in other)


def test_the_class_report_reads_the_students_messages_in_either_language():
    """The report (staff, English) finds the kit's messages in results of a zh course as in an en one."""
    from autograder.grading.results import LOADING_HEADING
    from autograder.report import stats
    from autograder.selfcheck import i18n
    for language in ("en", "zh"):
        with i18n.using(language):
            missing = i18n._("`{name}` is not defined in your submission").format(name="W_q")
            stopped = i18n._("your code was stopped: {reason}").format(reason="boom")
            output = f"{i18n._(LOADING_HEADING)}\nAddNorm: cell 3: SyntaxError\n\nmore"
        found = stats._MISSING.search(f"AddNorm: {missing}")
        assert found is not None and found.group(1) == "W_q", language
        assert stats._STOPPED.search(stopped) is not None, language
        assert stats._load_note_blocks(output, ["AddNorm"]) == [("AddNorm", "SyntaxError")], language
