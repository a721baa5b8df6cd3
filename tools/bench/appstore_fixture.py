#!/usr/bin/env python3
"""Writes an Apple-shaped certificate chain of its own (never Apple's keys) and App Store Server
Notification V2 bodies signed with it, for the service benchmark:

  OUT/root.pem      the root the service is configured to trust (LEDGER_APPSTORE_ROOT_CERT)
  OUT/bodies.jsonl  one {"signedPayload": ...} body a line, each a distinct notification, with its
                    signed transaction and renewal info (three JWS to verify per notification)

Usage: appstore_fixture.py OUT COUNT [BUNDLE_ID]
"""
import base64, datetime, json, os, sys, uuid, time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

INTERMEDIATE_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def cert(subject, issuer, key, issuer_key, ca, oid):
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer)).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
         .not_valid_after(now + datetime.timedelta(days=30))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False,
                                      data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                      encipher_only=False, decipher_only=False), critical=True))
    if oid is not None:
        b = b.add_extension(x509.UnrecognizedExtension(oid, b"\x05\x00"), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    out, count = sys.argv[1], int(sys.argv[2])
    bundle = sys.argv[3] if len(sys.argv) > 3 else "com.example.ledgerbench"
    os.makedirs(out, exist_ok=True)
    root_key, int_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = cert("Bench Root CA - G3", "Bench Root CA - G3", root_key, root_key, True, None)
    inter = cert("Bench Worldwide Developer Relations", "Bench Root CA - G3", int_key, root_key, True, INTERMEDIATE_OID)
    leaf = cert("Bench Prod ECC Mac App Store and iTunes Store Receipt Signing", "Bench Worldwide Developer Relations",
                leaf_key, int_key, False, LEAF_OID)
    with open(os.path.join(out, "root.pem"), "wb") as f:
        f.write(root.public_bytes(serialization.Encoding.PEM))
    x5c = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in (leaf, inter, root)]
    header = b64url(json.dumps({"alg": "ES256", "x5c": x5c}, separators=(",", ":")).encode())

    def sign(payload):
        body = header + "." + b64url(json.dumps(payload, separators=(",", ":")).encode())
        r, s = decode_dss_signature(leaf_key.sign(body.encode(), ec.ECDSA(hashes.SHA256())))
        return body + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    ms = int(time.time() * 1000)
    with open(os.path.join(out, "bodies.jsonl"), "w") as f:
        for i in range(count):
            tx = {"transactionId": str(3000000000000000 + i), "originalTransactionId": str(3000000000000000 + i),
                  "bundleId": bundle, "productId": "coins_100", "purchaseDate": ms - 1000, "quantity": 1,
                  "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": ms,
                  "environment": "Production", "price": 990, "currency": "USD", "storefront": "USA"}
            renewal = {"originalTransactionId": tx["originalTransactionId"], "productId": "coins_100",
                       "signedDate": ms, "environment": "Production"}
            payload = {"notificationType": "ONE_TIME_CHARGE", "notificationUUID": str(uuid.uuid4()), "version": "2.0",
                       "signedDate": ms, "data": {"bundleId": bundle, "environment": "Production", "appAppleId": 1,
                                                  "signedTransactionInfo": sign(tx), "signedRenewalInfo": sign(renewal)}}
            f.write(json.dumps({"signedPayload": sign(payload)}, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
