"""tms-client as a user gets it: a wheel built from pyproject.toml (`python -m build`, hatchling),
installed with pip into a fresh virtual environment outside the repository (of this Python, and of
Python 3.10 where the machine has one), where the README's example runs as written against a live
gateway. pip installs httpx from the index the environment
names (PIP_INDEX_URL; scripts/python-tests.mjs sets the local mirror)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import HERE, ROOT, Gateway

PACKAGE = HERE.parent
EXAMPLE = re.compile(r"<!-- example:python -->\n```python\n(.*?)\n```\n<!-- /example:python -->", re.S)


def example(readme: Path) -> str:
    match = EXAMPLE.search(readme.read_text(encoding="utf-8"))
    assert match, f"{readme} has no python example block"
    return match.group(1)


def docs_examples() -> list[str]:
    blocks: list[str] = re.findall(r"```python\n(.*?)\n```", (ROOT / "docs" / "client-python.md").read_text(), re.S)
    assert len(blocks) == 2
    return blocks


def integrations_example() -> str:
    """The Python example of docs/integrations.md."""
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- example:integration-python -->\n```python\n(.*?)\n```\n<!-- /example:integration-python -->", text, re.S)
    assert match, "docs/integrations.md has no integration-python example block"
    return match.group(1)


def gateway_on(gateways: dict[str, Any], driver: str) -> Gateway:
    """The gateway on `driver`, or on the one driver the suite runs when it runs only one."""
    chosen = driver if driver in gateways else next(iter(gateways))
    return Gateway(driver=chosen, url=gateways[chosen]["url"], control=gateways[chosen]["control"])


def run(*command: str | Path, **options: Any) -> str:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True, **options)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    output: str = done.stdout
    return output


def oldest_python() -> str | None:
    """An interpreter of the oldest Python the package supports (3.10), if this machine has one:
    `TMS_PYTHON310`, `python3.10` on the PATH, or one that pyenv installed."""
    candidates = [os.environ.get("TMS_PYTHON310"), shutil.which("python3.10")]
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += sorted(str(found) for found in Path(root).glob("versions/3.10.*/bin/python3.10")) if root else []
    for candidate in candidates:
        if candidate is None:
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 10))"], capture_output=True, text=True
        )
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    return None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from pyproject.toml."""
    out = tmp_path_factory.mktemp("tms-client-dist")
    run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, PACKAGE)
    [built] = out.glob("tms_client-*.whl")
    return built


@pytest.fixture(scope="module", params=["this", "3.10"])
def installed(request: pytest.FixtureRequest, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtual environment the wheel was installed into: made by this
    suite's Python, and by a Python 3.10 (the oldest supported) where the machine has one."""
    if not os.environ.get("PIP_INDEX_URL") and not os.environ.get("PIP_NO_INDEX"):
        pytest.fail("set PIP_INDEX_URL (the package index pip installs httpx from), as scripts/python-tests.mjs does")
    base = sys.executable if request.param == "this" else oldest_python()
    if base is None:
        pytest.skip("no Python 3.10 on this machine (set TMS_PYTHON310 to one)")
    work = tmp_path_factory.mktemp(f"tms-client-venv-{request.param}")
    run(base, "-m", "venv", work / "venv")
    python = work / "venv" / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, cwd=work)
    return python


def test_the_wheel_holds_the_typed_package_its_licence_and_one_dependency(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata] = [name for name in names if name.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    assert {"tms_client/__init__.py", "tms_client/_generated.py", "tms_client/py.typed"} <= set(names)
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert [name for name in names if not name.startswith(("tms_client/", "tms_client-"))] == []
    assert "Name: tms-client" in text and "Requires-Python: >=3.10" in text
    assert "License-Expression: Apache-2.0" in text
    requirements = re.findall(r"^Requires-Dist: (.*)$", text, re.M)
    assert [r for r in requirements if "extra ==" not in r] == ["httpx<1,>=0.27"]
    assert [r for r in requirements if "extra ==" in r] == ["cryptography>=41; extra == 'signatures'"]


def test_the_fresh_environment_has_only_httpx_beside_it_and_says_signatures_are_unavailable(installed: Path) -> None:
    python = installed
    program = """
import importlib.metadata, tms_client
from tms_client import SignatureCheckUnavailable, signature_check_available, verify_ledger_head
print(tms_client.__file__)
print(tms_client.__version__, importlib.metadata.version("tms-client"))
print(signature_check_available())
try:
    verify_ledger_head({"head": {}, "signature": "a.b.c"}, {"keys": []})
except SignatureCheckUnavailable as error:
    print("refused:", error)
"""
    lines = run(python, "-c", program, cwd=python.parent).splitlines()
    assert lines[0].startswith(str(python.parent.parent)) and "site-packages" in lines[0]
    version, installed_version = lines[1].split()
    assert version == installed_version
    assert lines[2] == "False"
    assert lines[3].startswith("refused: ") and "tms-client[signatures]" in lines[3]
    listed = run(python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check").splitlines()
    names = {line.split("==")[0].lower() for line in listed}
    assert "tms-client" in names and "httpx" in names
    assert "cryptography" not in names


def test_the_readmes_show_the_same_example() -> None:
    assert example(PACKAGE / "README.md") == example(ROOT / "README.md")


def test_the_examples_type_check_strictly(tmp_path: Path) -> None:
    """The README's example and those of docs/client-python.md, as written, under `mypy --strict`."""
    files = []
    for index, text in enumerate([example(ROOT / "README.md"), *docs_examples(), integrations_example()]):
        files.append(tmp_path / f"example_{index}.py")
        files[-1].write_text(text + "\n", encoding="utf-8")
    run(sys.executable, "-m", "mypy", "--strict", "--no-incremental", *files, cwd=tmp_path)


def test_the_readme_example_runs_as_written(installed: Path, gateways: dict[str, Any], tmp_path: Path) -> None:
    python = installed
    script = tmp_path / "example.py"
    script.write_text(example(ROOT / "README.md") + "\n", encoding="utf-8")

    gateway = gateway_on(gateways, "pglite")
    environment = {"PATH": os.environ.get("PATH", ""), "TMS_URL": gateway.url, "TOKEN": gateway.person().token}
    lines = run(python, script, cwd=tmp_path, env=environment).splitlines()
    assert lines[0] == "complete ['Ana ordered mint tea at the cafe.']"
    assert re.fullmatch(r"mem_\S+ Ana ordered mint tea at the cafe\.", lines[1])
    assert re.fullmatch(r"not_found 404 req_\S+", lines[2])
    assert len(lines) == 3


def test_the_docs_examples_run_as_written(installed: Path, gateways: dict[str, Any], tmp_path: Path) -> None:
    python = installed
    blocks = docs_examples()
    gateway = gateway_on(gateways, "postgres")
    person = gateway.person()
    environment = {"PATH": os.environ.get("PATH", ""), "TMS_URL": gateway.url, "TOKEN": person.token}
    outputs = []
    for index, block in enumerate(blocks):
        script = tmp_path / f"docs_{index}.py"
        script.write_text(block + "\n", encoding="utf-8")
        outputs.append(run(python, script, cwd=tmp_path, env=environment).splitlines())
    assert outputs[0][0] == f"{person.actor_id} session"
    assert re.fullmatch(r"not_found 404 req_\S+", outputs[0][1])
    assert outputs[1] == [person.actor_id]


def test_the_integrations_example_runs_as_written(installed: Path, gateways: dict[str, Any], tmp_path: Path) -> None:
    """docs/integrations.md's Python example: a key names the memory, a second write corrects it."""
    python = installed
    script = tmp_path / "integration.py"
    script.write_text(integrations_example() + "\n", encoding="utf-8")
    gateway = gateway_on(gateways, "postgres")
    environment = {"PATH": os.environ.get("PATH", ""), "TMS_URL": gateway.url, "TOKEN": gateway.person().token}
    lines = run(python, script, cwd=tmp_path, env=environment).splitlines()
    assert lines[0] == "complete ['Ana drinks green tea.']"
    assert re.fullmatch(r"conflict body\.key: held by memory mem_\S+", lines[1])
    assert len(lines) == 2
