"""What the runtimes said about security: Fast DDS's DDS Security logging plugin
(`builtin.DDS_LogTopic`), on in every Fast DDS configuration govkit writes, and its file
read back into events.

The plugin's properties (Fast DDS 2.9, as rmw_fastrtps sets them from ROS_SECURITY_LOG_*):
`dds.sec.log.plugin=builtin.DDS_LogTopic`, `dds.sec.log.builtin.DDS_LogTopic.logging_level`
(EMERGENCY_LEVEL .. DEBUG_LEVEL: events at or above that severity are written),
`.log_file` (a local file, appended to) and `.distribute` (publish the events on a DDS
topic: off here, it would add traffic to what is measured). The level is
GOVKIT_SECURITY_LOG_LEVEL's, else WARNING_LEVEL: a refused identity is an EMERGENCY, a
failed handshake a WARNING, and nothing is written per message.

A line of the file: `[SECONDS.NANOS] [LEVEL] GUIDPREFIX|ENTITY DOMAIN SOURCE : MESSAGE`.
Fast DDS 2.9 often leaves MESSAGE empty (a refused local identity says only
`PKIDH::validate_local_identity : `); its reason then is in the warning its general log
printed (fastdds_perf writes those on stderr: `fastdds Warning [SECURITY_…] …`), which
`said` quotes beside the events.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

LEVELS = ("EMERGENCY_LEVEL", "ALERT_LEVEL", "CRITICAL_LEVEL", "ERROR_LEVEL", "WARNING_LEVEL",
          "NOTICE_LEVEL", "INFORMATIONAL_LEVEL", "DEBUG_LEVEL")
DEFAULT_LEVEL = "WARNING_LEVEL"
LEVEL_ENV = "GOVKIT_SECURITY_LOG_LEVEL"
LOG_FILE_PROPERTY = "dds.sec.log.builtin.DDS_LogTopic.log_file"
# a rotating pair's side names its log in its environment (FastddsRunner.explain_refusal)
SECURITY_LOG_ENV = "GOVKIT_SECURITY_LOG_FILE"
MAX_READ = 256 * 1024          # the end of a log: the run that just failed wrote it last
MAX_EVENTS = 5

_LINE = re.compile(r"^\[(?P<t>[\d.]+)\] \[(?P<level>[A-Z]+)\] (?P<guid>[0-9a-f.]+)\|\S* "
                   r"(?P<domain>\d+) (?P<source>\S+) : ?(?P<message>.*)$", re.M)
# fastdds_perf's copy of Fast DDS's general log lines about security (PlainLog)
_GENERAL = re.compile(r"^\[\d+\] fastdds (?:Warning|Error) \[(?P<cat>SECURITY[A-Z_]*)\] "
                      r"(?P<message>.*\S)\s*$", re.M)


def level() -> str:
    """The logging level of the configurations govkit writes (GOVKIT_SECURITY_LOG_LEVEL,
    a name of LEVELS, else WARNING_LEVEL)."""
    wanted = os.environ.get(LEVEL_ENV, "").strip().upper()
    if wanted and not wanted.endswith("_LEVEL"):
        wanted += "_LEVEL"
    return wanted if wanted in LEVELS else DEFAULT_LEVEL


def fastdds_properties(log_file: Path) -> list[str]:
    """The logging plugin's lines of a Fast DDS properties file."""
    return ["dds.sec.log.plugin=builtin.DDS_LogTopic",
            f"dds.sec.log.builtin.DDS_LogTopic.logging_level={level()}",
            f"{LOG_FILE_PROPERTY}={log_file}",
            "dds.sec.log.builtin.DDS_LogTopic.distribute=false"]


def log_file_of(properties: Path) -> Path | None:
    """The security log a Fast DDS properties file names (None: none, or unreadable)."""
    try:
        with open(properties, "rb") as f:
            text = f.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(LOG_FILE_PROPERTY + "="):
            return Path(line.split("=", 1)[1].strip())
    return None


@dataclass(frozen=True)
class Event:
    """One line of Fast DDS's security log."""
    t: float
    level: str
    participant: str      # the GUID prefix of the participant that logged it
    domain: int
    source: str           # the plugin function (PKIDH::begin_handshake_reply)
    message: str

    @property
    def kind(self) -> str:
        s = self.source.lower()
        if "validate_local" in s:
            return "identity_refused"
        if "handshake" in s:
            return "handshake_failed" if self.level in ("EMERGENCY", "ALERT", "CRITICAL",
                                                        "ERROR", "WARNING") else "handshake"
        if "check_" in s or "access" in s or "permissions" in s:
            return "access_denied"
        return "event"

    @property
    def pid(self) -> int | None:
        """The process id Fast DDS 2.x puts in a GUID prefix (bytes 4 and 5, little
        endian, the low 16 bits), so that a log shared by runs names its own process."""
        parts = self.participant.split(".")
        if len(parts) != 12 or parts[:2] != ["01", "0f"]:
            return None
        return int(parts[5] + parts[4], 16)

    def to_json(self) -> dict:
        return {"kind": self.kind, "level": self.level, "participant": self.participant,
                "domain": self.domain, "source": self.source, "message": self.message}

    def text(self) -> str:
        return f"[{self.level}] {self.source}" + (f": {self.message}" if self.message else "")


def read_events(path: Path | None, pid: int | None = None) -> list[Event]:
    """The events at the end of a security log (the last MAX_READ bytes), those of
    process `pid` only when given; [] when there is no file."""
    if path is None:
        return []
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - MAX_READ))
            text = f.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return []
    events = [Event(float(m["t"]), m["level"], m["guid"], int(m["domain"]), m["source"],
                    m["message"].strip()) for m in _LINE.finditer(text)]
    if pid is not None:
        events = [e for e in events if e.pid is None or e.pid == pid & 0xFFFF]
    return events


def said(stderr: str, events: list[Event]) -> list[str]:
    """What Fast DDS said about security, in its own words, once each: its general log's
    security warnings (their reason), then the security log's events."""
    words = [f"[{m['cat']}] {m['message']}" for m in _GENERAL.finditer(stderr)]
    words += [e.text() for e in events]
    return list(dict.fromkeys(words))[:MAX_EVENTS]
