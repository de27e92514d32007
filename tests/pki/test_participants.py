"""Participants files: both formats, every value checked, one-line errors naming FILE:LINE."""

from __future__ import annotations

import os

import pytest

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.limits import MAX_PARTICIPANTS_BYTES, MAX_TOPICS_PER_ACTION
from govkit.pki.participants import (
    Grants,
    Participant,
    merge_participants,
    name_problem,
    numbered_participants,
    parse_participants,
    read_participants,
)


def _error(text: str) -> str:
    with pytest.raises(GovkitError) as info:
        parse_participants(text, "fleet.csv")
    assert info.value.exit_code == EXIT_USAGE
    message = str(info.value)
    assert "\n" not in message
    return message


def test_one_name_per_line_with_comments_and_blank_lines():
    text = "# the fleet\npub\n\n  \nsub\n# a \"quoted\" comment, with commas\n"
    assert parse_participants(text, "f") == [Participant("pub"), Participant("sub")]


def test_csv_with_subject_fields_and_grants():
    text = ("name,organization,unit,country,publish,subscribe,partitions\n"
            "alpha,Acme Corp,Robots,DE,Temperature Pressure,Commands,plant/*\n"
            '"beta",,,, ,"Temperature",\n')
    alpha, beta = parse_participants(text, "f")
    assert alpha == Participant("alpha", "Acme Corp", "Robots", "DE",
                                Grants(("Temperature", "Pressure"), ("Commands",), ("plant/*",)))
    assert beta == Participant("beta", grants=Grants((), ("Temperature",), ()))


def test_csv_without_grant_columns_keeps_the_runner_topics():
    (p,) = parse_participants("NAME, Organization\nnode-1,Acme\n", "f")
    assert p == Participant("node-1", "Acme") and p.grants is None


def test_utf8_bom_and_crlf(tmp_path):
    f = tmp_path / "fleet.csv"
    f.write_bytes(b"\xef\xbb\xbfname,publish\r\na,T1\r\nb,T2\r\n")
    assert [p.name for p in read_participants(f)] == ["a", "b"]


@pytest.mark.parametrize(("text", "expected"), [
    ("a,b\n", "fleet.csv:1: 2 fields but no header line"),
    ("pub\nsub extra\n", "fleet.csv:2: invalid participant name (9 characters, ' ' at "
                         "character 4)"),
    ("name,nickname\n", "fleet.csv:1: unknown column 'nickname'"),
    ("name,name\n", "fleet.csv:1: a column is named twice"),
    ("name\na\n# x\nb\na\n", "fleet.csv:5: participant a is already on line 2"),
    ("name,country\na,de\n", "fleet.csv:2: invalid country 'de'"),
    ("name,organization\na,Acme/Inc\n", "fleet.csv:2: invalid organization (8 characters, "
                                        "'/' at character 5)"),
    ("name,organization\na, lead\n", None),   # cells are stripped: 'lead' is fine
    ("name,unit\na,x+y\n", "fleet.csv:2: invalid unit (3 characters, '+' at character 2)"),
    ("name,publish\na,x<y\n", "fleet.csv:2: invalid name (3 characters, '<' at character 2) "
                              "in publish"),
    ("name,subscribe\na,T T\n", "fleet.csv:2: subscribe names a topic or partition twice"),
    ("name,publish\na,T,extra\n", "fleet.csv:2: 3 fields, the header has 2"),
    ('name\n"a\n', "fleet.csv:2: not CSV"),
    ("name\n", "fleet.csv: lists no participants"),
    ("identity_ca\n", "fleet.csv:1: invalid participant name 'identity_ca'"),
    ("a--b\n", "fleet.csv:1: invalid participant name 'a--b'"),
])
def test_errors_name_file_and_line(text, expected):
    if expected is None:
        assert parse_participants(text, "fleet.csv")[0].organization == "lead"
        return
    assert _error(text).startswith(expected)


def test_too_many_topics():
    topics = " ".join(f"T{i}" for i in range(MAX_TOPICS_PER_ACTION + 1))
    assert _error(f"name,publish\na,{topics}\n").startswith(
        f"fleet.csv:2: {MAX_TOPICS_PER_ACTION + 1} publish (limit {MAX_TOPICS_PER_ACTION}")


def test_file_is_read_like_every_input(tmp_path):
    with pytest.raises(GovkitError, match="is a directory"):
        read_participants(tmp_path)
    big = tmp_path / "big.csv"
    with big.open("wb") as f:
        f.truncate(MAX_PARTICIPANTS_BYTES + 1)
    with pytest.raises(GovkitError, match="too large"):
        read_participants(big)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(GovkitError, match="FIFO"):
        read_participants(fifo)
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes(b"pub\nsub\xe9\n")
    with pytest.raises(GovkitError, match=r"latin1.csv:2: not UTF-8 text \(byte 7\)"):
        read_participants(latin1)


def test_numbered_participants():
    assert [p.name for p in numbered_participants(3, "n")] == ["n0", "n1", "n2"]
    names = [p.name for p in numbered_participants(10_000, "p")]
    assert names[0] == "p0000" and names[-1] == "p9999" and len(set(names)) == 10_000
    for count, prefix, message in ((0, "p", "--count"), (3, "a/b", "--prefix 'a/b'"),
                                   (3, "x" * 63, "invalid participant name")):
        with pytest.raises(GovkitError, match=message):
            numbered_participants(count, prefix)


@pytest.mark.parametrize("name", ["a", "node-1.pub_2", "x" * 63, "a-b-c"])
def test_valid_names(name):
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["", "-a", ".a", "a b", "a,b", "a--b", "x" * 64, "pübl",
                                  "permissions_ca", "a\n"])
def test_invalid_names(name):
    assert name_problem(name).startswith("invalid participant name")


@pytest.mark.parametrize(("name", "rule"), [
    ("-x", "starts with a letter or digit, not '-'"), (".a", "not '.'"),
    ("a b", "' ' at character 2): use letters, digits"), ("a--b", "no '--'"),
    ("x" * 64, "at most 63 characters, not 64"), ("identity_ca", "the name of a CA's files"),
    ("", "at least one character")])
def test_the_message_names_the_rule_the_name_breaks(name, rule):
    """'-x' holds only allowed characters; it was told to use letters, digits, '_', '.',
    '-' (issue 23's second adversarial pass): the message names the rule broken."""
    message = name_problem(name)
    assert rule in message, message
    assert ("use letters" in message) == (" " in name), message


# ------------------------------------------------------------------ ROS 2 names


@pytest.mark.parametrize("name", ["/talker_listener/talker", "/talker", "/_a/b_2/C",
                                  "+talker_listener+talker", "/" + "x" * 63])
def test_enclave_paths_and_their_stems_are_names(name):
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["/", "/a/", "//a", "/a//b", "/2a", "/a/b-c", "/a.b", "/a+b",
                                  "+", "+a+", "/" + "x" * 64, "/a b"])
def test_invalid_enclave_paths(name):
    assert name_problem(name).startswith("invalid enclave path")


def test_an_enclave_participant_is_named_by_its_stem_on_disk():
    p = Participant("/talker_listener/talker")
    assert p.name == "+talker_listener+talker" and p.common_name == "/talker_listener/talker"
    assert Participant(p.name) == p      # the stem, read back from a PKI directory
    assert Participant("pub").common_name == "pub"
    (q,) = parse_participants("/ns/node\n", "f")
    assert q.name == "+ns+node"
    with pytest.raises(GovkitError, match="participant /ns/node is named twice"):
        merge_participants(["/ns/node", "+ns+node"], None, None, "p")


def test_ros_columns_become_the_dds_topics_rmw_uses():
    text = ("name,publish,ros_publish,ros_subscribe,ros_serve,ros_call\n"
            "/demo/talker,ros_discovery_info,/chatter /rosout,/parameter_events,"
            "/add_two_ints,/robot/*\n")
    (p,) = parse_participants(text, "f")
    assert p.grants.publish == ("ros_discovery_info", "rt/chatter", "rt/rosout",
                                "rr/add_two_intsReply", "rq/robot/*Request")
    assert p.grants.subscribe == ("rt/parameter_events", "rq/add_two_intsRequest",
                                  "rr/robot/*Reply")


def test_ros_actions_and_a_topic_named_both_ways_once():
    server, client = parse_participants(
        "name,subscribe,ros_subscribe,ros_action_serve,ros_action_call\n"
        "server,,,/fibonacci,\nclient,rt/x,/x,,/fibonacci\n", "f")
    services = [f"/fibonacci/_action/{s}" for s in ("send_goal", "cancel_goal", "get_result")]
    assert server.grants.subscribe == tuple(f"rq{s}Request" for s in services)
    assert server.grants.publish == (*(f"rr{s}Reply" for s in services),
                                     "rt/fibonacci/_action/feedback",
                                     "rt/fibonacci/_action/status")
    assert client.grants.publish == tuple(f"rq{s}Request" for s in services)
    assert client.grants.subscribe == ("rt/x", *(f"rr{s}Reply" for s in services),
                                       "rt/fibonacci/_action/feedback",
                                       "rt/fibonacci/_action/status")


@pytest.mark.parametrize(("cell", "column"), [("/a//b", "ros_publish"), ("/a/", "ros_call"),
                                              ("/a.b", "ros_subscribe"), ("~/x", "ros_serve")])
def test_invalid_ros_names(cell, column):
    # quoted when made of characters a ROS name may hold, else described ('/a.b')
    shown = f"'{cell}'" if cell != "/a.b" else "(4 characters, '.' at character 3)"
    assert _error(f"name,{column}\na,{cell}\n").startswith(
        f"fleet.csv:2: invalid ROS name {shown} in {column}: use a fully qualified ROS name")


def test_a_plus_in_an_enclave_path_is_not_taken_for_a_slash():
    assert Participant("/a+b").name == "/a+b"
    assert name_problem(Participant("/a+b").name).startswith(
        "invalid enclave path (4 characters, '+' at character 3)")


@pytest.mark.parametrize("secret", [
    "root:$6$Zq9saltsalt$hashhashhashhashhashhash:19000:0:99999:7:::",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "api_token=ghp_0123456789abcdefghijklmnopqrstuvwx",
    "password: hunter2-0123456789",
])
def test_an_error_never_prints_what_a_linked_secret_holds(tmp_path, secret):
    """issue 23, item 7: a participants file that is a link to a secret file gets its file
    and line named and at most the offending character, never the line."""
    target = tmp_path / "secret"
    target.write_text(secret + "\n")
    link = tmp_path / "participants.csv"
    link.symlink_to(target)
    with pytest.raises(GovkitError) as e:
        read_participants(link)
    message = str(e.value)
    assert message.startswith(f"{link}:") and "\n" not in message
    for piece in ("hashhash", "Zq9salt", "OPENSSH", "0123456789", "ghp_"):
        assert piece not in message, message


def test_a_short_plain_value_is_still_quoted(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("name,colour\npub,red\n")
    with pytest.raises(GovkitError, match="unknown column 'colour'"):
        read_participants(path)
    path.write_text("a b\n")
    with pytest.raises(GovkitError, match=r"invalid participant name \(3 characters, ' ' at "
                                          r"character 2\)"):
        read_participants(path)
