"""The grading environment is locked: constraints.txt pins every Python package the kit installs, and
every way of installing the kit (.ci/install, the Gradescope zip's setup.sh) installs by it."""
from __future__ import annotations

import re
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from autograder.integrations import gradescope

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / gradescope.LOCK
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)(?: ; (.+))?$")


def pins(marker_env: dict[str, str] | None = None) -> dict[str, str]:
    """{package: version} the lock pins where it applies (this interpreter, or `marker_env`)."""
    out: dict[str, str] = {}
    for line in LOCK.read_text().splitlines():
        m = PIN.match(line)
        if m and (m.group(3) is None or Marker(m.group(3)).evaluate(marker_env)):
            out[canonicalize_name(m.group(1))] = m.group(2)
    return out


def direct_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return [Requirement(r) for r in project["dependencies"] + extras["dev"] + extras["docs"]]


def test_the_lock_is_uv_pip_compile_of_pyproject_and_pins_every_dependency_exactly():
    header = LOCK.read_text().splitlines()[:2]
    assert header[1].strip() == ("#    uv pip compile pyproject.toml --extra dev --extra docs --universal --python-version 3.10"
                                " -o constraints.txt")
    locked = pins()
    for requirement in direct_requirements():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in {LOCK.name}: run the command in its header"
        assert Version(locked[name]) in requirement.specifier, (name, locked[name], str(requirement.specifier))
    # The lock's own direct dependencies are pyproject's, no more (a dependency removed since is gone).
    via, package = set(), ""
    for line in LOCK.read_text().splitlines():
        m = PIN.match(line)
        package = canonicalize_name(m.group(1)) if m else package
        if line.startswith("    #") and line.endswith("attention-course-kit (pyproject.toml)"):
            via.add(package)
    assert via == {canonicalize_name(r.name) for r in direct_requirements()}
    assert locked["torch"] == "2.13.0"  # the CPU wheel's version; pip's "==2.13.0" accepts 2.13.0+cpu


def test_this_machine_runs_the_locked_versions():
    """Everything the kit needs here, dependencies of dependencies included, is at the version the lock
    pins (the kit is tested on what a fresh install gets)."""
    locked = pins()
    seen: set[str] = set()
    todo = [Requirement("attention-course-kit[dev,docs]")]
    wrong = []
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        if name != "attention-course-kit":
            if name not in locked:
                wrong.append(f"{name} {dist.version}: not in the lock")
            elif Version(dist.version) not in SpecifierSet(f"=={locked[name]}"):
                wrong.append(f"{name} {dist.version}: the lock has {locked[name]}")
        for line in dist.requires or []:
            sub = Requirement(line)
            extras = requirement.extras or {""}
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                todo.append(sub)
    assert not wrong, wrong
    assert {"hypothesis", "pytest", "numpy", "torch"} <= seen


def test_every_install_installs_by_the_lock(tmp_path):
    install = (REPO / ".ci" / "install").read_text()
    commands = [line for line in install.splitlines() if "pip install" in line and not line.lstrip().startswith("#")]
    assert commands and all(f"-c {gradescope.LOCK}" in c for c in commands), commands
    out = gradescope.build("02_attention_scoring", tmp_path / "gs.zip")
    with zipfile.ZipFile(out) as z:
        assert z.read(gradescope.LOCK) == LOCK.read_bytes()
        setup = z.read("setup.sh").decode()
    kit = [line for line in setup.splitlines() if "pip install" in line and "$ROOT/source" in line]
    assert kit and all(f'-c "$ROOT/source/{gradescope.LOCK}"' in c for c in kit), kit
    torch = [line for line in setup.splitlines() if '"torch==2.13.0"' in line]
    assert torch and all("--no-deps" in c and "download.pytorch.org/whl/cpu" in c for c in torch)


def test_a_results_file_names_no_installation_path():
    """What a student's code prints may carry the interpreter's paths (torch's warnings name their file):
    results name them by what they are, so that a fresh virtual environment and CI write the same bytes."""
    import site
    import sysconfig

    from autograder.grading.session import stable_paths

    for lib in {sysconfig.get_paths()["purelib"], *site.getsitepackages()}:
        warning = f"{lib}/torch/nn/modules/rnn.py:1358: UserWarning: dropout option adds dropout"
        assert stable_paths(warning) == "<site-packages>/torch/nn/modules/rnn.py:1358: UserWarning: dropout option adds dropout"
    stdlib = sysconfig.get_paths()["stdlib"]
    assert stable_paths(f"{stdlib}/warnings.py:10") == "<python-lib>/warnings.py:10"
    assert stable_paths("/sandbox/runtime/procedures.py:80: UserWarning") == "/sandbox/runtime/procedures.py:80: UserWarning"
