"""Revocation with real processes: over the CRL `govkit pki revoke` wrote, Cyclone DDS 0.10
and Fast DDS 2.9 refuse a revoked participant while unrevoked ones still match.

Three participants, pub, sub and other; other is revoked. Each test runs real pairs on a
private loopback domain:
- pub and sub, both configured with the CRL, still match (the CRL costs nothing else);
- other with the CRL in its own configuration cannot even create its participant (both
  stacks check their own certificate against it);
- other *without* the CRL (a revoked party that ignores it) is refused by a peer that has
  it: no match; the same pair with the CRL taken from that peer does match, so it is the
  CRL that refused it.
Where the stack gives a reason it is asserted; govkit's own one-line explanation (which
certificate, revoked when, by which CRL) is asserted too.
"""

from __future__ import annotations

import pytest
from helpers import fastdds
from helpers.dds import needs_cyclone, run_pair, with_file

from govkit.catalog.profiles import get_profile
from govkit.generate.bundle import BundleLog, ensure_bundle
from govkit.pki.issuance import init_pki
from govkit.pki.renewal import renew
from govkit.pki.revocation import crl_path, revoke, revoked_participants
from govkit.runners.base import Bundle, RunnerError
from govkit.runners.ddsperf import DdsperfRunner
from govkit.runners.fastdds import FastddsRunner


def _setup(root) -> tuple[Bundle, str]:
    pki, _ = init_pki(root / "pki", participants=("pub", "sub", "other"))
    revoke(pki, "other", reason="keyCompromise")
    bundle = ensure_bundle(get_profile("rtps_sign"), pki, root / "build", "ddsperf",
                           BundleLog(), participants=("pub", "sub", "other"))
    why = revoked_participants(pki, ["pub", "sub", "other"])
    assert list(why) == ["other"]
    assert all(f.crl == crl_path(pki).resolve() for f in bundle.participants.values())
    return bundle, why["other"]


def _as(bundle: Bundle, role: str, who: str, crl: bool = True) -> Bundle:
    """The bundle with `role` played by participant `who`'s identity and permissions."""
    f = bundle.participants[who]
    return with_file(bundle, role, certificate=f.certificate, private_key=f.private_key,
                     permissions=f.permissions, crl=f.crl if crl else None)


def _without_crl(bundle: Bundle, role: str) -> Bundle:
    return with_file(bundle, role, crl=None)


def _text(outputs) -> str:
    return "\n".join(o.stdout + o.stderr for o in outputs.values())


def test_the_explanation_is_one_line_naming_certificate_date_and_crl(tmp_path):
    _, why = _setup(tmp_path)
    assert "\n" not in why
    assert "other.pem" in why and "CN=other" in why and "revoked on" in why
    assert "keyCompromise" in why and "identity_ca.crl.pem" in why and "number 1" in why


# ---------------------------------------------------------------- Cyclone DDS 0.10

@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_unrevoked_participants_match_over_the_crl(tmp_path):
    bundle, _ = _setup(tmp_path)
    config = DdsperfRunner().config_text(bundle, "pub")
    assert f"<CRL>{bundle.participants['pub'].crl.as_uri()}</CRL>" in config
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg")
    result = runner.parse(point, outputs)
    assert sum(r["count"] for r in result.rows) > 50


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_revoked_participant_cannot_start_with_the_crl(tmp_path):
    bundle, why = _setup(tmp_path)
    _, _, outputs = run_pair(_as(bundle, "sub", "other"), tmp_path / "cfg")
    assert outputs["sub"].returncode not in (0, None), outputs["sub"].tail()
    text = _text(outputs)
    assert "Certificate not valid: error: certificate revoked" in text, text[-2000:]
    assert "CN=other" in text


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_peer_refuses_a_revoked_remote_that_ignores_the_crl(tmp_path):
    bundle, _ = _setup(tmp_path)
    attacker = _as(bundle, "sub", "other", crl=False)      # other, its CRL dropped
    runner, point, outputs = run_pair(attacker, tmp_path / "refused")
    with pytest.raises(RunnerError, match="no latency lines"):
        runner.parse(point, outputs)
    # Cyclone lists the peer as discovered (ddsperf's "participant ...: new") before the
    # handshake, which pub refuses every time the peer retries; no sample ever flows.
    pub = outputs["pub"].stderr
    assert "Begin handshake reply failed: Certificate not valid: error: certificate " \
           "revoked; subject: /CN=other/O=govkit test PKI" in pub, pub[-2000:]
    # the control: the same pair, the CRL taken from pub too, matches
    runner, point, outputs = run_pair(_without_crl(attacker, "pub"), tmp_path / "control")
    assert sum(r["count"] for r in runner.parse(point, outputs).rows) > 50


# ---------------------------------------------------------------- Fast DDS 2.9


@pytest.mark.fastdds
def test_fastdds_unrevoked_participants_match_over_the_crl(tmp_path):
    bundle, _ = _setup(tmp_path)
    props = FastddsRunner().properties_text(bundle, "pub")
    assert (f"dds.sec.auth.builtin.PKI-DH.identity_crl="
            f"{bundle.participants['pub'].crl.as_uri()}") in props.splitlines()
    result, outputs = fastdds.measure(bundle, tmp_path / "cfg")
    assert all(o.stdout.count(": authorized") >= 1 for o in outputs.values())
    assert all(r["count"] > 50 for r in result.rows)


@pytest.mark.fastdds
def test_fastdds_revoked_participant_cannot_start_and_govkit_says_why(tmp_path):
    bundle, why = _setup(tmp_path)
    r, point, outputs = fastdds.run_pair(_as(bundle, "pub", "other"), tmp_path / "cfg")
    assert outputs["pub"].returncode == 3, outputs["pub"].tail()
    with pytest.raises(RunnerError) as e:
        r.parse(point, outputs)
    message = str(e.value)
    assert "(pub) could not create its participant" in message
    assert why in message, message       # the one line: certificate, date, CRL


@pytest.mark.fastdds
def test_fastdds_peer_refuses_a_revoked_remote_that_ignores_the_crl(tmp_path):
    bundle, _ = _setup(tmp_path)
    attacker = _as(bundle, "pub", "other", crl=False)
    r, point, outputs = fastdds.run_pair(attacker, tmp_path / "refused")
    with pytest.raises(RunnerError) as e:
        r.parse(point, outputs)
    assert "no peer matched" in str(e.value) and "unauthorized" in str(e.value), str(e.value)
    sub = outputs["sub"]
    assert ": authorized" not in sub.stdout, sub.stdout[-2000:]
    # Fast DDS's own warning (PKIDH.cpp verify_certificate), printed by govkit's program
    assert "Invalidation error of certificate  (certificate revoked)" in sub.stderr, \
        sub.stderr[-2000:]
    # the control: the same pair, the CRL taken from sub too, is authorized and measures
    result, outputs = fastdds.measure(_without_crl(attacker, "sub"), tmp_path / "control")
    assert all(r["count"] > 50 for r in result.rows)


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_accepts_a_renewed_certificate_for_the_same_key(tmp_path):
    """`pki renew pub`: the same key, a later not-after; Cyclone authenticates it (the
    bundle re-signs pub's permissions, whose validity follows the new certificate)."""
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub"))
    old = pki.certificate("pub")
    key = pki.path("pub", ".key").read_bytes()
    renew(pki, "pub", days=900)    # cut at the Identity CA's expiry (a year)
    new = pki.certificate("pub")
    assert new.public_key() == old.public_key() and pki.path("pub", ".key").read_bytes() == key
    assert new.serial_number != old.serial_number
    assert new.not_valid_after_utc >= old.not_valid_after_utc
    bundle = ensure_bundle(get_profile("rtps_sign"), pki, tmp_path / "build", "ddsperf",
                           BundleLog())
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg")
    assert sum(r["count"] for r in runner.parse(point, outputs).rows) > 50
