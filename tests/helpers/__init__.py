"""Helpers the tests share: real processes (dds, fastdds, sshd), documents, signers,
S/MIME variants, HTML reading, required prerequisites (require), and the docs build's
generator of reference pages (docs_reference)."""
