"""What govkit prints through, without typer: the consoles (made on first use), the plain
line printers and the --json wrapper. common.py re-exports them for the command modules;
the fast entry (fast.py) and lint_validate.py use them directly, so `govkit lint` prints
exactly the same bytes whichever way it was parsed.
"""

import sys

from govkit.common.findings import printable, without_surrogates


class _LazyConsole:
    """A rich Console made when first used (importing rich costs more than the rest of
    `govkit --help`)."""

    def __init__(self, make, stderr: bool = False):
        self._make, self._console, self._stderr = make, None, stderr

    def get(self):
        """The Console itself (for code that uses it as more than a printer)."""
        if self._console is None:
            self._console = self._make()
        return self._console

    def print(self, *objects, **options) -> None:
        """Console.print, with every control character shown, not obeyed (`shown`): what
        govkit prints holds file names and values from files."""
        if all(type(o) is str for o in objects) and options in ({}, {"markup": False}):
            # Plain strings print as rich would print them (VERBATIM, soft_wrap), save tabs,
            # which rich expands: without importing rich (30 ms of `govkit validate`).
            text = " ".join(map(printable, objects))
            if "\t" not in text:
                file = sys.stderr if self._stderr else sys.stdout
                file.write(text + "\n")
                file.flush()
                return
        self.get().print(*map(shown, objects), **options)

    def __getattr__(self, name):
        return getattr(self.get(), name)


class _Shown:
    """A rich renderable (a Table, a Text) whose text is printed through `printable`: a
    cell from results.json holding ESC is shown as \\x1b, not obeyed. Applied to the text
    of the rendered segments, so rich's own styles (given apart from the text) still work."""

    def __init__(self, inner):
        self.inner = inner

    def __rich_console__(self, console, options):
        from rich.segment import Segment
        for segment in console.render(self.inner, options):
            yield segment if segment.control else Segment(
                printable(segment.text), segment.style)

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement
        return Measurement.get(console, options, self.inner)


def shown(obj):
    """What govkit prints, control characters shown: a string through `printable`, any
    other renderable wrapped so its text is."""
    return printable(obj) if isinstance(obj, str) else _Shown(obj)


def _console(**options):
    def make():
        from rich.console import Console
        return Console(**options)
    return make


# Every string is printed as it is: no rich markup ("[red]") and no emoji codes (":x:") are
# read in what govkit prints, so a path or a value from a file can never be taken for either;
# styles are given as style= or rich Text, never inside a string (issue 23).
VERBATIM = {"markup": False, "emoji": False, "highlight": False}
out = _LazyConsole(_console(soft_wrap=True, **VERBATIM))
err = _LazyConsole(_console(stderr=True, soft_wrap=True, **VERBATIM), stderr=True)


def json_text(obj) -> str:
    """`obj` as indented JSON, valid UTF-8 whatever its strings hold (without_surrogates:
    a file name that is not UTF-8)."""
    import json  # on use: govkit --help does not need it
    return json.dumps(without_surrogates(obj), indent=2)


def json_document(command: str, **fields) -> str:
    """A command's --json output: one wrapper for every command, `{"schema":
    "govkit.COMMAND/1", ...}` (schemas/json/COMMAND.schema.json describes each); the version
    changes when a field changes meaning or goes away, not when one is added."""
    return json_text({"schema": f"govkit.{command}/1", **fields})


def print_lines(lines) -> None:
    """Many plain lines to stdout at once (rich prints one line in tens of µs: 20,000
    "wrote" lines would take longer than writing the files)."""
    text = printable("".join(f"{line}\n" for line in lines))
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
