"""The test PKI: CAs and participant identities, fleets of participants read from files, and
how subject names compare as each implementation compares them; the key lifecycle.

- `vocabulary`: the values the command line shows: default lifetimes, the expiry warning,
  revocation reasons, HSM kinds (light: the CLI reads it at start-up);
- `testpki`: the Identity CA, a separate Permissions CA, and participant identities;
- `participants`: fleets of participants read from files, with their grants;
- `names`: distinguished names, compared as the specification and each vendor compare them;
- `ros`: ROS 2 enclave paths as participants, and the DDS names of ROS topics;
- `revocation`: revoking a certificate: the Identity CA's CRL;
- `renewal`: a new certificate for a participant's existing key;
- `status`: what in a test PKI expires when;
- `hsm`: participant keys moved into a SoftHSM2 token, for Fast DDS.

May import: govkit.common, govkit.catalog.
"""
