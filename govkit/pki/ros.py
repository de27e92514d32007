"""ROS 2 names: enclave paths as participants, and the DDS names of ROS topics, services
and actions (what rmw calls them on the wire, so what a permissions grant must name).

An enclave path (rcl's enclave names, as sros2 writes them into the certificate CN) is
'/' and tokens of letters, digits and '_' that do not start with a digit, at most 64
characters (X.520's bound on a CN). Both vendors accept CN=/ns/node, checked with real
processes (tests/integration/test_ros2_enclaves.py): Fast DDS 2.9 compares whole
','-separated parts; Cyclone DDS 0.10 splits the subject at '/' as well, but reads a piece
without '=' as a NAME with an empty value, on both sides alike, so the pieces still match
(govkit.pki.names.cyclone_accepts, which also says what that costs).

'/' cannot be in a file name: an enclave participant's files are named with '+' for each
'/' (+talker_listener+talker.pem), a character plain names never hold, so a file stem
says which participant it is (and `pki init --force` reissues it with the same CN).

rmw (rmw_dds_common's name mangling, the same in rmw_cyclonedds and rmw_fastrtps): a
topic /chatter is the DDS topic rt/chatter; a service /add_two_ints is the request topic
rq/add_two_intsRequest (the client publishes, the server subscribes) and the reply topic
rr/add_two_intsReply (the other way round); an action /fibonacci is the services
/fibonacci/_action/{send_goal,cancel_goal,get_result} and the topics
/fibonacci/_action/{feedback,status}, published by the action server.
"""

from __future__ import annotations

import re

_ENCLAVE_RE = re.compile(r"(?:/[A-Za-z_][A-Za-z0-9_]*)+")
MAX_ENCLAVE = 64
ENCLAVE_MARK = "+"

# Participants-file columns holding ROS names (space-separated, fully qualified; the
# fnmatch wildcards * ? [ ] ! pass through into the DDS names).
ROS_COLUMNS = ("ros_publish", "ros_subscribe", "ros_serve", "ros_call",
               "ros_action_serve", "ros_action_call")
_ROS_NAME_RE = re.compile(r"/?[A-Za-z0-9_/*?\[\]!]{1,240}")
_ACTION_SERVICES = ("send_goal", "cancel_goal", "get_result")
_ACTION_TOPICS = ("feedback", "status")


def is_enclave(name: str) -> bool:
    """`name` is a ROS 2 enclave path (/ns/node)."""
    return len(name) <= MAX_ENCLAVE and _ENCLAVE_RE.fullmatch(name) is not None


def enclave_stem(path: str) -> str:
    """The file stem of the participant with enclave path `path` (/a/b -> +a+b)."""
    return path.replace("/", ENCLAVE_MARK)


def common_name(stem: str) -> str:
    """The certificate CN of the participant whose files are named `stem`."""
    return stem.replace(ENCLAVE_MARK, "/") if stem.startswith(ENCLAVE_MARK) else stem


def enclave_of(cn: str) -> str | None:
    """The enclave path under which a keystore holds the identity with this CN: the CN if
    it is an enclave path, /CN if that is one, else None (rcl would refuse the name)."""
    path = cn if cn.startswith("/") else f"/{cn}"
    return path if is_enclave(path) else None


def ros_name_problem(name: str) -> str | None:
    """Why `name` is no ROS topic, service or action name (None if it is one)."""
    if _ROS_NAME_RE.fullmatch(name) and "//" not in name and not name.endswith("/"):
        return None
    return ("use a fully qualified ROS name: '/' and names of letters, digits and '_' "
            "(the wildcards * ? [ ] ! allowed), no '//' or '/' at the end")


def _topic(name: str) -> str:
    return "rt/" + name.lstrip("/")


def _request(name: str) -> str:
    return "rq/" + name.lstrip("/") + "Request"


def _reply(name: str) -> str:
    return "rr/" + name.lstrip("/") + "Reply"


def dds_topics(ros: dict[str, tuple[str, ...]]) -> tuple[list[str], list[str]]:
    """(publish, subscribe): the DDS topics for the ROS names of each ROS_COLUMNS column,
    in column order, each once."""
    publish: list[str] = []
    subscribe: list[str] = []
    for name in ros.get("ros_publish", ()):
        publish.append(_topic(name))
    for name in ros.get("ros_subscribe", ()):
        subscribe.append(_topic(name))
    for column, serves in (("ros_serve", True), ("ros_call", False)):
        for name in ros.get(column, ()):
            (subscribe if serves else publish).append(_request(name))
            (publish if serves else subscribe).append(_reply(name))
    for column, serves in (("ros_action_serve", True), ("ros_action_call", False)):
        for name in ros.get(column, ()):
            base = name.rstrip("/") + "/_action/"
            for service in _ACTION_SERVICES:
                (subscribe if serves else publish).append(_request(base + service))
                (publish if serves else subscribe).append(_reply(base + service))
            for topic in _ACTION_TOPICS:
                (publish if serves else subscribe).append(_topic(base + topic))
    return list(dict.fromkeys(publish)), list(dict.fromkeys(subscribe))
