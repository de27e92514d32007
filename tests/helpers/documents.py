"""Every document govkit renders, in memory, for tests that check all of them at once."""

from __future__ import annotations

from govkit.catalog.profiles import SECURED_PROFILES
from govkit.catalog.runners import RUNNERS
from govkit.documents.render import DomainSet, GovernanceDocument, PermissionsDocument


def render_all() -> list[tuple[str, bytes]]:
    """Every governance document and a representative permissions document per runner."""
    docs = [(f"governance/{p.name}.xml", GovernanceDocument(p).render())
            for p in SECURED_PROFILES]
    docs += [(f"governance/{p.name}-domains.xml",
              GovernanceDocument(p, DomainSet.parse("0,3-7,230")).render())
             for p in SECURED_PROFILES[:1]]
    for runner, scope in RUNNERS.items():
        doc = PermissionsDocument("pub", "CN=pub,O=govkit test PKI", "2026-01-01T00:00:00Z",
                                  "2027-01-01T00:00:00Z", scope, DomainSet.parse("0-230"))
        docs.append((f"permissions/{runner}.xml", doc.render()))
    return docs
