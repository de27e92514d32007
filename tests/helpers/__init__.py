"""Helpers the tests share: real processes (dds, fastdds, sshd), documents, signers,
S/MIME variants, HTML reading, and required prerequisites (require)."""
