"""ROS 2 names as sros2 writes them into permissions: one home for the rules, used by the
permissions of a policy and by the protection sidecar alike, so the two can never name a
topic differently.

The rules are those of sros2's policy -> permissions transform (release 0.13.0,
templates/permissions.xsl), kept character for character, quirks included:
- a name starting with '/' is fully qualified as written;
- '~' starts a private name: the profile's namespace (with a '/' added unless it ends in
  one), the node's name, then the rest of the name ('~/get_state' of node talker in '/'
  is '/talker/get_state'; '~x' would be '/talkerx', as sros2 writes it);
- any other name is relative: the namespace (with its '/'), then the name;
- the DDS name is the prefix written in front of that, with no separator: topic `rt`,
  service request `rq…Request`, reply `rr…Reply` (rmw_dds_common's mangling, the same in
  rmw_cyclonedds and rmw_fastrtps); an action is its three services
  `_action/{cancel_goal,get_result,send_goal}` and its topics `_action/{feedback,status}`.
Wildcards (`*`, `?`, `[...]`) pass through: DDS Security matches topic names with fnmatch.

Who publishes what (the permissions' publish / subscribe), per qualifier attribute:
  topics   publish:   publish rt        subscribe:  subscribe rt
  services request:   publish rq, subscribe rr      reply:   publish rr, subscribe rq
  actions  call:      publish the requests, subscribe the replies and both topics
           execute:   publish the replies and both topics, subscribe the requests
"""

from __future__ import annotations

CATEGORIES = {"topics": "topic", "services": "service", "actions": "action"}
# The qualifier attributes of each list, in the order sros2's transform reads them.
QUALIFIERS = {"topics": ("publish", "subscribe"), "services": ("request", "reply"),
              "actions": ("call", "execute")}
ACTION_SERVICES = ("cancel_goal", "get_result", "send_goal")
ACTION_TOPICS = ("feedback", "status")
# rmw's own topic (rmw_dds_common's graph cache), which sros2 grants to every enclave for
# rmw_cyclonedds_cpp and rmw_fastrtps_cpp (its allow_ros_discovery_topic): a node is refused
# without it.
ROS_DISCOVERY_TOPIC = "ros_discovery_info"


def _delimited(ns: str) -> str:
    return ns if ns.endswith("/") else ns + "/"


def qualified(name: str, ns: str = "/", node: str | None = None) -> str:
    """The fully qualified ROS name of `name` as written in a profile of node `node` in
    namespace `ns` (sros2's rules, module docstring). ValueError for a '~' name without a
    node."""
    if name.startswith("/"):
        return name
    if name.startswith("~"):
        if node is None:
            raise ValueError("a private name (~) needs a node")
        return _delimited(ns) + node + name[1:]
    return _delimited(ns) + name


def topic(fqn: str) -> str:
    return "rt" + fqn


def request(fqn: str) -> str:
    return "rq" + fqn + "Request"


def reply(fqn: str) -> str:
    return "rr" + fqn + "Reply"


def dds_names(category: str, fqn: str) -> tuple[str, ...]:
    """Every DDS topic a ROS name of `category` (topic, service, action) stands for."""
    if category == "topic":
        return (topic(fqn),)
    if category == "service":
        return (request(fqn), reply(fqn))
    base = fqn + "/_action/"
    return (*(request(base + s) for s in ACTION_SERVICES),
            *(reply(base + s) for s in ACTION_SERVICES),
            *(topic(base + t) for t in ACTION_TOPICS))


def grants(category: str, qualifier: str, fqn: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(publish, subscribe): the DDS topics one qualifier attribute (publish, subscribe,
    request, reply, call, execute) of a `category` list grants for the name `fqn`."""
    if category == "topic":
        return ((topic(fqn),), ()) if qualifier == "publish" else ((), (topic(fqn),))
    if category == "service":
        asks = qualifier == "request"
        return ((request(fqn),), (reply(fqn),)) if asks else ((reply(fqn),), (request(fqn),))
    base = fqn + "/_action/"
    requests = tuple(request(base + s) for s in ACTION_SERVICES)
    answers = (*(reply(base + s) for s in ACTION_SERVICES),
               *(topic(base + t) for t in ACTION_TOPICS))
    return (requests, answers) if qualifier == "call" else (answers, requests)
