#!/usr/bin/env python3
"""The contract test's second half: a client written from schema/openapi.yaml alone drives every
route with real data (appends, retries, refusals, reads, the live tail, entity views, the audit in
each format, a signed notification from each store, health and metrics), and checks every answer
against the document: its status is documented, its content type is, and its body validates
against the schema the document gives (JSON bodies whole; NDJSON lines and Server-Sent Events'
data against the media type's x-itemSchema, OpenAPI 3.2's itemSchema). It then fails if any object
schema the responses use was never met by a real answer, so a response section that no test
reaches is named, not assumed.

    contract_responses.py stores DIR            keys for the three stores; prints their settings
    contract_responses.py check SPEC URL TOKEN DIR USER ORDER
"""
import base64, datetime, json, os, subprocess, sys, time, urllib.error, urllib.parse, urllib.request, uuid

import jsonschema, yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.x509.oid import NameOID

APPLE_BUNDLE = "com.example.contract"
GOOGLE_AUDIENCE = "https://ledger.example.test/v1/notifications/googleplay"
GOOGLE_PACKAGE = "com.example.contract"
WECHAT_APPID, WECHAT_MCHID = "wxd678efh567hg6787", "1230000109"
WECHAT_KEY_ID = "PUB_KEY_ID_0112345678902026033100112233000001"
APIV3_KEY = b"0123456789abcdef0123456789ABCDEF"


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def pem_private(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


# ---- the stores' keys (test keys made here, never real ones) ----

def make_stores(folder):
    os.makedirs(folder, exist_ok=True)
    now = time.time()
    start, end = (datetime.datetime.fromtimestamp(t, datetime.timezone.utc) for t in (now - 86400, now + 86400 * 30))

    def cert(subject, issuer, public, signer, ca, oid):
        b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
             .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(public)
             .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if oid:
            b = b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(oid), b"\x05\x00"), critical=False)
        return b.sign(signer, hashes.SHA256())

    root_key, mid_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = cert("Contract Root CA", "Contract Root CA", root_key.public_key(), root_key, True, None)
    mid = cert("Contract WWDR", "Contract Root CA", mid_key.public_key(), root_key, True, "1.2.840.113635.100.6.2.1")
    leaf = cert("Contract Signing", "Contract WWDR", leaf_key.public_key(), mid_key, False, "1.2.840.113635.100.6.11.1")
    open(f"{folder}/apple-root.pem", "wb").write(root.public_bytes(serialization.Encoding.PEM))
    open(f"{folder}/apple-leaf.key", "wb").write(pem_private(leaf_key))
    open(f"{folder}/apple-chain.json", "w").write(json.dumps([base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in (leaf, mid, root)]))

    google = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = google.public_key().public_numbers()
    jwk = {"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "contract-1",
           "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")), "e": b64url(numbers.e.to_bytes(3, "big"))}
    open(f"{folder}/google.jwks", "w").write(json.dumps({"keys": [jwk]}))
    open(f"{folder}/google.key", "wb").write(pem_private(google))

    wechat = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    open(f"{folder}/wechat-public.pem", "wb").write(wechat.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    open(f"{folder}/wechat.key", "wb").write(pem_private(wechat))
    open(f"{folder}/apiv3.key", "wb").write(APIV3_KEY)
    settings = {
        "LEDGER_APPSTORE_ROOT_CERT": f"{folder}/apple-root.pem", "LEDGER_APPSTORE_BUNDLE_ID": APPLE_BUNDLE,
        "LEDGER_GOOGLE_JWKS": f"{folder}/google.jwks", "LEDGER_GOOGLE_AUDIENCE": GOOGLE_AUDIENCE, "LEDGER_GOOGLE_PACKAGE_NAME": GOOGLE_PACKAGE,
        "LEDGER_WECHAT_PUBLIC_KEY": f"{folder}/wechat-public.pem", "LEDGER_WECHAT_PUBLIC_KEY_ID": WECHAT_KEY_ID,
        "LEDGER_WECHAT_APIV3_KEY_FILE": f"{folder}/apiv3.key", "LEDGER_WECHAT_APPID": WECHAT_APPID, "LEDGER_WECHAT_MCHID": WECHAT_MCHID,
    }
    for k, v in settings.items():
        print(f"{k}={v}")


def private(folder, name):
    return serialization.load_pem_private_key(open(f"{folder}/{name}", "rb").read(), None)


def apple_body(folder):
    key, chain = private(folder, "apple-leaf.key"), json.load(open(f"{folder}/apple-chain.json"))

    def jws(payload):
        signing_input = b64url(json.dumps({"alg": "ES256", "x5c": chain}).encode()) + "." + b64url(json.dumps(payload).encode())
        r, s = utils.decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    ms = int(time.time() * 1000)
    tx = {"transactionId": "2000000900000001", "originalTransactionId": "2000000900000001", "bundleId": APPLE_BUNDLE,
          "productId": "coins_60", "purchaseDate": ms - 60000, "originalPurchaseDate": ms - 60000, "quantity": 1, "type": "Consumable",
          "inAppOwnershipType": "PURCHASED", "signedDate": ms, "environment": "Production", "transactionReason": "PURCHASE",
          "storefront": "USA", "price": 990, "currency": "USD", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}
    payload = {"notificationType": "ONE_TIME_CHARGE", "notificationUUID": str(uuid.uuid4()), "version": "2.0", "signedDate": ms,
               "data": {"appAppleId": 1234567890, "bundleId": APPLE_BUNDLE, "bundleVersion": "42", "environment": "Production",
                        "signedTransactionInfo": jws(tx), "status": 1}}
    return json.dumps({"signedPayload": jws(payload)}).encode(), {"Content-Type": "application/json"}


def google_body(folder):
    key = private(folder, "google.key")
    now = int(time.time())
    signing_input = (b64url(json.dumps({"alg": "RS256", "kid": "contract-1", "typ": "JWT"}).encode()) + "." +
                     b64url(json.dumps({"aud": GOOGLE_AUDIENCE, "email": "push@example.iam.gserviceaccount.com", "email_verified": True,
                                        "exp": now + 600, "iat": now - 10, "iss": "https://accounts.google.com", "sub": "1"}).encode()))
    token = signing_input + "." + b64url(key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256()))
    notification = {"version": "1.0", "packageName": GOOGLE_PACKAGE, "eventTimeMillis": str(now * 1000),
                    "voidedPurchaseNotification": {"purchaseToken": "contract-token", "orderId": "GPA.3300-0000-0000-00001",
                                                   "productType": 2, "refundType": 1}}
    body = {"message": {"attributes": {}, "data": base64.b64encode(json.dumps(notification).encode()).decode(),
                        "messageId": str(uuid.uuid4()), "publishTime": "2026-03-31T08:15:00.000Z"},
            "subscription": "projects/example/subscriptions/rtdn-push"}
    return json.dumps(body).encode(), {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}


def wechat_body(folder, tamper=False):
    resource = {"appid": WECHAT_APPID, "mchid": WECHAT_MCHID, "out_trade_no": "contract-order-1", "transaction_id": "4200000900202603310000000001",
                "trade_type": "APP", "trade_state": "SUCCESS", "trade_state_desc": "支付成功", "bank_type": "CMC", "attach": "",
                "success_time": "2026-03-31T16:15:00+08:00", "payer": {"openid": "oContract"},
                "amount": {"total": 600, "payer_total": 600, "currency": "CNY", "payer_currency": "CNY"}}
    nonce = "contractnonc"
    sealed = AESGCM(APIV3_KEY).encrypt(nonce.encode(), json.dumps(resource, ensure_ascii=False).encode(), b"transaction")
    body = json.dumps({"id": str(uuid.uuid4()), "create_time": "2026-03-31T16:15:05+08:00", "resource_type": "encrypt-resource",
                       "event_type": "TRANSACTION.SUCCESS", "summary": "支付成功",
                       "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM", "associated_data": "transaction",
                                    "ciphertext": base64.b64encode(sealed).decode(), "nonce": nonce}}, ensure_ascii=False).encode()
    ts, header_nonce = str(int(time.time())), uuid.uuid4().hex
    signature = private(folder, "wechat.key").sign(f"{ts}\n{header_nonce}\n".encode() + body + b"\n", padding.PKCS1v15(), hashes.SHA256())
    if tamper:
        body = body.replace("支付成功".encode(), "支付失败".encode(), 1)
    return body, {"Content-Type": "application/json", "Wechatpay-Timestamp": ts, "Wechatpay-Nonce": header_nonce,
                  "Wechatpay-Signature": base64.b64encode(signature).decode(), "Wechatpay-Serial": WECHAT_KEY_ID}


# ---- the document ----

class Contract:
    def __init__(self, spec_path):
        self.spec = yaml.safe_load(open(spec_path))
        self.seen_objects = set()      # pointers of object schemas met by a real, non-null value
        self.seen_responses = set()    # (method, path, status, media type)
        self.failures = []

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            target = self.spec
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def pointer(self, node_path, node):
        return node["$ref"] if isinstance(node, dict) and "$ref" in node else node_path

    def json_schema(self, node):
        """OpenAPI 3.0 schema to JSON Schema: references inlined, nullable as a null alternative."""
        node = self.resolve(node)
        if isinstance(node, list):
            return [self.json_schema(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for k, v in node.items():
            if k in ("nullable", "example", "format", "description") or k.startswith("x-"):
                continue
            if k == "properties":
                out[k] = {name: self.json_schema(s) for name, s in v.items()}
            elif k in ("items", "additionalProperties", "not") and isinstance(v, dict):
                out[k] = self.json_schema(v)
            elif k in ("allOf", "oneOf", "anyOf"):
                out[k] = [self.json_schema(s) for s in v]
            else:
                out[k] = v
        return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out

    def objects(self, node, where, out, stack=()):
        """Every object schema reachable from `node`, by pointer (a component's name for a $ref)."""
        if isinstance(node, dict) and "$ref" in node:
            if node["$ref"] in stack:
                return
            stack, where, node = stack + (node["$ref"],), node["$ref"], self.resolve(node)
        if not isinstance(node, dict):
            return
        if node.get("type") == "object" and "properties" in node:
            out.add(where)
        for k in ("allOf", "oneOf", "anyOf"):
            for i, s in enumerate(node.get(k, [])):
                self.objects(s, f"{where}/{k}/{i}", out, stack)
        for name, s in node.get("properties", {}).items():
            self.objects(s, f"{where}/properties/{name}", out, stack)
        for k in ("items", "additionalProperties"):
            if isinstance(node.get(k), dict):
                self.objects(node[k], f"{where}/{k}", out, stack)

    def meet(self, node, where, value):
        """Marks the object schemas `value` (already valid) meets."""
        if isinstance(node, dict) and "$ref" in node:
            where, node = node["$ref"], self.resolve(node)
        if not isinstance(node, dict) or value is None:
            return
        for k in ("allOf", "oneOf", "anyOf"):
            for i, s in enumerate(node.get(k, [])):
                try:
                    jsonschema.validate(value, self.json_schema(s))
                    self.meet(s, f"{where}/{k}/{i}", value)
                except jsonschema.ValidationError:
                    pass
        if isinstance(value, dict):
            if node.get("type") == "object" and "properties" in node:
                self.seen_objects.add(where)
            for name, s in node.get("properties", {}).items():
                if name in value:
                    self.meet(s, f"{where}/properties/{name}", value[name])
            if isinstance(node.get("additionalProperties"), dict):
                for name, v in value.items():
                    if name not in node.get("properties", {}):
                        self.meet(node["additionalProperties"], f"{where}/additionalProperties", v)
        if isinstance(value, list) and isinstance(node.get("items"), dict):
            for v in value:
                self.meet(node["items"], f"{where}/items", v)

    def operation(self, method, path):
        for template, item in self.spec["paths"].items():
            a, b = template.strip("/").split("/"), path.strip("/").split("/")
            if len(a) == len(b) and all(x == y or x.startswith("{") for x, y in zip(a, b)) and method.lower() in item:
                return template, item[method.lower()]
        return None, None

    def methods(self, path):
        """The methods the document gives the path, upper case."""
        return sorted(m.upper() for m in ("get", "post", "put", "patch", "delete") if self.operation(m, path.split("?")[0])[1])

    def validate(self, label, node, where, value):
        try:
            jsonschema.validate(value, self.json_schema(node))
        except jsonschema.ValidationError as e:
            self.failures.append(f"{label}: the body does not match {where}: {e.message} at {list(e.absolute_path)}")
            return
        self.meet(node, where, value)

    def check(self, method, path, status, media, body):
        label = f"{method} {path} -> {status} {media}"
        template, op = self.operation(method, path.split("?")[0])
        if op is None and status == 405 and self.methods(path):
            # A method the path does not take: a Problem (the document cannot list methods it lacks).
            self.validate(label, {"$ref": "#/components/schemas/Problem"}, "#/components/schemas/Problem", body)
            return
        if op is None:
            self.failures.append(f"{label}: the document has no such operation")
            return
        response = op.get("responses", {}).get(str(status))
        if response is None:
            self.failures.append(f"{label}: status {status} is not documented")
            return
        where = f"#/paths/{template.replace('/', '~1')}/{method.lower()}/responses/{status}"
        if "$ref" in response:
            where, response = response["$ref"], self.resolve(response)
        content = response.get("content", {})
        if media not in content:
            self.failures.append(f"{label}: content type {media} is not documented for {status} (documented: {sorted(content)})")
            return
        self.seen_responses.add((method, template, str(status), media))
        entry, where = content[media], f"{where}/content/{media.replace('/', '~1')}"
        if "x-itemSchema" in entry:
            items = body if isinstance(body, list) else []
            if not items:
                self.failures.append(f"{label}: no items to check")
            for i, item in enumerate(items):
                self.validate(f"{label} item {i + 1}", entry["x-itemSchema"], self.pointer(f"{where}/x-itemSchema", entry["x-itemSchema"]), item)
        elif media.endswith("json"):
            self.validate(label, entry["schema"], self.pointer(f"{where}/schema", entry["schema"]), body)

    def uncovered(self):
        """Object schemas of responses no real answer met, and 2xx answers never seen."""
        wanted, missing = set(), []
        for template, item in self.spec["paths"].items():
            for method, op in item.items():
                if not isinstance(op, dict) or "responses" not in op:
                    continue
                for status, response in op["responses"].items():
                    where = f"#/paths/{template.replace('/', '~1')}/{method}/responses/{status}"
                    if "$ref" in response:
                        where, response = response["$ref"], self.resolve(response)
                    for media, entry in response.get("content", {}).items():
                        base = f"{where}/content/{media.replace('/', '~1')}"
                        for key in ("schema", "x-itemSchema"):
                            if key in entry:
                                self.objects(entry[key], self.pointer(f"{base}/{key}", entry[key]), wanted)
                        if status.startswith("2") and (method.upper(), template, status, media) not in self.seen_responses:
                            missing.append(f"no {method.upper()} {template} answered {status} {media}")
        self.wanted = wanted
        return missing + [f"no answer met the schema {w}" for w in sorted(wanted - self.seen_objects)]


# ---- the harness: another writer ----

class AnotherWriter:
    """Another writer of the same log in the middle of its commit: a psql session holding the log's
    append lock (LEDGER_DATABASE_URL, LEDGER_SCHEMA, as contract-test.sh exports them), until
    the block ends. Not part of the document: what the service sees when other processes append."""

    def __enter__(self):
        self.psql = subprocess.Popen(["psql", os.environ["LEDGER_DATABASE_URL"], "-qAt", "-v", "ON_ERROR_STOP=1"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        lock = "ledger-append:" + os.environ["LEDGER_SCHEMA"]
        self.psql.stdin.write(f"BEGIN;\nSELECT pg_advisory_xact_lock(4243, hashtext('{lock}'));\n\\echo locked\n")
        self.psql.stdin.flush()
        while (line := self.psql.stdout.readline()) and line.strip() != "locked":
            pass
        if not line:
            raise RuntimeError("psql could not take the append lock")
        return self

    def __exit__(self, *exc):
        self.psql.communicate("COMMIT;\n", timeout=60)
        return False


# ---- the client ----

class Client:
    def __init__(self, contract, base, token):
        self.contract, self.base, self.token = contract, base.rstrip("/"), token

    def call(self, method, path, body=None, headers=None, token=True, expect=None):
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=h)
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                status, response_headers, raw = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, response_headers, raw = e.code, e.headers, e.read()
        media = (response_headers.get("Content-Type") or "").split(";")[0].strip()
        text = raw.decode("utf-8")
        if media == "application/x-ndjson":
            parsed = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif media.endswith("json"):
            parsed = json.loads(text)
        else:
            parsed = text
        if expect is not None and status != expect:
            self.contract.failures.append(f"{method} {path}: expected {expect}, got {status}: {text[:300]}")
        self.contract.check(method, path, status, media, parsed)
        return status, response_headers, parsed

    def tail(self, after, count):
        """The first `count` facts of the live tail after `after` (Server-Sent Events)."""
        request = urllib.request.Request(self.base + "/v1/events", headers={
            "Authorization": f"Bearer {self.token}", "Accept": "text/event-stream", "Last-Event-ID": str(after)})
        facts = []
        with urllib.request.urlopen(request, timeout=60) as stream:
            media = stream.headers.get("Content-Type", "").split(";")[0].strip()
            for raw in stream:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("data: "):
                    facts.append(json.loads(line[6:]))
                    if len(facts) == count:
                        break
        self.contract.check("GET", "/v1/events", 200, media, facts)
        return facts


def run(spec, base, token, folder, user, order):
    contract = Contract(spec)
    c = Client(contract, base, token)
    quote = lambda s: urllib.parse.quote(s, safe="")
    # Appends: a JSON array (201), the same again (200), a refused line (422), a conflicting key (409),
    # no token (401), a method the path does not take (405).
    run_id = uuid.uuid4().hex[:12]
    facts = [{"stream": f"order:contract/{run_id}", "type": "OrderCreated", "occurredAt": "2026-03-31T08:15:00Z",
              "idempotencyKey": f"order:contract/{run_id}:created", "expectedVersion": "no-stream",
              "payload": {"orderId": f"contract/{run_id}", "userId": "u_contract", "channel": "appstore", "productId": "coins100",
                          "amount": 600, "currency": "CNY"}}]
    key = {"Content-Type": "application/json", "Idempotency-Key": f"contract-{run_id}"}
    _, _, appended = c.call("POST", "/v1/events", json.dumps(facts).encode(), key, expect=201)
    c.call("POST", "/v1/events", json.dumps(facts).encode(), key, expect=200)
    c.call("POST", "/v1/events", json.dumps(facts + facts).encode(), key, expect=409)
    # Answered at commit while another writer holds the append lock: 202, position null.
    later = [dict(facts[0], stream=f"order:contract/{run_id}-later", idempotencyKey=f"order:contract/{run_id}-later:created",
                  payload=dict(facts[0]["payload"], orderId=f"contract/{run_id}-later"))]
    with AnotherWriter():
        _, headers, accepted = c.call("POST", "/v1/events", json.dumps(later).encode(),
                                      {"Content-Type": "application/json", "Prefer": "respond-async"}, expect=202)
    if headers.get("Preference-Applied") != "respond-async" or accepted["events"][0]["position"] is not None:
        contract.failures.append(f"Prefer: respond-async while the lock was held: {headers.get('Preference-Applied')}, {accepted}")
    c.call("POST", "/v1/events", b'{"stream":"order:x","type":"NoSuchFact","payload":{},"occurredAt":"2026-03-31T08:15:00Z"}\n',
           {"Content-Type": "application/x-ndjson"}, expect=422)
    c.call("POST", "/v1/events", b"{", {"Content-Type": "application/json"}, expect=400)
    c.call("POST", "/v1/events", json.dumps(facts).encode(), {"Content-Type": "application/json"}, token=False, expect=401)
    _, headers, _ = c.call("DELETE", "/v1/events", expect=405)
    allowed = sorted(m.strip() for m in (headers.get("Allow") or "").split(","))
    if allowed != contract.methods("/v1/events"):
        contract.failures.append(f"405 on /v1/events: Allow is {allowed}, the document gives {contract.methods('/v1/events')}")
    # Reads: the log, a stream by its encoded id, the live tail.
    position = appended["events"][0]["position"]
    c.call("GET", f"/v1/events?from={max(1, position - 5)}&limit=10", expect=200)
    c.call("GET", f"/v1/streams/{quote(facts[0]['stream'])}", expect=200)
    c.call("GET", f"/v1/streams/{quote('order:no-such-stream')}", expect=404)
    tail = c.tail(position - 3, 3)
    if [f["position"] for f in tail] != [position - 2, position - 1, position]:
        contract.failures.append(f"the live tail after {position - 3} gave {[f['position'] for f in tail]}")
    # Entity views (a user with subscriptions and entitlement periods; an order).
    c.call("GET", f"/v1/users/{quote(user)}", expect=200)
    c.call("GET", f"/v1/orders/{quote(order)}", expect=200)
    c.call("GET", f"/v1/orders/{quote('no/such order')}", expect=404)
    # The audit, in each format.
    for fmt in ("json", "csv", "html"):
        c.call("GET", f"/v1/audit?format={fmt}", expect=200)
    c.call("GET", "/v1/audit?as_of=not-a-time", expect=400)
    # A signed notification from each store (200), and a tampered one (refused).
    for route, make in (("appstore", apple_body), ("googleplay", google_body), ("wechatpay", wechat_body)):
        body, headers = make(folder)
        c.call("POST", f"/v1/notifications/{route}", body, headers, token=False, expect=200)
    body, headers = wechat_body(folder, tamper=True)
    status, _, _ = c.call("POST", "/v1/notifications/wechatpay", body, headers, token=False)
    if status < 400:
        contract.failures.append(f"a tampered WeChat Pay notification was accepted ({status})")
    # Health, readiness (both questions) and metrics.
    c.call("GET", "/healthz", token=False, expect=200)
    c.call("GET", "/readyz", token=False, expect=200)
    c.call("GET", "/readyz?reads=fresh", token=False)
    c.call("GET", "/metrics", token=False, expect=200)
    problems = contract.failures + contract.uncovered()
    for p in problems:
        print(f"contract: {p}", file=sys.stderr)
    print(f"contract: {len(contract.seen_responses)} documented answers checked against their schemas; "
          f"{len(contract.seen_objects & contract.wanted)} of the responses' {len(contract.wanted)} object schemas met; "
          f"{len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "stores":
        make_stores(sys.argv[2])
    elif len(sys.argv) == 8 and sys.argv[1] == "check":
        sys.exit(run(*sys.argv[2:]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
