"""Detached PKCS#7 signatures assembled directly in DER, for signing thousands of documents.

pyca/cryptography's PKCS7SignatureBuilder (what `smime.sign_bytes` uses for one document)
rebuilds the whole structure for every document: certificate, algorithm identifiers,
attributes. For one signer everything in it is the same from document to document except
three values: the signing time, the content's digest and the signature. So a
`SignerTemplate` is taken once per signer from the builder's own output for a probe
document, and each document then costs one hash, one signature and a few byte joins.

The template is checked when it is made: the probe is rebuilt from it and must come out
byte for byte as the builder made it (all but the signature for ECDSA, whose signatures
differ per signing). If the builder's layout is ever one this module does not know,
`SignerTemplate.for_signer` raises TemplateError and callers use the builder.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.serialization import pkcs7

_SEQUENCE, _SET, _OCTETS, _OID, _UTCTIME, _GENTIME = 0x30, 0x31, 0x04, 0x06, 0x17, 0x18
_CTX0 = 0xA0
_SIGNED_DATA = bytes.fromhex("06092a864886f70d010702")      # 1.2.840.113549.1.7.2
_SIGNING_TIME = bytes.fromhex("06092a864886f70d010905")     # 1.2.840.113549.1.9.5
_MESSAGE_DIGEST = bytes.fromhex("06092a864886f70d010904")   # 1.2.840.113549.1.9.4
_PROBE = b"Content-Type: text/plain\r\n\r\ngovkit template probe\r\n"
_TIME, _DIGEST = "signing time", "message digest"


class TemplateError(ValueError):
    """The builder's output is not laid out as this module expects."""


def tlv(tag: int, content: bytes) -> bytes:
    """One DER element (definite length)."""
    n = len(content)
    if n < 0x80:
        return bytes((tag, n)) + content
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes((tag, 0x80 | len(size))) + size + content


def _children(der: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """(tag, element start, content start, element end) of each element in der[start:end]."""
    out = []
    pos = start
    while pos < end:
        if pos + 2 > end:
            raise TemplateError("truncated element")
        tag, first = der[pos], der[pos + 1]
        if tag & 0x1F == 0x1F or first == 0x80:
            raise TemplateError("high tag number or indefinite length")
        if first < 0x80:
            length, body = first, pos + 2
        else:
            n = first & 0x7F
            length, body = int.from_bytes(der[pos + 2:pos + 2 + n], "big"), pos + 2 + n
        if body + length > end:
            raise TemplateError("element longer than its container")
        out.append((tag, pos, body, body + length))
        pos = body + length
    return out


def _only(der: bytes, start: int, end: int, tags: tuple[int, ...]):
    kids = _children(der, start, end)
    if tuple(k[0] for k in kids) != tags:
        raise TemplateError(f"expected tags {tags}, found {tuple(k[0] for k in kids)}")
    return kids


def signing_time(when: dt.datetime) -> bytes:
    """The signingTime value as RFC 5652 wants it: UTCTime for 1950-2049, else
    GeneralizedTime; whole seconds, UTC."""
    when = when.astimezone(dt.UTC)
    if 1950 <= when.year < 2050:
        return tlv(_UTCTIME, when.strftime("%y%m%d%H%M%SZ").encode())
    return tlv(_GENTIME, when.strftime("%Y%m%d%H%M%SZ").encode())


def signing_time_attribute(when: bytes) -> bytes:
    """The signingTime attribute (DER) carrying the time element `when`."""
    return tlv(_SEQUENCE, _SIGNING_TIME + tlv(_SET, when))


def _builder_der(content: bytes, cert: x509.Certificate, key) -> bytes:
    return (pkcs7.PKCS7SignatureBuilder().set_data(content)
            .add_signer(cert, key, hashes.SHA256())
            .sign(serialization.Encoding.DER,
                  [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]))


@dataclass(frozen=True)
class Parsed:
    """A signature laid out as a template says, and its values."""
    template: SignerTemplate
    when: bytes         # the signingTime value (UTCTime or GeneralizedTime element)
    digest: bytes       # the messageDigest value
    signature: bytes
    attributes: bytes   # the signed attributes (the content of [0]), as signed


@dataclass(frozen=True)
class SignerTemplate:
    """The constant parts of one signer's PKCS#7 signatures (see the module docstring)."""
    key: object
    signed_data_head: bytes   # SignedData before signerInfos: version .. certificates
    signer_info_head: bytes   # SignerInfo before signedAttrs: version, sid, digest algorithm
    attributes: tuple         # constant DER attributes, or _TIME / _DIGEST where they vary
    signature_algorithm: bytes

    @property
    def layout(self) -> tuple:
        """Everything but the key: equal layouts make equal signatures from equal values."""
        return (self.signed_data_head, self.signer_info_head, self.attributes,
                self.signature_algorithm)

    @classmethod
    def for_signer(cls, cert: x509.Certificate, key) -> SignerTemplate:
        probe = _builder_der(_PROBE, cert, key)
        parsed = cls.parse(probe)
        template = cls(key, *parsed.template.layout)
        rebuilt = template.assemble(template._attributes(_PROBE, parsed.when), parsed.signature)
        if rebuilt != probe:
            raise TemplateError("the template does not rebuild the builder's output")
        ours = template.sign(_PROBE, parsed.when)   # RSA PKCS#1 v1.5 is deterministic: exact
        if isinstance(key, rsa.RSAPrivateKey) and ours != probe:
            raise TemplateError("the template's RSA signature differs from the builder's")
        return template

    @classmethod
    def parse(cls, der: bytes) -> Parsed:
        """The template (without a key) and values of a one-signer PKCS#7 whose signed
        attributes include a signing time and a message digest; TemplateError if `der`
        is not laid out so."""
        (_, _, body, end), = _only(der, 0, len(der), (_SEQUENCE,))
        (_, o0, _, o1), (_, _, sd_body, sd_end) = _only(der, body, end, (_OID, _CTX0))
        if der[o0:o1] != _SIGNED_DATA:
            raise TemplateError("not signed data")
        (_, _, sd, sd_stop), = _only(der, sd_body, sd_end, (_SEQUENCE,))
        fields = _children(der, sd, sd_stop)
        if not fields or fields[-1][0] != _SET:
            raise TemplateError("no signerInfos")
        infos = fields[-1]
        (_, _, si, si_end), = _only(der, infos[2], infos[3], (_SEQUENCE,))
        version, sid, digest_alg, attrs, sig_alg, sig = _only(
            der, si, si_end, (0x02, _SEQUENCE, _SEQUENCE, _CTX0, _SEQUENCE, _OCTETS))
        parts, values = [], {}
        for _, a0, ab, a1 in _children(der, attrs[2], attrs[3]):
            (_, t0, _, t1), (_, _, vb, ve) = _only(der, ab, a1, (_OID, _SET))
            oid = der[t0:t1]
            if oid in (_SIGNING_TIME, _MESSAGE_DIGEST):
                kind = _TIME if oid == _SIGNING_TIME else _DIGEST
                (tag, v0, v, v1), = _children(der, vb, ve)
                if kind in values or tag not in ((_UTCTIME, _GENTIME) if kind == _TIME
                                                 else (_OCTETS,)):
                    raise TemplateError(f"unexpected {kind} attribute")
                values[kind] = der[v0:v1] if kind == _TIME else der[v:v1]
                parts.append(kind)
            else:
                parts.append(der[a0:a1])
        if set(values) != {_TIME, _DIGEST}:
            raise TemplateError("signing time or message digest missing")
        template = cls(None, der[sd:infos[1]], der[version[1]:digest_alg[3]], tuple(parts),
                       der[sig_alg[1]:sig_alg[3]])
        return Parsed(template, values[_TIME], values[_DIGEST], der[sig[2]:sig[3]],
                      der[attrs[2]:attrs[3]])

    def _attributes(self, signed_part: bytes, when: bytes) -> bytes:
        return self.attributes_with(hashlib.sha256(signed_part).digest(), when)

    def attributes_with(self, digest: bytes, when: bytes) -> bytes:
        """The signed attributes carrying these values (the content of [0], as signed)."""
        pieces = self._pieces(len(digest), len(when))
        return b"".join((pieces[0], when, pieces[1], digest, pieces[2]) if pieces[3] else
                        (pieces[0], digest, pieces[1], when, pieces[2]))

    def _pieces(self, digest_size: int, when_size: int) -> tuple:
        """The attributes' constant bytes around values of these sizes (DER lengths depend
        only on the sizes): (before, between, after, time first?), made once per size."""
        cache = self.__dict__.setdefault("_cache", {})
        key = ("attributes", digest_size, when_size)
        if key not in cache:
            d, w = b"\xd0" * digest_size, b"\xe0" * when_size   # placeholders, then cut
            digest = tlv(_SET, tlv(_OCTETS, d))
            parts = [signing_time_attribute(w) if a is _TIME else
                     tlv(_SEQUENCE, _MESSAGE_DIGEST + digest) if a is _DIGEST else a
                     for a in self.attributes]
            joined = b"".join(parts)
            at_d = sum(map(len, parts[:self.attributes.index(_DIGEST) + 1])) - digest_size
            at_w = sum(map(len, parts[:self.attributes.index(_TIME) + 1])) - when_size
            first, second = sorted(((at_w, when_size), (at_d, digest_size)))
            cache[key] = (joined[:first[0]], joined[first[0] + first[1]:second[0]],
                          joined[second[0] + second[1]:], at_w < at_d)
        return cache[key]

    def assemble(self, attributes: bytes, signature: bytes) -> bytes:
        """The whole DER signature from its signed attributes and signature value."""
        cache = self.__dict__.setdefault("_cache", {})
        key = (len(attributes), len(signature))
        heads = cache.get(key)
        if heads is None:   # the DER headers depend only on the two sizes
            a, s = b"\0" * len(attributes), b"\0" * len(signature)
            whole = self._assemble(a, s)
            # the signer info ends every enclosing element: [0] attributes, the signature
            # algorithm and the signature's OCTET STRING end the whole
            after = len(self.signature_algorithm) + len(tlv(_OCTETS, s))
            at = len(whole) - after - len(a)
            heads = cache[key] = (whole[:at], whole[at + len(a):len(whole) - len(s)])
        return b"".join((heads[0], attributes, heads[1], signature))

    def _assemble(self, attributes: bytes, signature: bytes) -> bytes:
        info = tlv(_SEQUENCE, self.signer_info_head + tlv(_CTX0, attributes)
                   + self.signature_algorithm + tlv(_OCTETS, signature))
        signed_data = tlv(_SEQUENCE, self.signed_data_head + tlv(_SET, info))
        return tlv(_SEQUENCE, _SIGNED_DATA + tlv(_CTX0, signed_data))

    def sign(self, signed_part: bytes, when: bytes) -> bytes:
        """The DER PKCS#7 detached signature of `signed_part` (the whole text/plain MIME
        entity, as signed); `when` is a `signing_time()` value."""
        attributes = self._attributes(signed_part, when)
        signed = tlv(_SET, attributes)   # the attributes are signed as a SET
        if isinstance(self.key, ec.EllipticCurvePrivateKey):
            signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        elif isinstance(self.key, rsa.RSAPrivateKey):
            signature = self.key.sign(signed, padding.PKCS1v15(), hashes.SHA256())
        else:
            raise TemplateError(f"cannot sign with a {type(self.key).__name__}")
        return self.assemble(attributes, signature)
