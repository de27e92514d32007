"""A keystore `govkit export sros2` wrote, used as rmw uses it: real Cyclone DDS and Fast
DDS processes started only from the six files of two enclaves, whose certificates' CN is
the enclave path (CN=/talker_listener/talker, as sros2 writes it)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers.dds import cyclone_loads, needs_cyclone
from helpers.dds import run_pair as cyclone_pair
from helpers.fastdds import everything, measure
from helpers.fastdds import run_pair as fastdds_pair

from govkit.catalog.profiles import get_profile
from govkit.documents.render import DomainSet
from govkit.generate.fleet import generate
from govkit.generate.sros2 import export_sros2
from govkit.pki.issuance import init_pki
from govkit.pki.participants import Participant
from govkit.pki.testpki import TestPKI
from govkit.runners.base import Bundle, ParticipantFiles, RunnerError
from govkit.smime.sign import sign_document

TALKER, LISTENER = "/talker_listener/talker", "/talker_listener/listener"
PROFILE = "sign_submsg_encrypt_origin_data_encrypt"


@pytest.fixture(scope="module")
def keystore(tmp_path_factory):
    root = tmp_path_factory.mktemp("sros2-real")
    pki, _ = init_pki(root / "pki", [Participant(TALKER), Participant(LISTENER)])
    result = generate([get_profile(PROFILE)], pki, root / "build", DomainSet(), "ddsperf",
                      sign=True)
    assert not result.errors, result.errors
    export_sros2(root / "ks", root / "pki", root / "build")
    return root / "ks"


def _from_enclaves(ks, pub: str = TALKER, sub: str = LISTENER) -> Bundle:
    """What rmw hands the DDS plugins: the six files of each enclave, nothing else."""
    def files(enclave: str) -> ParticipantFiles:
        d = (ks / "enclaves" / enclave.lstrip("/")).resolve()
        return ParticipantFiles(enclave, d / "identity_ca.cert.pem", d / "cert.pem",
                                d / "key.pem", d / "permissions_ca.cert.pem",
                                d / "governance.p7s", d / "permissions.p7s")
    return Bundle(get_profile(PROFILE), {"pub": files(pub), "sub": files(sub)})


@needs_cyclone
@pytest.mark.cyclone
def test_a_cyclone_pair_from_the_enclaves_matches(keystore, tmp_path):
    runner, point, outputs = cyclone_pair(_from_enclaves(keystore), tmp_path / "cfg")
    result = runner.parse(point, outputs)
    assert sum(r["count"] for r in result.rows) > 100, outputs["pub"].tail()


@pytest.mark.fastdds
def test_a_fastdds_pair_from_the_enclaves_matches(keystore, tmp_path):
    result, outputs = measure(_from_enclaves(keystore), tmp_path / "cfg", duration=1)
    for role in ("pub", "sub"):
        assert ": authorized" in outputs[role].stdout, outputs[role].tail()
    assert "unauthorized" not in everything(outputs)
    assert all(r["count"] > 50 for r in result.rows)


def _resigned(keystore, tmp_path, old: str, new: str) -> Path:
    """The talker's permissions with its subject's CN written `new`, signed again."""
    pki = TestPKI(keystore.parent / "pki")
    xml = (keystore.parent / "build/permissions/+talker_listener+talker.xml").read_text()
    changed = tmp_path / f"{new.replace('/', '_')}.xml"
    changed.write_text(xml.replace(f"CN={old}<", f"CN={new}<"))
    assert f"CN={new}<" in changed.read_text()
    return sign_document(changed, pki.permissions_ca, pki.permissions_ca_key).resolve()


@pytest.mark.fastdds
def test_fastdds_refuses_the_enclave_path_in_another_order(keystore, tmp_path):
    swapped = _resigned(keystore, tmp_path, TALKER, "/talker/talker_listener")
    bundle = _from_enclaves(keystore)
    talker = replace(bundle.participants["pub"], permissions=swapped)
    r, point, outputs = fastdds_pair(Bundle(bundle.profile, {**bundle.participants,
                                                             "pub": talker}), tmp_path / "cfg")
    assert outputs["pub"].returncode == 3, outputs["pub"].tail()
    with pytest.raises(RunnerError) as refused:
        r.parse(point, outputs)
    assert "no grant's subject_name equals the certificate's subject" in str(refused.value)


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_takes_a_grant_for_the_enclave_path_in_another_order(keystore, tmp_path):
    """Why govkit.pki.names.cyclone_accepts says what it says: Cyclone 0.10 splits CN=/a/b
    at '/' and looks the pieces up by name. Permissions for /talker_listener/talker with the
    subject written CN=/talker/talker_listener load (its local permissions check passes);
    Fast DDS refuses them (above)."""
    bundle = _from_enclaves(keystore)
    for cn, accepted in (("/talker/talker_listener", True),
                         ("/talker_listener", False)):   # a piece left out: refused
        talker = replace(bundle.participants["pub"],
                         permissions=_resigned(keystore, tmp_path, TALKER, cn))
        loads, text = cyclone_loads(Bundle(bundle.profile, {**bundle.participants,
                                                            "pub": talker}), "pub",
                                    tmp_path / cn.replace("/", "_"))
        assert loads is accepted, text
