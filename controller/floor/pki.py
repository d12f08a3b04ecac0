"""A throwaway certificate authority for the room's TLS (tests, the benchmark, a trial room).

``make_pki(folder)`` writes ``ca.pem``, ``server.pem``/``server-key.pem`` (for 127.0.0.1,
localhost and any extra names) and ``floor.pem``/``floor-key.pem`` (a client certificate),
using the ``cryptography`` package.  A real room uses its own CA (``systemd/room/README.md``).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pki:
    ca: Path
    cert: Path
    key: Path
    client_cert: Path
    client_key: Path


def make_pki(folder: str | Path, names: tuple[str, ...] = ("localhost",), ips: tuple[str, ...] = ("127.0.0.1",),
             days: int = 2) -> Pki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        path.chmod(0o644)  # a throwaway: readable by the server processes the tests start

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("poker-room test CA")
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now).not_valid_after(now + dt.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                            crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
               .sign(ca_key, hashes.SHA256()))

    def issue(cn: str, server: bool) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        b = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca_cert.subject)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now).not_valid_after(now + dt.timedelta(days=days))
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                                                  if server else [ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if server:
            sans: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
            sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return b.sign(ca_key, hashes.SHA256()), key

    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca_cert.public_bytes(pem))
    cert, key = issue("poker-room node", server=True)
    (folder / "server.pem").write_bytes(cert.public_bytes(pem))
    write_key(key, folder / "server-key.pem")
    cert, key = issue("floor", server=False)
    (folder / "floor.pem").write_bytes(cert.public_bytes(pem))
    write_key(key, folder / "floor-key.pem")
    return Pki(folder / "ca.pem", folder / "server.pem", folder / "server-key.pem", folder / "floor.pem",
               folder / "floor-key.pem")
