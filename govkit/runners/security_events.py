"""The runtimes' security events as data: every security log a run's processes wrote in
its configuration directory, read into one list of events (results.json's
`security_events`, docs/reference/results-json.md).

Where the words come from:
- Fast DDS: its DDS Security logging plugin's file (govkit.runners.security_log), one per
  profile and side, appended to by every process of the run; a line names the domain and
  the GUID prefix of the participant that wrote it.
- Cyclone DDS: its trace file. Neither 0.10.2 nor 11.0.1 has a security category (their
  `Tracing/Category` words are fatal, error, warning, info, config, discovery, data, trace,
  radmin, timing, traffic, topic, tcp, plist, whc, throttle, rhc, content, and shm in 0.10,
  malformed, user1-3 in 11; /usr/include/dds/ddsrt/log.h and the vendored 11.0.1's). Its
  security code writes a refused handshake, a refused participant and a denied access as
  warnings and errors (ddsi_handshake.c, ddsi_security_omg.c); a handshake begun or done is
  in `trace` only (everything: not on in a measured run), and so is a denial on a topic
  whose discovery is protected (the topic name is then secret). So govkit's configuration
  keeps `warning` (fatal, error and warning) in a file per process
  (`…-DOMAIN-PID.security.log`: Cyclone expands ${CYCLONEDDS_DOMAIN_ID} and
  ${CYCLONEDDS_PID} in its configuration), and the lines about security are the events.

A repeated line (a handshake is retried every second) is one event with its `count`.
Each file is read from its last MAX_READ bytes; at most MAX_STORED events are kept.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path, PurePath

from govkit.runners.security_log import MAX_READ, read_events

KINDS = ("handshake_begun", "handshake_ok", "handshake_failed", "identity_refused",
         "participant_refused", "access_denied", "other")
MAX_STORED = 200
MAX_REASON = 400
MAX_FILES = 500

# a Fast DDS file: fastdds-PROFILE-ROLE.security.log (FastddsRunner.security_log_path)
_FASTDDS_FILE = re.compile(r"^fastdds-(?P<profile>.+)-(?P<role>pub|sub)\.security\.log$")
# a Cyclone file: cyclonedds-PROFILE[-NET]-ROLE-DOMAIN-PID.security.log (cyclone_log_pattern)
_CYCLONE_FILE = re.compile(r"^cyclonedds-(?P<profile>.+)-(?P<role>pub|sub)-(?P<domain>\d+)-"
                           r"(?P<pid>\d+)\.security\.log$")
# Cyclone's log line: `SECONDS.MICROS [DOMAIN] THREAD: MESSAGE`
_CYCLONE_LINE = re.compile(r"^(?P<t>\d+\.\d+) \[(?P<domain>\d*)\]\s+[^:]*: (?P<message>.*\S)\s*$",
                           re.M)
_CYCLONE_SECURITY = re.compile(
    r"handshake|identity|permission|certificate|access control|not allowed|not permitted|"
    r"governance|security|crypto|credential|PKCS7|X509", re.I)
_GUID = re.compile(r"\b([0-9a-f]{1,8}:[0-9a-f]{1,8}:[0-9a-f]{1,8}:[0-9a-f]{1,8})\b")
_TOPIC = re.compile(r"\btopic[ :]+['\"]?([A-Za-z_][\w/:]*)")


def cyclone_log_pattern(config: PurePath) -> str | None:
    """Where a Cyclone configuration sends its warnings (Tracing/OutputFile): beside it,
    one file per domain and process; None for a configuration on another host (nothing
    would bring its file back)."""
    if not isinstance(config, Path):
        return None
    stem = config.name.removesuffix(".xml")
    return str(config.parent / f"{stem}-${{CYCLONEDDS_DOMAIN_ID}}-${{CYCLONEDDS_PID}}"
                                f".security.log")


def cyclone_logged(config: Path, domain_id: int) -> str:
    """What the processes started with a Cyclone configuration wrote to their warning logs
    on `domain_id` (cyclone_log_pattern), their last MAX_READ bytes each: Cyclone's own
    words when its stderr was not kept, or lost them among other lines."""
    stem = config.name.removesuffix(".xml")
    paths = sorted(config.parent.glob(f"{glob_escape(stem)}-{domain_id}-*.security.log"))
    return "\n".join(_tail(p) for p in paths[:MAX_FILES] if p.is_file() and not p.is_symlink())


@dataclass
class SecurityEvent:
    runtime: str
    file: str
    profile: str
    role: str
    domain_id: int | None
    pid: int | None
    time: float | None
    kind: str
    level: str | None
    participant: str | None
    topic: str | None
    source: str | None
    reason: str
    count: int = 1

    def to_json(self) -> dict:
        return {"runtime": self.runtime, "file": self.file, "profile": self.profile,
                "role": self.role, "domain_id": self.domain_id, "pid": self.pid,
                "time": self.time, "kind": self.kind, "level": self.level,
                "participant": self.participant, "topic": self.topic, "source": self.source,
                "reason": self.reason, "count": self.count}

    def text(self) -> str:
        """One line a reader can quote: which side, then the runtime's words."""
        who = "ping" if self.role == "pub" else "pong"
        where = f" on {self.topic}" if self.topic else ""
        return (f"{who} ({self.profile}, domain {self.domain_id}): {self.kind}{where}: "
                f"{self.reason}" + (f" (×{self.count})" if self.count > 1 else ""))


def cyclone_kind(message: str) -> str:
    """What a Cyclone security line is about, from its words (ddsi_handshake.c,
    ddsi_security_omg.c, the builtin plugins)."""
    m = message.lower()
    if "handshake succeeded" in m:
        return "handshake_ok"
    if "begin_handshake" in m and "failed" not in m:
        return "handshake_begun"
    if ("not allow" in m or "not permitted" in m or "permission denied" in m) and \
            "create participant" not in m:
        return "access_denied"
    if "remote identity" in m or "handshake" in m or "shared secret" in m or \
            "peer_credential" in m:
        return "handshake_failed"
    if "local identity" in m or "identity token" in m:
        return "identity_refused"
    if "local permission" in m or "create participant" in m or "local participant" in m:
        return "participant_refused"
    return "other"


def _fastdds_kind(kind: str, message: str) -> str:
    if kind in ("identity_refused", "handshake_failed", "access_denied"):
        return kind
    if kind == "handshake":
        return "handshake_ok" if "ok" in message.lower() else "handshake_begun"
    return "other"


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            if not os.path.isfile(path):
                return ""
            f.seek(max(0, os.fstat(f.fileno()).st_size - MAX_READ))
            return f.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return ""


def _fastdds(path: Path, rel: str, profile: str, role: str) -> list[SecurityEvent]:
    return [SecurityEvent("fastdds", rel, profile, role, e.domain, e.pid, e.t,
                          _fastdds_kind(e.kind, e.message), e.level, e.participant,
                          _topic(e.message), e.source,
                          (f"{e.source}: {e.message}" if e.message else e.source)[:MAX_REASON])
            for e in read_events(path)]


def _cyclone(path: Path, rel: str, profile: str, role: str, domain: int, pid: int
             ) -> list[SecurityEvent]:
    events = []
    for m in _CYCLONE_LINE.finditer(_tail(path)):
        message = m["message"]
        if not _CYCLONE_SECURITY.search(message):
            continue
        guid = _GUID.search(message)
        events.append(SecurityEvent("cyclone", rel, profile, role,
                                    int(m["domain"]) if m["domain"] else domain, pid,
                                    float(m["t"]), cyclone_kind(message), None,
                                    guid[1] if guid else None, _topic(message), None,
                                    message[:MAX_REASON]))
    return events


def _topic(message: str) -> str | None:
    m = _TOPIC.search(message)
    return m[1] if m else None


def collect(directory: Path, root: Path | None = None) -> list[SecurityEvent]:
    """Every security event of the logs under `directory` (a run's configuration
    directory), repeated lines merged, in time order; file names relative to `root`."""
    root = root or directory
    found: list[SecurityEvent] = []
    paths = sorted(Path(directory).rglob("*.security.log"))[:MAX_FILES] \
        if Path(directory).is_dir() else []
    for path in paths:
        if path.is_symlink() or not path.is_file():
            continue
        rel = str(path.relative_to(root)) if path.is_relative_to(root) else path.name
        if m := _FASTDDS_FILE.match(path.name):
            found += _fastdds(path, rel, m["profile"], m["role"])
        elif m := _CYCLONE_FILE.match(path.name):
            found += _cyclone(path, rel, m["profile"], m["role"], int(m["domain"]),
                              int(m["pid"]))
    merged: dict[tuple, SecurityEvent] = {}
    for e in sorted(found, key=lambda e: (e.time or 0.0)):
        key = (e.runtime, e.file, e.domain_id, e.pid, e.kind, e.reason)
        if key in merged:
            merged[key].count += 1
        else:
            merged[key] = e
    return list(merged.values())[:MAX_STORED]
