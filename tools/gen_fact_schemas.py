#!/usr/bin/env python3
"""Writes schema/facts/*.schema.json: one JSON Schema (draft 2020-12) per purchase fact type and
schema version, describing exactly what the Swift readers in Sources/LedgerDomain accept.

The field lists below mirror `init(_ r: inout PayloadReader)` in Sources/LedgerDomain/Facts.swift;
currency codes are read from Sources/LedgerDomain/Money.swift. Run from anywhere:

    python3 tools/gen_fact_schemas.py

Tests/LedgerDomainTests/SchemaAgreementTests.swift checks the checked-in output against the Swift
decoders (valid samples in schema/facts/samples, and mutated invalid variants of them).
"""
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "schema", "facts")
BASE = "https://example.invalid/purchase-ledger/facts/"
COMMON = "common.schema.json"

MAX_AMOUNT = 1_000_000_000_000


def currencies():
    text = open(os.path.join(ROOT, "Sources", "LedgerDomain", "Money.swift"), encoding="utf-8").read()
    start = text.index("static let exponents")
    body = text[start:text.index("return table", start)]
    codes = set()
    # The two-digit block is a multi-line string literal; the others are single-line literals.
    for block in re.findall(r'"""(.*?)"""', body, re.S) + re.findall(r'for c in "([A-Z ]+)"', body):
        codes.update(re.findall(r"\b[A-Z]{3}\b", block))
    assert len(codes) > 150, codes
    return sorted(codes)


def ref(name):
    return {"$ref": f"{COMMON}#/$defs/{name}"}


# Field constructors: each returns the schema of a present, non-null value.
def text(description=None):
    s = ref("text")
    if description:
        s["description"] = description
    return s


def integer(minimum=None, maximum=None, description=None):
    s = {"type": "integer"}
    if minimum is not None:
        s["minimum"] = minimum
    if maximum is not None:
        s["maximum"] = maximum
    if description:
        s["description"] = description
    return s


def boolean(description=None):
    s = {"type": "boolean"}
    if description:
        s["description"] = description
    return s


def timestamp(description=None):
    s = ref("timestamp")
    if description:
        s["description"] = description
    return s


def uuid(description=None):
    s = ref("uuid")
    if description:
        s["description"] = description
    return s


def open_enum(known, description):
    s = ref("text")
    s["description"] = (f"{description} Open enum: known values include {', '.join(known)}; any other value "
                        "(1-200 characters) is accepted and kept raw, since stores add values without notice.")
    s["x-knownValues"] = list(known)
    return s


def closed(name_or_values, description=None):
    s = ref(name_or_values) if isinstance(name_or_values, str) else {"type": "string", "enum": list(name_or_values)}
    if description:
        s["description"] = description
    return s


CHANNEL = lambda d=None: closed("channel", d)  # noqa: E731
CURRENCY = lambda d=None: closed("currency", d)  # noqa: E731
MONEY = lambda d=None: (lambda s: (s.update({"description": d}) if d else None, s)[1])(ref("money"))  # noqa: E731
ENTITLEMENT = lambda d=None: (lambda s: (s.update({"description": d}) if d else None, s)[1])(ref("entitlement"))  # noqa: E731


def req(schema):
    return (True, schema)


def opt(schema):
    return (False, schema)


def object_schema(fields):
    props, required = {}, []
    for name, (is_required, schema) in fields:
        if is_required:
            required.append(name)
            props[name] = schema
        else:
            description = schema.pop("description", None)
            nullable = {"oneOf": [schema, {"type": "null"}]}
            if description:
                nullable = {"description": description, **nullable}
            props[name] = nullable
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def common():
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": BASE + COMMON,
        "title": "Shared definitions of the purchase fact payloads",
        "description": "Referenced by the per-fact schemas in this folder.",
        "$defs": {
            "text": {
                "description": "A non-empty string of at most 200 characters (Unicode scalars), without control characters (U+0000-U+001F, U+007F).",
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[^\\u0000-\\u001F\\u007F]*$",
            },
            "timestamp": {
                "description": "An RFC 3339 date-time with a zone (Z or +-HH:MM) and at most 6 fractional digits, e.g. 2026-03-31T08:15:00Z. Leap seconds (:60) are refused.",
                "type": "string",
                "format": "date-time",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-5][0-9](\\.[0-9]{1,6})?([Zz]|[+-][0-9]{2}:[0-9]{2})$",
            },
            "uuid": {
                "description": "A UUID in 8-4-4-4-12 hex form (either case), e.g. 7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11; written back lowercase.",
                "type": "string",
                "format": "uuid",
            },
            "channel": {
                "description": "The store: App Store, Google Play or WeChat Pay.",
                "type": "string",
                "enum": ["appstore", "googleplay", "wechat"],
            },
            "currency": {
                "description": "An active ISO 4217 code (Currency.exponents in Sources/LedgerDomain/Money.swift).",
                "type": "string",
                "enum": currencies(),
            },
            "money": {
                "description": "An amount in integer minor units (600 CNY is 6.00 yuan). storeMilliunits, Apple's price in thousandths of the major unit, is optional and must equal amount exactly (not expressible here; see README).",
                **object_schema([
                    ("amount", req(integer(0, MAX_AMOUNT, "Minor units (cents, fen, yen...)."))),
                    ("currency", req(CURRENCY())),
                    ("storeMilliunits", opt(integer(0, None, "Apple's price in milliunits, when the store reported one; must equal amount."))),
                ]),
            },
            "entitlement": {
                "description": "What a product gives or fulfilment granted, by kind.",
                "oneOf": [
                    {"description": "A consumable: this many coins per unit bought.",
                     **object_schema([("kind", req({"const": "coins"})), ("amount", req(integer(1, 1_000_000_000)))])},
                    {"description": "A non-consumable feature owned forever (no_ads).",
                     **object_schema([("kind", req({"const": "feature"})), ("feature", req(text()))])},
                    {"description": "An auto-renewable subscription: each paid period adds periodDays of entitlement; rank orders products within a group (higher is an upgrade, default 0).",
                     **object_schema([("kind", req({"const": "subscription"})), ("entitlement", req(text())),
                                      ("group", req(text())), ("periodDays", req(integer(1, 3660))),
                                      ("rank", opt(integer(0, 1000)))])},
                    {"description": "A non-renewing period of entitlement (a VIP quarter).",
                     **object_schema([("kind", req({"const": "period"})), ("entitlement", req(text())),
                                      ("days", req(integer(1, 36600)))])},
                ],
            },
        },
    }


CALLBACK_STATES = ["purchased", "failed", "cancelled", "deferred", "restored"]
OWNERSHIP = ["PURCHASED", "FAMILY_SHARED"]
ENVIRONMENTS = ["Production", "Sandbox", "Xcode", "LocalTesting"]
REVOCATION = ["refund", "revoke", "family-revoke", "chargeback", "support"]
EXPIRATION = ["voluntary", "billing-retry", "price-increase", "product-not-for-sale"]
CLOSE = ["timeout", "user-cancel", "store-closed"]
NOTIFICATION_TYPES = ["DID_RENEW", "REFUND", "CONSUMPTION_REQUEST", "SUBSCRIPTION_RENEWED", "2", "TRANSACTION.SUCCESS", "REFUND.SUCCESS"]


def product_fields():
    return [
        ("channel", req(CHANNEL())),
        ("storeProductId", req(text("The store's product id (com.example.coins100)."))),
        ("entitlement", req(ENTITLEMENT())),
        ("version", req(integer(1, None, "Increases with every change of this product."))),
        ("validFrom", req(timestamp("When this definition takes effect."))),
        ("price", opt(MONEY("The list price, when known."))),
    ]


def payment_verified_fields(version):
    fields = [
        ("channel", req(CHANNEL())),
        ("transactionId", req(text())),
        ("originalTransactionId", opt(text("Apple originalTransactionId or Google purchaseToken; names the subscription."))),
        ("productId", req(text())),
        ("quantity", req(integer(1, 10_000))),
        ("purchaseDate", req(timestamp())),
        ("expiresDate", opt(timestamp("For subscriptions; must be after purchaseDate."))),
        ("environment", req(open_enum(ENVIRONMENTS, "The store environment."))),
        ("appAccountToken", opt(uuid("The StoreKit 2 appAccountToken minted for the order."))),
        ("rawDigest", opt(text("sha256:... of the raw signed store payload, so an auditor can re-verify."))),
    ]
    if version == 1:
        fields += [
            ("ownership", opt(open_enum(OWNERSHIP, "Apple inAppOwnershipType; PURCHASED when absent."))),
            ("priceMilliunits", req(integer(0, 1_000_000_000_000_000_000,
                                            "Apple's price in thousandths of the major unit; must be a whole number of minor units of currency, at most 10^12 of them."))),
            ("currency", req(CURRENCY())),
        ]
    else:
        fields += [
            ("ownership", req(open_enum(OWNERSHIP, "Apple inAppOwnershipType."))),
            ("price", req(MONEY())),
        ]
    return fields


NOTICE_FIELDS = [
    ("channel", req(CHANNEL())),
    ("transactionId", req(text())),
    ("notificationId", opt(text("The store notification that said so."))),
]

SUB_FIELDS = [
    ("channel", req(CHANNEL())),
    ("originalTransactionId", req(text("Names the subscription."))),
    ("notificationId", req(text())),
]

# type -> {version: (description, stream, idempotency key, fields)}
FACTS = {
    "ProductDefined": {1: ("Catalogue: a store product and the entitlement it gives, as of validFrom.",
                           "product:<channel>:<storeProductId>", "product:<channel>:<storeProductId>:<version>", product_fields())},
    "ProductChanged": {1: ("Catalogue: a new version of a store product's definition (same shape as ProductDefined).",
                           "product:<channel>:<storeProductId>", "product:<channel>:<storeProductId>:<version>", product_fields())},
    "OrderCreated": {1: ("Our order, created before paying.", "order:<orderId>", "order:<orderId>:created", [
        ("orderId", req(text())),
        ("userId", req(text())),
        ("channel", req(CHANNEL())),
        ("productId", req(text())),
        ("amount", req(integer(0, MAX_AMOUNT, "The order price in minor units of currency."))),
        ("currency", req(CURRENCY())),
        ("accountToken", opt(text("The StoreKit 2 appAccountToken minted for this order, or WeChat's out_trade_no."))),
    ])},
    "PaymentLaunched": {1: ("The client or server started the store payment (StoreKit addPayment, WeChat prepay).",
                            "order:<orderId>", "order:<orderId>:launched:<attempt>", [
        ("orderId", req(text())),
        ("channel", req(CHANNEL())),
        ("attempt", req(integer(1, 1000))),
        ("prepayId", opt(text("WeChat prepay_id."))),
    ])},
    "ClientCallbackReceived": {1: ("The app reported a store result; the same transaction is reported again on every launch until finished, and each report is its own fact.",
                                   "client:<channel>:<userId>", "client:<channel>:report:<reportId> when reportId is given, else none", [
        ("channel", req(CHANNEL())),
        ("userId", req(text("The signed-in user of the app that reported it."))),
        ("orderId", opt(text())),
        ("transactionId", opt(text())),
        ("productId", req(text())),
        ("state", req(open_enum(CALLBACK_STATES, "The store result the app saw."))),
        ("applicationUsername", opt(text("StoreKit 1 applicationUsername as the payment carried it."))),
        ("deviceId", opt(text())),
        ("reportId", opt(text("The client's id for this report."))),
    ])},
    "StoreNotificationReceived": {1: ("A verified server-to-server store notification; a re-delivery is the same fact.",
                                      "<channel>:notification:<notificationId>", "<channel>:notification:<notificationId>", [
        ("channel", req(CHANNEL())),
        ("notificationId", req(text("Apple notificationUUID, Pub/Sub messageId, WeChat id."))),
        ("type", req(open_enum(NOTIFICATION_TYPES, "The notification type, as the store sent it (Apple notificationType, Google notificationType, WeChat event_type)."))),
        ("subtype", opt(open_enum(NOTIFICATION_TYPES, "The notification subtype, as the store sent it (Apple subtype)."))),
        ("signedAt", opt(timestamp())),
        ("verification", req(text("signature-ok, or why verification failed."))),
        ("transactionId", opt(text())),
        ("originalTransactionId", opt(text())),
        ("tradeState", opt(text("WeChat trade_state."))),
        ("outTradeNo", opt(text("WeChat out_trade_no (our order id)."))),
        ("rawDigest", opt(text("sha256:... of the raw signed payload."))),
    ])},
    "PaymentVerified": {
        1: ("The store confirmed a transaction (verifyReceipt era): price as Apple's flat priceMilliunits and currency. Upcast on read to version 2, converting exactly; a price that is not a whole number of minor units is refused.",
            "<channel>:tx:<transactionId>", "<channel>:tx:<transactionId>:verified", payment_verified_fields(1)),
        2: ("The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification).",
            "<channel>:tx:<transactionId>", "<channel>:tx:<transactionId>:verified", payment_verified_fields(2)),
    },
    "VerificationFailed": {1: ("The store rejected the transaction, or could not be reached.",
                               "<channel>:tx:<transactionId>", "<channel>:tx:<transactionId>:failed:<attempt>", [
        ("channel", req(CHANNEL())),
        ("transactionId", req(text())),
        ("code", req(integer(None, None, "The store's status (Apple 21002, 21003...; Google HTTP status; WeChat error code as a number)."))),
        ("retryable", req(boolean())),
        ("attempt", req(integer(1, 1000))),
    ])},
    "TransactionBound": {1: ("Which order and user a store transaction belongs to, and how that was decided (domain.md section 4).",
                             "<channel>:tx:<transactionId>", "<channel>:tx:<transactionId>:bound", [
        ("channel", req(CHANNEL())),
        ("transactionId", req(text())),
        ("orderId", opt(text())),
        ("userId", req(text())),
        ("method", req(closed(["appAccountToken", "applicationUsername", "sku-fallback", "created-after-payment", "manual"],
                              "How the binding was decided, in order of trust."))),
    ])},
    "EntitlementGranted": {1: ("What fulfilment actually gave the user; for periods, entitlement is the period granted.",
                               "user:<userId>", "grant:<grantId>", [
        ("grantId", req(text())),
        ("userId", req(text())),
        ("channel", opt(CHANNEL())),
        ("transactionId", req(text())),
        ("orderId", opt(text())),
        ("entitlement", req(ENTITLEMENT())),
        ("quantity", req(integer(1, 10_000))),
    ])},
    "EntitlementRevoked": {1: ("What fulfilment actually took back.", "user:<userId>",
                               "revoke:<channel or any>:<transactionId>:<reason>", [
        ("userId", req(text())),
        ("channel", opt(CHANNEL())),
        ("transactionId", req(text())),
        ("reason", req(open_enum(REVOCATION, "Why it was taken back."))),
        ("grantId", opt(text())),
    ])},
    "CoinsSpent": {1: ("The user consumed coins.", "user:<userId>", "spend:<spendId>", [
        ("spendId", req(text())),
        ("userId", req(text())),
        ("amount", req(integer(1, 1_000_000_000, "Coins spent."))),
        ("item", opt(text())),
    ])},
    "SubscriptionRenewed": {1: ("A new subscription period was charged.", "<channel>:sub:<originalTransactionId>",
                                "<channel>:tx:<transactionId>:renewed", [
        ("channel", req(CHANNEL())),
        ("originalTransactionId", req(text())),
        ("transactionId", req(text())),
        ("productId", req(text())),
        ("purchaseDate", req(timestamp())),
        ("expiresDate", req(timestamp("Must be after purchaseDate."))),
        ("price", opt(MONEY())),
    ])},
    "RenewalFailed": {1: ("A billing problem: grace period (access kept) or billing retry / on hold (no access).",
                          "<channel>:sub:<originalTransactionId>", "<channel>:notification:<notificationId>:renewal-failed", SUB_FIELDS + [
        ("gracePeriodExpiresAt", opt(timestamp())),
        ("inBillingRetry", req(boolean())),
    ])},
    "AutoRenewChanged": {1: ("Auto-renew was switched on or off.", "<channel>:sub:<originalTransactionId>",
                             "<channel>:notification:<notificationId>:auto-renew", SUB_FIELDS + [
        ("enabled", req(boolean())),
    ])},
    "PlanChanged": {1: ("Upgrade (immediate) or downgrade (at the next renewal) within a subscription group.",
                        "<channel>:sub:<originalTransactionId>", "<channel>:notification:<notificationId>:plan", SUB_FIELDS + [
        ("toProductId", req(text())),
        ("effective", req(closed(["immediate", "next-renewal"], "immediate for an upgrade, next-renewal for a downgrade or crossgrade."))),
    ])},
    "SubscriptionExpired": {1: ("The period ended without renewal.", "<channel>:sub:<originalTransactionId>",
                                "<channel>:notification:<notificationId>:expired", SUB_FIELDS + [
        ("reason", req(open_enum(EXPIRATION, "Why it expired."))),
    ])},
    "RefundRequested": {1: ("A refund was requested (Apple CONSUMPTION_REQUEST, Google pending review).",
                            "<channel>:tx:<transactionId>", "<channel>:notification:<notificationId>:refund-requested when notificationId is given, else none", NOTICE_FIELDS)},
    "RefundDeclined": {1: ("The store declined a refund request.", "<channel>:tx:<transactionId>",
                           "<channel>:notification:<notificationId>:refund-declined when notificationId is given, else none", NOTICE_FIELDS)},
    "Refunded": {1: ("Money was returned to the buyer, in full or in part.", "<channel>:tx:<transactionId>",
                     "<channel>:tx:<transactionId>:refund:<refundId>", [
        ("channel", req(CHANNEL())),
        ("transactionId", req(text())),
        ("refundId", req(text())),
        ("amount", req(MONEY("The amount returned."))),
        ("refundedAt", req(timestamp())),
        ("reason", opt(text())),
    ])},
    "RefundReversed": {1: ("The refund was undone; the entitlement comes back.", "<channel>:tx:<transactionId>",
                           "<channel>:notification:<notificationId>:refund-reversed when notificationId is given, else none", NOTICE_FIELDS)},
    "OrderClosed": {1: ("The order was never paid: timeout, user cancel, WeChat close.", "order:<orderId>", "order:<orderId>:closed", [
        ("orderId", req(text())),
        ("reason", req(open_enum(CLOSE, "Why it was closed."))),
    ])},
}


def fact_schema(type_name, version, description, stream, key, fields):
    import copy
    body = object_schema(copy.deepcopy(fields))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE}{type_name}.v{version}.schema.json",
        "title": f"{type_name} payload, schema version {version}",
        "description": f"{description} Stream: {stream}. Natural idempotency key: {key}. "
                       "An optional field may be absent or null (null reads as absent; writers leave it out).",
        "x-schemaVersion": version,
        **body,
    }


def write(name, value):
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    write(COMMON, common())
    for type_name, versions in sorted(FACTS.items()):
        for version, (description, stream, key, fields) in sorted(versions.items()):
            write(f"{type_name}.v{version}.schema.json", fact_schema(type_name, version, description, stream, key, fields))
    print(f"wrote {sum(len(v) for v in FACTS.values())} fact schemas and {COMMON} to {OUT}")


if __name__ == "__main__":
    main()
