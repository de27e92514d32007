"""What results.json records about the machine (issue 37, item 10): the CPU's model and
its crypto extensions from /proc/cpuinfo, and the OpenSSL version; ratios are the
machine's, so the report says on which."""

from __future__ import annotations

import platform

from govkit.bench.machine import CPU_CRYPTO_FLAGS, cpu_facts, environment

X86 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
flags\t\t: fpu vme sse2 pclmulqdq aes avx2 sha_ni
processor\t: 1
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
flags\t\t: fpu vme sse2 pclmulqdq aes avx2 sha_ni avx512f vaes
"""
ARM = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
CPU implementer\t: 0x41
"""


def test_the_crypto_extensions_are_read_from_the_first_cpus_flags():
    facts = cpu_facts(X86)
    assert facts == {"cpu": "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "cpu_crypto": {
        "AES-NI": True, "PCLMULQDQ": True, "VAES": False, "VPCLMULQDQ": False, "SHA": True,
        "AVX-512": False}}
    assert cpu_facts(ARM) == {"cpu": None, "cpu_crypto": {
        "AES": True, "PMULL": True, "SHA-1": True, "SHA-2": True, "SHA-512": False,
        "SVE": False}}
    assert cpu_facts("") == {"cpu": None, "cpu_crypto": None}
    # substrings are not flags: avx512fp16 is not avx512f, sha is not sha_ni
    assert cpu_facts("flags : avx512fp16 sha vaesx\n")["cpu_crypto"] == dict.fromkeys(
        CPU_CRYPTO_FLAGS["flags"], False)


def test_this_machines_environment_names_them_and_openssl():
    env = environment()
    assert env["openssl"].startswith("OpenSSL ")
    if platform.machine() == "x86_64":
        assert set(env["cpu_crypto"]) == set(CPU_CRYPTO_FLAGS["flags"])
        assert all(isinstance(v, bool) for v in env["cpu_crypto"].values())
    assert env["cpu"]
