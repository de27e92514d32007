"""Sign and verify governance and permissions documents, as OpenSSL, Cyclone DDS 0.10 and
Fast DDS 2.9 decide.

- `sign`: writes what `openssl smime -sign -text` writes;
- `verify`: the verdict OpenSSL's PKCS7_verify gives with the Permissions CA as the only
  trusted certificate, and each implementation's;
- `verify_batch`: the same verdicts over many files, faster;
- `chain`: the signer's certificate checked as PKCS7_verify checks it, and every
  signature (one `signature_ok`);
- `pkcs7`: the DER template fast signing fills in;
- `status`: the dates and grants of signed documents, for `govkit pki status` and the
  revoked-grant check of `verify`.

May import: govkit.common, govkit.catalog, govkit.pki, govkit.documents, govkit.check.
"""
