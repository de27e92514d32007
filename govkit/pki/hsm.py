"""Participant keys in a SoftHSM2 token (a software PKCS#11 "HSM"), for Fast DDS.

`move_keys_to_softhsm` imports each participant's private key into a token kept in the PKI
directory (`softhsm/`: its softhsm2.conf and token files) and, once softhsm2-util has
imported it, removes the key file: from then on the key exists only in the token, and
`<name>.pkcs11` holds the RFC 7512 URI that names it. The key is found by its id (a hash
of the public key), so a participant reissued later with a new key never meets an old
object of the same name.

Who can use it (checked where each configuration is written):
- Fast DDS 2.9: the private_key property takes a `pkcs11:` URI, loaded through OpenSSL's
  `pkcs11` engine (Debian: libengine-pkcs11-openssl, i.e. libp11), which opens the
  p11-kit proxy, which loads SoftHSM2's module (Pkcs11Provider.cpp). SoftHSM2 finds this
  token through the SOFTHSM2_CONF environment variable, which the runner sets. The PIN
  is in the URI (pin-value): a TEST token, like the rest of this PKI.
- Cyclone DDS 0.10 cannot: its PrivateKey accepts only file: and data: (auth_utils.c
  load_X509_private_key), so govkit refuses to write such a configuration.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.pki.lock import pki_lock
from govkit.pki.testpki import TOKEN_SUFFIX, TestPKI

TOKEN_LABEL = "govkit"
SOFTHSM_DIR = "softhsm"
INSTALL_HINT = ("install SoftHSM2 and OpenSSL's PKCS#11 engine: `apt-get install softhsm2 "
                "libengine-pkcs11-openssl` "
                "(in a govkit checkout, `bash .ci/setup` installs all of it)")


def softhsm_conf(pki: TestPKI) -> Path:
    return pki.directory / SOFTHSM_DIR / "softhsm2.conf"


def _env(pki: TestPKI) -> dict[str, str]:
    return {**os.environ, "SOFTHSM2_CONF": str(softhsm_conf(pki).resolve())}


def _util(pki: TestPKI, *args: str) -> str:
    try:
        r = subprocess.run(["softhsm2-util", *args], env=_env(pki), capture_output=True,
                           text=True, timeout=60)
    except OSError:
        raise GovkitError(f"softhsm2-util not found; {INSTALL_HINT}", EXIT_USAGE) from None
    if r.returncode != 0:
        said = (r.stderr or r.stdout).strip().splitlines()
        raise GovkitError(f"softhsm2-util {args[0]} failed: {said[-1] if said else r.returncode}",
                          EXIT_USAGE)
    return r.stdout


def check_softhsm() -> None:
    """GovkitError (exit 2) with the install command if SoftHSM2's tool is missing (before
    anything is created)."""
    if shutil.which("softhsm2-util") is None:
        raise GovkitError(f"softhsm2-util not found; {INSTALL_HINT}", EXIT_USAGE)


def _pin_path(pki: TestPKI) -> Path:
    return pki.directory / SOFTHSM_DIR / "pin"


def _ensure_token(pki: TestPKI) -> str:
    """The token's user PIN, creating the token (and its configuration) if needed."""
    pin_file = _pin_path(pki)
    if pin_file.exists():
        return pin_file.read_text().strip()
    check_softhsm()
    tokens = (pki.directory / SOFTHSM_DIR / "tokens").resolve()
    tokens.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(softhsm_conf(pki), f"# SoftHSM2 token of a govkit TEST PKI\n"
                                    f"directories.tokendir = {tokens}\n"
                                    f"objectstore.backend = file\nlog.level = ERROR\n")
    pin, so_pin = secrets.token_hex(8), secrets.token_hex(8)
    _util(pki, "--init-token", "--free", "--label", TOKEN_LABEL, "--pin", pin,
          "--so-pin", so_pin)
    write_atomic(pin_file, pin + "\n", mode=0o600, overwrite=False)
    return pin


def key_id(public_key) -> str:
    """The object id of a key in the token: the first 8 bytes of SHA-256 of its public key."""
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:16]


def token_uri(object_id: str, pin: str) -> str:
    pct = "".join(f"%{object_id[i:i + 2]}" for i in range(0, len(object_id), 2))
    return f"pkcs11:token={TOKEN_LABEL};id={pct};type=private?pin-value={pin}"


def move_keys_to_softhsm(pki: TestPKI, names: list[str] | None = None) -> list[str]:
    """Move the private keys of `names` (default: every participant with a key file) into
    the PKI's SoftHSM2 token; returns the `<name>.pkcs11` files written."""
    with pki_lock(pki.directory):
        return _move_locked(pki, names)


def _move_locked(pki: TestPKI, names: list[str] | None) -> list[str]:
    names = [n for n in (pki.identities() if names is None else names)
             if pki.path(n, ".key").exists()]
    if not names:
        return []
    pin = _ensure_token(pki)
    written = []
    for name in names:
        cert, key = pki.key_pair(name)          # the key must be this certificate's
        object_id = key_id(cert.public_key())
        _util(pki, "--import", str(pki.path(name, ".key")), "--token", TOKEN_LABEL,
              "--label", name, "--id", object_id, "--pin", pin)
        write_atomic(pki.path(name, TOKEN_SUFFIX), token_uri(object_id, pin) + "\n",
                     mode=0o600, overwrite=True)
        pki.path(name, ".key").unlink()          # the token holds it now
        written.append(str(pki.path(name, TOKEN_SUFFIX)))
    return written


def key_uri(pki: TestPKI, name: str) -> str | None:
    """The pkcs11: URI of `name`'s key when it is in the token, else None."""
    path = pki.path(name, TOKEN_SUFFIX)
    if not path.is_file():
        return None
    return path.read_text().strip()
