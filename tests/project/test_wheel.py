"""A wheel built from the project works on its own: templates and schemas inside the package.

Built offline (`pip wheel --no-deps --no-build-isolation`, with the setuptools the test
extras install) from a copy of the project's files, installed (not editable) into a
fresh virtualenv, and run from a directory outside the checkout: generate -> sign ->
verify. The fresh virtualenv gets govkit only from the wheel; its dependencies come from
this environment's site-packages (a path entry, so nothing is fetched from the network).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE", "govkit", "templates", "schemas")


def _run(*args, cwd: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result


def test_wheel_installs_and_runs_generate_sign_verify(tmp_path):
    source = tmp_path / "source"  # a copy: building in the checkout would write build/ there
    source.mkdir()
    for name in PROJECT_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", dist, source, cwd=tmp_path)
    (wheel,) = dist.glob("govkit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    # the version from its one place, the license with its text
    from govkit import __version__
    assert wheel.name.startswith(f"govkit-{__version__}-")
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    meta = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: Apache-2.0" in meta and "Requires-Dist: markupsafe" in meta
    # the plotting and statistics stack only with the bench extra (a lint-only install)
    assert 'Requires-Dist: numpy>=1.24; extra == "bench"' in meta, meta
    assert 'Requires-Dist: matplotlib>=3.8; extra == "bench"' in meta
    assert not [x for x in meta.splitlines() if x.startswith("Requires-Dist: numpy")
                and "extra" not in x]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    for expected in ("govkit/templates/governance.xml.j2", "govkit/templates/permissions.xml.j2",
                     "govkit/templates/cyclonedds.xml.j2", "govkit/templates/report.html.j2",
                     "govkit/schemas/governance.xsd", "govkit/schemas/permissions.xsd",
                     "govkit/schemas/json/bench.schema.json",
                     "govkit/schemas/json/lint.schema.json",
                     "govkit/catalog/data/rti_published.csv",
                     "govkit/runners/native/fastdds_perf.cpp",
                     "govkit/runners/native/cyclone_perf.c",
                     "govkit/runners/native/readers.h",
                     "govkit/runners/native/cyclone_perf_types.idl"):
        assert expected in names, expected
    # every package of the checkout is in the wheel (pyproject.toml lists them by hand)
    for init in (ROOT / "govkit").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, init

    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=tmp_path).stdout.strip())
    # Dependencies from this environment: a plain path entry (its .pth files, such as the
    # editable govkit's, are not processed), after the venv's own site-packages.
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
         "--no-index", "-q", wheel, cwd=tmp_path)

    work = tmp_path / "work"
    work.mkdir()
    where = _run(python, "-c", "import govkit.common.paths as p; print(p.TEMPLATES_DIR); "
                               "print(p.SCHEMAS_DIR)", cwd=work).stdout.split()
    assert all(Path(d).is_relative_to(site / "govkit") for d in where), where
    govkit = env / "bin" / "govkit"
    _run(govkit, "generate", "--profile", "rtps_sign", cwd=work)
    _run(govkit, "sign", "--ca", "pki", cwd=work)
    verified = _run(govkit, "verify", "--ca", "pki", "build/governance/rtps_sign.p7s",
                    "build/permissions/pub.p7s", cwd=work)
    assert verified.stdout.count(": OK (") == 2, verified.stdout
    assert _run(govkit, "validate", "build/governance/rtps_sign.xml", cwd=work).stdout \
        .strip() == "build/governance/rtps_sign.xml: valid"


# numpy and matplotlib absent, as in `pip install govkit` (no bench extra): a finder that
# refuses them, loaded at start-up (sitecustomize) in the checks below.
_WITHOUT_BENCH_EXTRA = """
import sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _Absent())
"""


def test_without_the_bench_extra_lint_validate_sign_verify_run(tmp_path):
    """issue 37: a lint-only install for CI. Without numpy and matplotlib (pyproject.toml's
    `bench` extra) the checking and signing commands run; bench and report refuse at once
    with one line saying what to install (they were exit 3 after the work)."""
    import os
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_WITHOUT_BENCH_EXTRA)
    govkit = Path(sys.executable).with_name("govkit")
    env = {**os.environ, "PYTHONPATH": str(blocker)}

    def run(*args, code=0):
        done = subprocess.run([str(govkit), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env=env)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done
    gone = run("report", str(ROOT / "tests/data/report/full"), code=2)
    assert "No module named 'numpy'" not in gone.stderr    # the finder is in force:
    assert gone.stderr.strip() == (                        # report needs both
        "govkit: govkit report needs numpy (the statistics) and matplotlib (the report's "
        "plots), which a lint-only install leaves out: pip install 'govkit[bench]'")
    run("generate", "--profile", "rtps_sign")
    run("sign")
    assert run("verify", "build/governance/rtps_sign.p7s").stdout.count(": OK (") == 1
    run("validate", "build/governance/rtps_sign.xml")
    run("lint", "--output-format", "sarif", "build/governance/rtps_sign.p7s")
    run("pki", "status")
    run("bench", "--profile", "none", "--dry-run")        # prints, measures nothing
    said = run("bench", "--profile", "none", "--no-report", code=2).stderr
    assert "govkit bench needs numpy (the statistics), which" in said
    assert not (tmp_path / "results").exists()
