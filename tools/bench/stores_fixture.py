#!/usr/bin/env python3
"""Writes keys of its own (never a store's) and signed Google Play and WeChat Pay notifications for
the service benchmark:

  OUT/google-jwks.json     the JWKS the service trusts (LEDGER_GOOGLE_JWKS)
  OUT/google-token         one OIDC token for the push subscription (Pub/Sub reuses one for an hour)
  OUT/google.jsonl         distinct Pub/Sub push bodies (RTDN subscription notifications)
  OUT/wechat-platform.pem  the WeChat platform certificate (LEDGER_WECHAT_PLATFORM_CERTS)
  OUT/wechat-apiv3.key     the 32-byte APIv3 key (LEDGER_WECHAT_APIV3_KEY_FILE)
  OUT/wechat.tsv           distinct notifications: timestamp, nonce, signature, serial, body (tab-separated)

Usage: stores_fixture.py OUT COUNT
"""
import base64, datetime, json, os, sys, time, uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.x509.oid import NameOID

AUDIENCE = "https://ledger.example.test/v1/notifications/googleplay"
ACCOUNT = "rtdn-push@example-project.iam.gserviceaccount.com"
PACKAGE = "com.example.ledgerbench"
APPID, MCHID = "wxbench0000000001", "1900000109"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uint(n):
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


def google(out, count):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pub = key.public_key().public_numbers()
    with open(os.path.join(out, "google-jwks.json"), "w") as f:
        json.dump({"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "bench-1", "n": b64url(uint(pub.n)), "e": b64url(uint(pub.e))}]}, f)
    now = int(time.time())
    header = b64url(json.dumps({"alg": "RS256", "kid": "bench-1", "typ": "JWT"}).encode())
    claims = b64url(json.dumps({"aud": AUDIENCE, "email": ACCOUNT, "email_verified": True, "exp": now + 3600, "iat": now,
                                "iss": "https://accounts.google.com", "sub": "1"}).encode())
    signature = key.sign(f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    with open(os.path.join(out, "google-token"), "w") as f:
        f.write(f"{header}.{claims}.{b64url(signature)}")
    with open(os.path.join(out, "google.jsonl"), "w") as f:
        for i in range(count):
            n = {"version": "1.0", "packageName": PACKAGE, "eventTimeMillis": str(now * 1000),
                 "subscriptionNotification": {"version": "1.0", "notificationType": 2, "purchaseToken": f"token-{i}", "subscriptionId": "vip_month"}}
            data = base64.b64encode(json.dumps(n).encode()).decode()
            f.write(json.dumps({"message": {"data": data, "messageId": f"bench-{now}-{i}", "publishTime": "2026-03-31T08:15:00Z"},
                                "subscription": "projects/example/subscriptions/rtdn"}) + "\n")


def wechat(out, count):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Tenpay.com bench CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    serial = x509.random_serial_number()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key()).serial_number(serial)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .sign(key, hashes.SHA256()))
    with open(os.path.join(out, "wechat-platform.pem"), "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    apiv3 = os.urandom(16).hex().encode()  # 32 ASCII bytes, as WeChat's keys are
    with open(os.path.join(out, "wechat-apiv3.key"), "wb") as f:
        f.write(apiv3)
    aead = AESGCM(apiv3)
    ts = str(int(time.time()))
    with open(os.path.join(out, "wechat.tsv"), "w") as f:
        for i in range(count):
            resource = {"appid": APPID, "mchid": MCHID, "out_trade_no": f"order-{ts}-{i}", "transaction_id": f"42000{ts}{i:08d}",
                        "trade_type": "APP", "trade_state": "SUCCESS", "success_time": "2026-03-31T16:15:00+08:00",
                        "amount": {"total": 600, "currency": "CNY"}}
            nonce = uuid.uuid4().hex[:12]
            ct = aead.encrypt(nonce.encode(), json.dumps(resource).encode(), b"transaction")
            body = json.dumps({"id": f"EV-{ts}-{i}", "create_time": "2026-03-31T16:15:05+08:00", "resource_type": "encrypt-resource",
                               "event_type": "TRANSACTION.SUCCESS", "summary": "ok",
                               "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM",
                                            "ciphertext": base64.b64encode(ct).decode(), "associated_data": "transaction", "nonce": nonce}},
                              separators=(",", ":"))
            header_nonce = uuid.uuid4().hex
            sig = key.sign(f"{ts}\n{header_nonce}\n{body}\n".encode(), padding.PKCS1v15(), hashes.SHA256())
            f.write("\t".join([ts, header_nonce, base64.b64encode(sig).decode(), format(serial, "X"), body]) + "\n")


if __name__ == "__main__":
    out, count = sys.argv[1], int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    google(out, count)
    wechat(out, count)
