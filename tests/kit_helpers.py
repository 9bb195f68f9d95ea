"""Helpers shared by the kit's tests (importable: tests/ is on pytest's pythonpath)."""
from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Optional, TypeVar

import nbformat
import pytest

from autograder import config

T = TypeVar("T")


def reference_source(assignment_id: str) -> str:
    module = importlib.import_module(config.default().assignment(assignment_id).solution)
    return inspect.getsource(module)


#: Code that never finishes loading (a class body runs at load time; top-level statements do not run).
HANGS_AS_IT_LOADS = "import time\n\n\nclass X:\n    time.sleep(10 ** 6)  # at load time\n"


def edited(source: str, changes: list[tuple[str, str]]) -> str:
    """`source` with each (old, new) replaced, each old found exactly once (a fixture that no longer edits what it
    means to fails here, not in what it grades)."""
    for old, new in changes:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def course_with_an_hour_to_load(folder: Path) -> Path:
    """folder/course.yml: the course with load and submission limits of an hour, so that a hang as it
    loads outlasts any test's wait."""
    course_file = folder / "course.yml"
    course_file.write_text(config.DEFAULT_CONFIG.read_text().replace("  load_seconds: 20 ", "  load_seconds: 3600 ")
                           .replace("  submission_seconds: 600 ", "  submission_seconds: 3600 "))
    limits = config.load(course_file).limits
    assert limits.load_seconds == limits.submission_seconds == 3600
    return course_file


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    """A notebook of (kind, source) cells, kind "code" or "markdown"."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_markdown_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def this_python_kernel(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The name of a Jupyter kernel of this interpreter (sys.executable), whatever kernelspecs the user
    has: a `python3` kernelspec in `root`, put first on JUPYTER_PATH (.ci/install installs none)."""
    import json
    import sys
    folder = root / "jupyter" / "kernels" / "python3"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (the kit's tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(root / "jupyter"),
                                                                    os.environ.get("JUPYTER_PATH")])))
    return "python3"


def zip_collect_course(root: Path, assignment_id: str, released_notebook: str) -> Path:
    """A fresh nbgrader course at `root` for `nbgrader zip_collect`: the kit's nbgrader_config.py, the
    released notebook; returns its empty downloaded/<assignment>/archive/ folder."""
    (root / "release" / assignment_id).mkdir(parents=True)
    shutil.copy(config.REPO_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "release" / assignment_id / f"{assignment_id}.ipynb").write_text(released_notebook)
    archive = root / "downloaded" / assignment_id / "archive"
    archive.mkdir(parents=True)
    return archive


def _live_processes() -> Iterator[tuple[int, str, str, int]]:
    """(pid, name (comm), command line, parent's pid) of every live (not zombie) process, from the
    host's /proc."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        name, (state, parent) = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()[:2]
        if state != "Z":
            yield int(entry), name, cmdline, int(parent)


def processes_named(marker: str) -> list[int]:
    """Pids of live processes whose name (comm) is `marker`."""
    return [pid for pid, name, _, _ in _live_processes() if name == marker]


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that contain `text` (say a class's --out folder: the `course`
    process and its pool workers name it, and each of their fork servers protects it)."""
    return [cmdline for _, _, cmdline, _ in _live_processes() if text in cmdline]


def descendants(pid: int) -> list[tuple[int, int]]:
    """(pid, depth) of every live process below `pid` (1: its children, 2: theirs, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for child, _, _, parent in _live_processes():
        children.setdefault(parent, []).append(child)
    found, todo = [], [(pid, 0)]
    while todo:
        parent, depth = todo.pop()
        for child in children.get(parent, []):
            found.append((child, depth + 1))
            todo.append((child, depth + 1))
    return found


def poll(probe: Callable[[], T], done: Callable[[T], bool], deadline: float, interval: float = 0.05) -> T:
    """Call `probe` until `done(value)` holds or time.monotonic() passes `deadline`; the last value
    either way (the caller asserts on it). An idle machine returns at once, a loaded one waits."""
    while True:
        value = probe()
        if done(value) or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


@contextlib.contextmanager
def headless_chromium(profile: Path, window: str, browser_log: bool = False,
                      env: Optional[Mapping[str, str]] = None) -> Iterator[Any]:
    """A headless Chromium (Debian's chromium and chromedriver, through selenium) for rendering a page as
    a reader's browser does, quit afterwards; a skip where it is missing, a failure in CI (which installs it).
    `env`: the browser's whole environment (default: this process's)."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None  # type: ignore[assignment]
    if not (chromium and driver_path and webdriver):
        if os.environ.get("CI"):
            pytest.fail("CI needs chromium, chromium-driver (.ci/install) and selenium (the dev extra)")
        pytest.skip("chromium, chromedriver or selenium missing (bash .ci/install as root installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                 f"--window-size={window}"):
        options.add_argument(flag)
    if browser_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path, env=env), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: Any) -> Any:
    """What the browser window shows now, as a greyscale PIL image."""
    from PIL import Image
    return Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("L")


def looks_blank(image: Any) -> bool:
    """A blank or failed page is (nearly) one flat colour."""
    from PIL import ImageStat
    return ImageStat.Stat(image).var[0] <= 200
