"""The compiled-template cache (govkit.common.templating): a second process loads what the
first compiled, renders the same text, and anything wrong with the cache directory or its
files is a miss, never an error or someone else's code run."""

from __future__ import annotations

import os
import subprocess
import sys

import jinja2

from govkit.common import templating

# Renders the test's template in a new process (a new Environment, as every govkit command
# makes) and prints it; the test compares the text and looks at the cache directory.
RENDER = """
import sys, jinja2
from govkit.common.templating import template_environment
env = template_environment(trim_blocks=sys.argv[2] == "trim")
env.loader = jinja2.FileSystemLoader(sys.argv[1])
sys.stdout.write(env.get_template("t.html.j2").render(names=["a<b", "c"]))
"""
TEMPLATE = """<ul>
{% for n in names %}
  <li>{{ n }}</li>
{% endfor %}
</ul>
"""


def render(tmp_path, trim="plain"):
    templates = tmp_path / "templates"
    templates.mkdir(exist_ok=True)
    if not (templates / "t.html.j2").exists():
        (templates / "t.html.j2").write_text(TEMPLATE)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", RENDER, str(templates), trim], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return out.stdout


def cached(tmp_path):
    directory = tmp_path / "cache" / "govkit" / templating.TEMPLATE_CACHE
    return sorted(directory.iterdir()) if directory.is_dir() else []


def uncached(trim):
    env = jinja2.Environment(loader=jinja2.DictLoader({"t.html.j2": TEMPLATE}),
                             autoescape=True, keep_trailing_newline=True,
                             trim_blocks=trim, lstrip_blocks=trim)
    return env.get_template("t.html.j2").render(names=["a<b", "c"])


def test_a_second_process_uses_what_the_first_compiled(tmp_path):
    first = render(tmp_path)
    assert first == uncached(False) and "a&lt;b" in first
    files = cached(tmp_path)
    assert len(files) == 1
    assert (files[0].stat().st_mode & 0o777) == 0o600
    assert (files[0].parent.stat().st_mode & 0o777) == 0o700
    stamp = files[0].stat().st_mtime_ns
    assert render(tmp_path) == first
    assert cached(tmp_path) == files and files[0].stat().st_mtime_ns == stamp  # read, not rewritten


def test_settings_that_change_the_compiled_code_get_their_own_entry(tmp_path):
    """The same template compiled with and without trim_blocks: two entries, each
    rendering as its own environment would without any cache."""
    plain, trim = render(tmp_path, "plain"), render(tmp_path, "trim")
    assert len(cached(tmp_path)) == 2
    assert (plain, trim) == (uncached(False), uncached(True)) and plain != trim
    assert (render(tmp_path, "plain"), render(tmp_path, "trim")) == (plain, trim)


def test_a_corrupt_or_stale_entry_is_a_miss(tmp_path):
    first = render(tmp_path)
    [entry] = cached(tmp_path)
    data = entry.read_bytes()
    entry.write_bytes(data[:len(data) // 2] + b"\x00garbage")     # a half-written file
    assert render(tmp_path) == first
    assert entry.read_bytes() == data                               # compiled and written again
    for broken in (b"", data[:16], data[:40], b"j2" + bytes(range(256))):
        entry.write_bytes(broken)             # cut inside the header and its checksum
        assert render(tmp_path) == first
    (tmp_path / "templates" / "t.html.j2").write_text(TEMPLATE.replace("li>", "p>"))
    assert render(tmp_path) == first.replace("li>", "p>")          # a changed template
    assert render(tmp_path) == first.replace("li>", "p>")


def test_a_cache_that_cannot_be_written_is_no_cache(tmp_path):
    """Where the compiled code cannot be stored (here a directory holds the entry's name;
    a full or read-only disk fails the same way), the template is compiled every time."""
    first = render(tmp_path)
    [entry] = cached(tmp_path)
    entry.unlink()
    entry.mkdir()
    (entry / "x").write_text("x")
    assert render(tmp_path) == first
    assert [p.name for p in cached(tmp_path)] == [entry.name] and entry.is_dir()


def test_a_directory_others_may_write_is_not_used(tmp_path):
    """Its files are code this process would run: a directory writable by group or others
    (or owned by another user, or a symlink) is never read from or written to."""
    directory = tmp_path / "cache" / "govkit" / templating.TEMPLATE_CACHE
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    assert render(tmp_path) == uncached(False)
    assert cached(tmp_path) == []
    directory.chmod(0o700)
    directory.rename(tmp_path / "elsewhere")
    directory.symlink_to(tmp_path / "elsewhere")
    assert render(tmp_path) == uncached(False)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_file_where_the_directory_belongs_is_no_cache(tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "govkit").write_text("not a directory")
    assert render(tmp_path) == uncached(False)
    assert (tmp_path / "cache" / "govkit").read_text() == "not a directory"


def test_compile_settings_differ_where_the_code_would():
    base = jinja2.Environment()
    same = jinja2.Environment()
    assert templating.compile_settings(base, "x") == templating.compile_settings(same, "x")
    for other in (jinja2.Environment(trim_blocks=True), jinja2.Environment(autoescape=True),
                  jinja2.Environment(finalize=str), base.overlay(autoescape=True),
                  jinja2.Environment(variable_start_string="[[")):
        assert templating.compile_settings(other, "x") != templating.compile_settings(base, "x")
    chooser = jinja2.Environment(autoescape=jinja2.select_autoescape(["html"]))
    assert templating.compile_settings(chooser, "a.html") != \
        templating.compile_settings(chooser, "a.md")
