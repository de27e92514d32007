"""Fleets of participants: who they are, what their certificates say, what they may do.

A participants file is either one name per line, or CSV whose first line is a header
starting with ``name``. Blank lines and lines starting with ``#`` are skipped. Columns:

  name                the participant: a plain name (certificate CN and file name) or a
                      ROS 2 enclave path such as /talker_listener/talker (the CN; its
                      files are named +talker_listener+talker: `enclave_stem`)
  organization, unit  the certificate's O and OU (default O: the test PKI's own)
  country             the certificate's C (two letters)
  publish, subscribe  the topics it may publish / subscribe, separated by spaces
  partitions          the partitions both may use, separated by spaces
  ros_publish, ros_subscribe, ros_serve, ros_call, ros_action_serve, ros_action_call
                      ROS 2 topic, service and action names (/chatter), granted as the
                      DDS topics rmw uses for them (rt/chatter, rq/…Request,
                      rr/…Reply: govkit.pki.ros), after publish and subscribe

With a ``publish``, ``subscribe`` or ``ros_*`` column every row states its own grants (an
empty cell grants nothing; no ``partitions`` means the default partition only). Without
them every participant gets the benchmark runner's topics, as ``govkit generate`` always
did.

Every value is checked here, with one-line errors naming FILE:LINE, so nothing later can
write a certificate or document Cyclone DDS would read differently. This module imports
no crypto or XML library: the command line parses a file before loading them.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import quote_input, quote_value
from govkit.common.inputs import read_text_input
from govkit.common.limits import MAX_FLEET, MAX_PARTICIPANTS_BYTES, MAX_TOPICS_PER_ACTION
from govkit.pki.ros import (
    ENCLAVE_MARK,
    MAX_ENCLAVE,
    ROS_COLUMNS,
    common_name,
    dds_topics,
    enclave_stem,
    is_enclave,
    ros_name_problem,
)

# A certificate CN and a file name at once: no ',' '/' '|' '+' (Cyclone DDS 0.10 splits
# subject names on them and does not trim spaces), no leading '.' or '-' (hidden files,
# options), no '--' (not allowed inside the XML comment that names the participant), at
# most 63 characters.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
CA_STEMS = ("identity_ca", "permissions_ca")
# The Identity CA's certificate revocation list (govkit.pki.revocation), beside the CAs: a
# .pem file that is no certificate.
CRL_STEM = "identity_ca.crl"
# Subject values: the same separators are refused, spaces only inside (Cyclone compares
# the text verbatim, and RFC 4514 would escape a space at either end); 64 is X.520's bound.
_SUBJECT_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 ._-]{0,62}[A-Za-z0-9._-])?")
_COUNTRY_RE = re.compile(r"[A-Z]{2}")
# Topic and partition names, fnmatch wildcards allowed; spaces separate them in a cell.
_PATTERN_RE = re.compile(r"[A-Za-z0-9_.:/*?\[\]!-]{1,256}")
COLUMNS = ("name", "organization", "unit", "country", "publish", "subscribe", "partitions",
           *ROS_COLUMNS)


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a participant (None if it can): a plain name, an enclave path
    or an enclave's file stem."""
    if name.startswith(("/", ENCLAVE_MARK)):
        path = common_name(name) if name.startswith(ENCLAVE_MARK) else name
        if is_enclave(path):
            return None
        return (f"invalid enclave path {quote_input(path, ENCLAVE_CHARS)}: a ROS 2 enclave is "
                f"'/' and names of letters, digits and '_' that do not start with a digit, "
                f"separated by single '/' (no '/' at the end), at most {MAX_ENCLAVE} "
                f"characters (the certificate CN's bound)")
    if not _NAME_RE.fullmatch(name) or name in CA_STEMS or "--" in name:
        return f"invalid participant name {quote_input(name)}: {_broken_rule(name)}"
    return None


def _broken_rule(name: str) -> str:
    """The first rule of a participant name that `name` breaks, as a message says it."""
    if not name:
        return "a name is at least one character"
    if re.search(r"[^A-Za-z0-9_.-]", name):
        return ("use letters, digits, '_', '.', '-' (no ',' '/' '|' '+' or spaces: Cyclone "
                "splits subject names on them); or a ROS 2 enclave path such as "
                "/talker_listener/talker")
    if not name[0].isalnum():
        return f"a name starts with a letter or digit, not {name[0]!r} (it names files)"
    if len(name) > 63:
        return f"at most 63 characters, not {len(name)}"
    if "--" in name:
        return "no '--' (the documents name their participant in an XML comment)"
    return f"{name} is the name of a CA's files"


@dataclass(frozen=True)
class Grants:
    """What one participant may publish and subscribe, and in which partitions."""
    publish: tuple[str, ...] = ()
    subscribe: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Participant:
    name: str                         # the file stem: an enclave path becomes its stem
    organization: str | None = None   # None: the test PKI's own organization
    unit: str | None = None
    country: str | None = None
    grants: Grants | None = None      # None: the benchmark runner's topics

    def __post_init__(self):
        if is_enclave(self.name):   # anything else starting with '/' stays, to be refused
            object.__setattr__(self, "name", enclave_stem(self.name))

    @property
    def common_name(self) -> str:
        """The certificate's CN: the name, or the enclave path for an enclave's stem."""
        return common_name(self.name)


# The characters each kind of value may hold: an error quotes a value only when it holds
# nothing else (common.findings.quote_input).
ENCLAVE_CHARS = r"[A-Za-z0-9_/]"
PATTERN_CHARS = r"[A-Za-z0-9_.:/*?\[\]!\-]"
ROS_CHARS = r"[A-Za-z0-9_/~{}]"
SUBJECT_CHARS = r"[A-Za-z0-9_. \-]"


def _fail(where: str, message: str) -> GovkitError:
    return GovkitError(f"{where}: {message}", EXIT_USAGE)


def _patterns(cell: str, column: str, where: str) -> tuple[str, ...]:
    items = tuple(cell.split())
    if len(items) > MAX_TOPICS_PER_ACTION:
        raise _fail(where, f"{len(items)} {column} (limit {MAX_TOPICS_PER_ACTION}: a document "
                           f"element may hold at most that many)")
    for item in items:
        if not _PATTERN_RE.fullmatch(item):
            raise _fail(where, f"invalid name {quote_input(item, PATTERN_CHARS)} in {column}: "
                               f"use letters, digits, '_' '.' ':' '/' '-' and the wildcards "
                               f"* ? [ ] !")
    if len(set(items)) != len(items):
        raise _fail(where, f"{column} names a topic or partition twice")
    return items


def _ros_names(cell: str, column: str, where: str) -> tuple[str, ...]:
    items = tuple(cell.split())
    for item in items:
        problem = ros_name_problem(item)
        if problem:
            raise _fail(where, f"invalid ROS name {quote_input(item, ROS_CHARS)} in {column}: "
                               f"{problem}")
    return items


def _with(dds: tuple[str, ...], ros: list[str], action: str, where: str) -> tuple[str, ...]:
    """The DDS topics of a grant: those named as such, then the ROS names' DDS forms (a
    topic named both ways once)."""
    items = tuple(dict.fromkeys((*dds, *ros)))
    if len(items) > MAX_TOPICS_PER_ACTION:
        raise _fail(where, f"{len(items)} topics to {action} (limit {MAX_TOPICS_PER_ACTION}: "
                           f"a document element may hold at most that many)")
    return items


def _subject_value(cell: str, column: str, where: str) -> str | None:
    if not cell:
        return None
    pattern = _COUNTRY_RE if column == "country" else _SUBJECT_RE
    if not pattern.fullmatch(cell):
        rule = "two capital letters" if column == "country" else (
            "letters, digits, spaces inside, '_' '.' '-', at most 64 (no ',' '/' '|' '+': "
            "Cyclone splits subject names on them)")
        raise _fail(where, f"invalid {column} {quote_input(cell, SUBJECT_CHARS)}: use {rule}")
    return cell


def _header(row: list[str], where: str) -> list[str]:
    columns = [c.strip().lower() for c in row]
    for c in columns:
        if c not in COLUMNS:
            raise _fail(where, f"unknown column {quote_input(c)}; known: {', '.join(COLUMNS)}")
    if len(set(columns)) != len(columns):
        raise _fail(where, "a column is named twice")
    return columns


def _participant(cells: dict[str, str], explicit_grants: bool, where: str) -> Participant:
    name = cells.get("name", "")
    problem = name_problem(name)
    if problem:
        raise _fail(where, problem)
    grants = None
    if explicit_grants:
        publish, subscribe, partitions = (_patterns(cells.get(c, ""), c, where)
                                          for c in ("publish", "subscribe", "partitions"))
        ros_publish, ros_subscribe = dds_topics({c: _ros_names(cells.get(c, ""), c, where)
                                                 for c in ROS_COLUMNS})
        grants = Grants(_with(publish, ros_publish, "publish", where),
                        _with(subscribe, ros_subscribe, "subscribe", where), partitions)
    return Participant(name, *(_subject_value(cells.get(c, ""), c, where)
                               for c in ("organization", "unit", "country")), grants)


def parse_participants(text: str, source: str) -> list[Participant]:
    """The participants `text` lists (see the module docstring); `source` names it in
    errors as SOURCE:LINE."""
    # Comment lines become empty lines before the CSV reader sees them (a quote inside a
    # comment must not start a field), so line numbers stay those of the file.
    text = "\n".join("" if line.lstrip().startswith("#") else line
                     for line in text.split("\n"))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    columns: list[str] | None = None
    found: list[Participant] = []
    lines: dict[str, int] = {}
    first, explicit_grants = True, False
    try:
        for row in reader:
            where = f"{source}:{reader.line_num}"
            if not "".join(row).strip():
                continue
            cells = [c.strip() for c in row]
            if first and cells[0].lower() == "name":
                columns, first = _header(row, where), False
                explicit_grants = bool({"publish", "subscribe", *ROS_COLUMNS} & set(columns))
                continue
            first = False
            if columns is None and len(cells) != 1:
                raise _fail(where, f"{len(cells)} fields but no header line: a CSV participants "
                                   f"file starts with one (e.g. name,organization,publish)")
            if columns is not None and len(cells) > len(columns):
                raise _fail(where, f"{len(cells)} fields, the header has {len(columns)}")
            p = _participant(dict(zip(columns or ["name"], cells, strict=False)),
                             explicit_grants, where)
            if p.name in lines:
                raise _fail(where, f"participant {p.common_name} is already on line "
                                   f"{lines[p.name]}")
            lines[p.name] = reader.line_num
            found.append(p)
            if len(found) > MAX_FLEET:
                raise _fail(where, f"more than {MAX_FLEET} participants")
    except csv.Error as e:
        raise _fail(f"{source}:{reader.line_num}", f"not CSV: {e}") from None
    if not found:
        raise GovkitError(f"{source}: lists no participants", EXIT_USAGE)
    return found


def read_participants(path: Path) -> list[Participant]:
    """The participants file at `path`, read like every input (regular file, size limit)."""
    text = read_text_input(path, MAX_PARTICIPANTS_BYTES, "participants file", "utf-8-sig")
    return parse_participants(text, str(path))


def numbered_participants(count: int, prefix: str) -> list[Participant]:
    """`count` participants PREFIX0…, zero-padded to one width (for tests and benchmarks)."""
    if not 1 <= count <= MAX_FLEET:
        raise GovkitError(f"--count must be between 1 and {MAX_FLEET}", EXIT_USAGE)
    width = len(str(count - 1))
    names = [f"{prefix}{i:0{width}d}" for i in range(count)]
    for name in (names[0], names[-1]):   # same prefix and width: the ends stand for all
        problem = name_problem(name)
        if problem:
            raise GovkitError(f"--prefix {quote_value(prefix)}: {problem}", EXIT_USAGE)
    return [Participant(n) for n in names]


def merge_participants(names: list[str], file: Path | None, count: int | None,
                       prefix: str) -> list[Participant]:
    """The participants named one by one (`names`), read from `file` and numbered (`count`
    of them, named `prefix`0..), in that order; a name given twice is a GovkitError (the
    command line's --participant, --participants and --count)."""
    fleet = [Participant(n) for n in names]
    if file is not None:
        fleet += read_participants(file)
    if count is not None:
        fleet += numbered_participants(count, prefix)
    seen: set[str] = set()
    for p in fleet:
        if p.name in seen:
            raise GovkitError(f"participant {p.common_name} is named twice (--participant, "
                              f"--participants, --count)", EXIT_USAGE)
        seen.add(p.name)
    return fleet
