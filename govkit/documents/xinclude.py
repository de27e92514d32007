"""XInclude, as far as sros2 policies use it, read the way every other govkit input is read.

sros2's policies pull shared profiles in with `<xi:include href="common/node.xml"
xpointer="xpointer(/profile/*)"/>` (both the XInclude 1.0 namespace and the 2003 draft one
libxml2 still reads). sros2 lets libxml2 load them; govkit expands them itself, so that each
included file is read as any input is (a regular file, its size capped before reading, no
DTD, no network: `parse.parse_xml`) and every element keeps the FILE:LINE:COLUMN it was
written at, for the one-line findings.

What is read: `href` a relative or absolute local path (no URL scheme), `parse="xml"`, and
an `xpointer` made of child steps (`xpointer(/policy/enclaves/*)`: names or `*`), or none
for the whole document. Anything else (`parse="text"`, `xi:fallback`, other XPointer
schemes) is refused with a finding at the include, never guessed at. An include chain that
comes back to a file is refused; the total of files, bytes and elements pulled in is capped
(MAX_INCLUDED_FILES, the document limits), so nested includes cannot multiply the work.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from lxml import etree

from govkit.common.errors import GovkitError
from govkit.common.findings import DocumentError, Finding, quote_value
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_ELEMENTS
from govkit.documents.parse import local_name, parse_xml

XINCLUDE_NAMESPACES = ("http://www.w3.org/2001/XInclude", "http://www.w3.org/2003/XInclude")
_INCLUDE_TAGS = tuple(f"{{{ns}}}include" for ns in XINCLUDE_NAMESPACES)
MAX_INCLUDED_FILES = 256
MAX_INCLUDE_DEPTH = 16
# All files of one policy together: a few times one document's limit.
MAX_TOTAL_BYTES = 8 * MAX_DOCUMENT_BYTES
_XPOINTER_RE = re.compile(r"xpointer\(((?:/(?:\*|[A-Za-z_][\w.\-]*))+)\)")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


class MergedDocument:
    """A document with its includes expanded: the tree, and where each element was
    written (file, line, column), whichever file it came from."""

    def __init__(self, root, filename: str, positions: dict):
        self.root = root
        self.tree = root.getroottree()
        self.filename = filename
        self.positions = positions   # element -> (file, line, column)
        self._paths: dict = {}

    def locate(self, elem) -> tuple[int, int]:
        return self.position(elem)[1:]

    def file_of(self, elem) -> str:
        return self.position(elem)[0]

    def position(self, elem) -> tuple[str, int, int]:
        found = self.positions.get(elem)
        if found is not None:
            return found
        parent = elem.getparent() if elem is not None else None   # an attribute's element
        while parent is not None and parent not in self.positions:
            parent = parent.getparent()
        return self.positions.get(parent, (self.filename, 1, 1))

    def finding(self, elem, message: str) -> Finding:
        file, line, column = self.position(elem)
        return Finding(file, line, column, message)

    def element_at_path(self, path: str | None, root=None):
        """The element a libxml2 error path ('/policy/enclaves/enclave[2]') names, the path
        starting at `root` (default: the document's root), or None."""
        if not path:
            return None
        root = self.root if root is None else root
        if root not in self._paths:
            self._paths[root] = _path_map(root)
        return self._paths[root].get(path)


def _path_map(root) -> dict:
    """libxml2's xmlGetNodePath() of every element below `root` (as the root), in one pass:
    '[n]' only when the parent has more than one child element of that name."""
    paths = {"/" + local_name(root): root}
    stack = [(root, "/" + local_name(root))]
    while stack:
        parent, base = stack.pop()
        kids = [c for c in parent if isinstance(c.tag, str)]
        counts: dict[str, int] = {}
        for c in kids:
            counts[c.tag] = counts.get(c.tag, 0) + 1
        seen: dict[str, int] = {}
        for c in kids:
            seen[c.tag] = seen.get(c.tag, 0) + 1
            p = f"{base}/{local_name(c)}" + (f"[{seen[c.tag]}]" if counts[c.tag] > 1 else "")
            paths.setdefault(p, c)
            stack.append((c, p))
    return paths


class _Budget:
    def __init__(self):
        self.files = 0
        self.bytes = 0
        self.elements = 0


def _fail(doc, elem, message: str) -> DocumentError:
    return DocumentError([doc.finding(elem, message)])


def _select(root, xpointer: str | None, doc, include) -> list:
    """The elements an xpointer of child steps selects in the document of `root`."""
    if xpointer is None:
        return [root]
    m = _XPOINTER_RE.fullmatch(xpointer.strip())
    if m is None:
        raise _fail(doc, include, f"xi:include: xpointer {quote_value(xpointer)} is not read "
                                  f"here; use xpointer(/name/.../*) (child steps, names or *)")
    steps = m.group(1).split("/")[1:]
    current = [root] if steps[0] in ("*", local_name(root)) and "}" not in root.tag else []
    for step in steps[1:]:
        current = [c for e in current for c in e if isinstance(c.tag, str)
                   and (step == "*" or (local_name(c) == step and "}" not in c.tag))]
    return current


def _target(base: Path, href: str, doc, include) -> Path:
    if _SCHEME_RE.match(href) and not re.match(r"[A-Za-z]:[\\/]", href):
        raise _fail(doc, include, f"xi:include: href {quote_value(href)} is a URL; govkit "
                                  f"includes local files only (never the network)")
    return (base.parent / href) if not Path(href).is_absolute() else Path(href)


def real_path(path: Path) -> Path:
    """`path` with its symlinks followed as far as they go. Path.resolve() raises
    RuntimeError on a symlink loop; os.path.realpath stops there, and reading the path then
    says "Too many levels of symbolic links" as one finding at the include."""
    return Path(os.path.realpath(path))


def _load(path: Path, chain: tuple[Path, ...], budget: _Budget, positions: dict,
          from_doc=None, from_elem=None, data: bytes | None = None):
    """Parse `path` and expand its includes in place; returns its ParsedDocument."""
    budget.files += 1
    if budget.files > MAX_INCLUDED_FILES or len(chain) > MAX_INCLUDE_DEPTH:
        raise _fail(from_doc, from_elem, f"xi:include: more than {MAX_INCLUDED_FILES} files or "
                                         f"{MAX_INCLUDE_DEPTH} levels of includes")
    try:
        data = read_input(path, MAX_DOCUMENT_BYTES, "policy") if data is None else data
    except GovkitError as e:
        if from_doc is None:
            raise
        raise _fail(from_doc, from_elem, f"xi:include: {e}") from None
    budget.bytes += len(data)
    if budget.bytes > MAX_TOTAL_BYTES:
        raise _fail(from_doc, from_elem, f"xi:include: the included files hold more than "
                                         f"{MAX_TOTAL_BYTES} bytes together")
    doc = parse_xml(data, str(path))
    for e in doc.elements:
        positions[e] = (str(path), *doc.locate(e))
    budget.elements += len(doc.elements)
    if budget.elements > MAX_ELEMENTS:
        raise _fail(doc, doc.root, f"xi:include: more than {MAX_ELEMENTS} elements with the "
                                   f"included files")
    for include in [e for e in doc.root.iter(*_INCLUDE_TAGS)]:
        if include is doc.root:
            raise _fail(doc, include, "xi:include: the root element cannot be an include")
        if any(isinstance(c.tag, str) for c in include):
            raise _fail(doc, include, "xi:include: xi:fallback and other children are not read "
                                      "here; remove them")
        if include.get("parse", "xml") != "xml":
            raise _fail(doc, include, f"xi:include: parse={quote_value(include.get('parse'))} "
                                      f"is not read here; a policy includes XML")
        href = include.get("href")
        if not href:
            raise _fail(doc, include, "xi:include: no href (an include within the same file "
                                      "is not read here)")
        target = _target(path, href, doc, include)
        resolved = real_path(target)
        if resolved in chain:
            raise _fail(doc, include, f"xi:include: {quote_value(href)} includes itself "
                                      f"(through {len(chain)} file(s))")
        sub = _load(target, (*chain, resolved), budget, positions, doc, include)
        nodes = _select(sub.root, include.get("xpointer"), doc, include)
        parent = include.getparent()
        at = parent.index(include)
        tail = include.tail
        for k, node in enumerate(nodes):
            node.tail = None
            parent.insert(at + k, node)
        parent.remove(include)
        if nodes and tail:
            nodes[-1].tail = tail
        elif tail:
            previous = parent[at - 1] if at > 0 else None
            if previous is not None:
                previous.tail = (previous.tail or "") + tail
            else:
                parent.text = (parent.text or "") + tail
    return doc


def load_merged(path: Path, data: bytes | None = None) -> MergedDocument:
    """`path` (or `data`, read from it already) with every xi:include expanded (module
    docstring). DocumentError with the findings (FILE:LINE:COLUMN) for anything
    unreadable, malformed or not read here; GovkitError (exit 2) when `path` itself cannot
    be read."""
    path = Path(path)
    positions: dict = {}
    doc = _load(path, (real_path(path),), _Budget(), positions, data=data)
    etree.cleanup_namespaces(doc.root)   # the xi: declarations, now unused
    return MergedDocument(doc.root, str(path), positions)
