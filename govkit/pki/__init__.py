"""The test PKI: CAs and participant identities, fleets of participants read from files, and
how subject names compare as each implementation compares them; the key lifecycle.

- `vocabulary`: the values the command line shows: default lifetimes, the expiry warning,
  revocation reasons, HSM kinds (light: the CLI reads it at start-up);
- `testpki`: the Identity CA, a separate Permissions CA, and participant identities: the
  directory's files read, certificates made;
- `issuance`: a test PKI created or extended: CAs and identities issued, written and
  recorded in the manifest;
- `participants`: fleets of participants read from files, with their grants;
- `issued`: whether a CA issued a certificate, the one check of it;
- `names`: distinguished names, compared as the specification and each vendor compare them;
- `ros`: ROS 2 enclave paths as participants, and the DDS names of ROS topics;
- `revocation`: revoking a certificate: the Identity CA's CRL;
- `revocation_log`: every revocation also appended to a log, so deleting the CRL and the
  manifest un-revokes no one;
- `renewal`: a new certificate for a participant's existing key;
- `status`: what in a test PKI expires when;
- `hsm`: participant keys moved into a SoftHSM2 token, for Fast DDS;
- `lock`: one writer at a time: the PKI directory's lock, held across every read-modify-write;
- `manifest`: each certificate proven once, when the PKI writes it, and read back by hash.

May import: govkit.common, govkit.catalog.
"""
