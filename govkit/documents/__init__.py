"""Governance and permissions documents: rendered from templates, parsed safely with source
positions, S/MIME read exactly as OpenSSL reads it, and the typed model the analysis
commands share. Nothing here judges a document: that is govkit.check.

- `render`: governance per profile and permissions per participant, from `templates/`;
- `compiled`: permissions documents from a byte template compiled once per shape;
- `parse`: safe XML parsing with file positions;
- `mime`: the one MIME reader: an S/MIME file read exactly as OpenSSL 3.0 reads it;
- `model`: the typed model of a document, for lint, identify, explain and diff;
- `leaf_types`: the XSDs' leaf types compiled once and cached, so values read without xmlschema;
- `domainsets`: sets of domain ids as merged intervals;
- `globs`: topic and partition expressions: matching, and one covering another.
- `access`: what a grant and a governance decide for one topic name (DDS Security 1.1);
- `xinclude`, `ros_names`, `ros_policy`, `protection`, `ros_render`: sros2 policies (their
  XIncludes, ROS 2 names as DDS names, the grants) and the protection sidecar, rendered into
  per-enclave permissions and one per-topic governance;

May import: govkit.common, govkit.catalog, govkit.pki.
"""
