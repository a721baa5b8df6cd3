import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerCore
import LedgerNotificationTesting
import LedgerNotifications
import LedgerService
import LedgerTesting
import NIOCore
import Testing

/// The store endpoints over the real PostgreSQL: a verified notification is appended once however
/// often it comes, with its raw payload kept; a refused one writes nothing.
@Suite("Store notification endpoints", .timeLimit(.minutes(2)))
struct NotificationEndpointTests {
    static func payloads(_ f: ServiceFixture) async throws -> [(String, String, String)] {
        let conn = try await TestDatabase.admin(f.owner)
        defer { Task { await conn.close() } }
        let r = try await conn.query(
            "SELECT channel, notification_id, raw_digest FROM \(f.owner.schema).store_notification_payloads ORDER BY 1, 2"
        )
        return (0..<r.count).map { (r.string($0, 0)!, r.string($0, 1)!, r.string($0, 2)!) }
    }

    @Test func appleNotificationsAreVerifiedKeptAndAppendedOnce() async throws {
        let chain = try TestAppleChain()
        let verifier = AppleVerifier(.init(roots: [chain.root], bundleId: TestAppleChain.bundleId))
        try await ServiceFixture.with("httpapple", configure: { $0.notifications.appStore = verifier }) { f in
            try await f.test { client in
                let body = try chain.notificationBody(uuid: "5d1c0a52-8c5e-4d0b-9a11-000000000001")
                for _ in 0..<3 {
                    let r = try await client.execute(
                        uri: "/v1/notifications/appstore", method: .post, body: ByteBuffer(bytes: body))
                    #expect(r.status == .ok, "\(r.text)")
                }
                #expect(try await f.rows() == 2)
                let kept = try await Self.payloads(f)
                #expect(kept.count == 1 && kept[0].0 == "appstore" && kept[0].2 == NotificationFacts.digest(body))
                // Each refusal: a clear status, nothing appended, nothing kept.
                let refused: [([UInt8], HTTPResponse.Status, String)] = [
                    (try chain.notificationBody(signer: P256.Signing.PrivateKey()), .forbidden, "forged-signature"),
                    (try TestAppleChain(name: "Other").notificationBody(), .forbidden, "untrusted-chain"),
                    (
                        try TestAppleChain(leafValidUntil: Date().addingTimeInterval(-60)).notificationBody(),
                        .forbidden, "certificate-expired"
                    ),
                    (try TestAppleChain(leafOID: false).notificationBody(), .forbidden, "missing-oid"),
                    (try chain.notificationBody(bundleId: "com.example.other"), .unprocessableContent, "wrong-app"),
                    (try chain.notificationBody(environment: "Sandbox"), .unprocessableContent, "wrong-environment"),
                    (Array("not json".utf8), .badRequest, "malformed"),
                ]
                for (bad, status, code) in refused {
                    let r = try await client.execute(
                        uri: "/v1/notifications/appstore", method: .post, body: ByteBuffer(bytes: bad))
                    #expect(r.status == status, "\(code): \(r.text)")
                    #expect(r.json?["type"]?.stringValue == "urn:ledger:problem:" + code)
                    #expect(r.headers[.contentType] == "application/problem+json")
                }
            }
            #expect(try await f.rows() == 2)
            #expect(try await Self.payloads(f).count == 1)
        }
    }

    /// A store delivers at least once, and a retry can arrive while the first delivery is still
    /// being appended: eight copies of one signed notification at once, three rounds, are each
    /// answered 200, its facts stored once and its payload kept once.
    @Test func copiesOfOneNotificationAtOnceAreAppendedOnce() async throws {
        let chain = try TestAppleChain()
        let verifier = AppleVerifier(.init(roots: [chain.root], bundleId: TestAppleChain.bundleId))
        try await ServiceFixture.with("httpapplerace", configure: { $0.notifications.appStore = verifier }) { f in
            try await f.test { client in
                for round in 1...3 {
                    let body = try chain.notificationBody(
                        uuid: "5d1c0a52-8c5e-4d0b-9a11-00000000010\(round)", transactionId: "200000012345670\(round)")
                    let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                        for _ in 0..<8 {
                            group.addTask {
                                try await client.execute(
                                    uri: "/v1/notifications/appstore", method: .post, body: ByteBuffer(bytes: body)
                                ).status
                            }
                        }
                        var all: [HTTPResponse.Status] = []
                        for try await s in group { all.append(s) }
                        return all
                    }
                    #expect(statuses.allSatisfy { $0 == .ok }, "round \(round): \(statuses)")
                }
            }
            #expect(try await Self.payloads(f).count == 3)
            #expect(try await f.rows() == 6)
        }
    }

    @Test func weChatNotificationsAreVerifiedAndDeduplicated() async throws {
        let wx = try TestWeChat()
        try await ServiceFixture.with(
            "httpwechat", configure: { $0.notifications.weChatPay = WeChatPayVerifier(wx.configuration) }
        ) { f in
            try await f.test { client in
                func send(_ n: (body: [UInt8], headers: WeChatPayVerifier.Headers)) async throws -> TestResponse {
                    var h = HTTPFields()
                    h[HTTPField.Name("Wechatpay-Timestamp")!] = n.headers.timestamp
                    h[HTTPField.Name("Wechatpay-Nonce")!] = n.headers.nonce
                    h[HTTPField.Name("Wechatpay-Signature")!] = n.headers.signature
                    h[HTTPField.Name("Wechatpay-Serial")!] = n.headers.serial
                    return try await client.execute(
                        uri: "/v1/notifications/wechatpay", method: .post, headers: h, body: ByteBuffer(bytes: n.body))
                }
                let first = try wx.notification(id: "EV-100")
                #expect(try await send(first).status == .ok)
                #expect(try await send(first).status == .conflict)  // the same signed request: a replay
                #expect(
                    try await send(try wx.notification(id: "EV-100", timestamp: Date().addingTimeInterval(5))).status
                        == .ok)  // re-delivered later, signed anew
                #expect(try await f.rows() == 1)
                #expect(
                    try await send(try wx.notification(id: "EV-101", timestamp: Date().addingTimeInterval(-400))).status
                        == .forbidden)
                #expect(
                    try await send(try wx.notification(id: "EV-102", tamperAssociatedData: true)).status == .forbidden)
                #expect(
                    try await send(try wx.notification(id: "EV-103", signer: try _RSAKey.make())).status == .forbidden)
            }
            #expect(try await f.rows() == 1)
            #expect(try await Self.payloads(f).map(\.1) == ["EV-100"])
        }
    }

    @Test func googlePushesAreVerifiedByTheirToken() async throws {
        let g = try TestGoogleSigner()
        let verifier = GooglePlayVerifier(
            .init(
                keys: g.publicKeys, audience: TestGoogleSigner.audience,
                serviceAccount: TestGoogleSigner.serviceAccount, packageName: TestGoogleSigner.packageName))
        try await ServiceFixture.with("httpgoogle", configure: { $0.notifications.googlePlay = verifier }) { f in
            try await f.test { client in
                let body = ByteBuffer(
                    bytes: TestGoogleSigner.pushBody(
                        messageId: "m-1", notification: TestGoogleSigner.voided(orderId: "GPA.1111-2222-3333-44444")))
                let good = ServiceFixture.bearer(try g.token())
                #expect(
                    try await client.execute(
                        uri: "/v1/notifications/googleplay", method: .post, headers: good, body: body
                    ).status == .ok)
                #expect(
                    try await client.execute(
                        uri: "/v1/notifications/googleplay", method: .post, headers: good, body: body
                    ).status == .ok)
                #expect(try await f.rows() == 2)
                let expired = ServiceFixture.bearer(try g.token(expiresIn: -600))
                #expect(
                    try await client.execute(
                        uri: "/v1/notifications/googleplay", method: .post, headers: expired, body: body
                    ).status == .unauthorized)
                let audience = ServiceFixture.bearer(try g.token(audience: "https://other.example"))
                let other = ByteBuffer(
                    bytes: TestGoogleSigner.pushBody(messageId: "m-2", notification: TestGoogleSigner.subscription(12)))
                #expect(
                    try await client.execute(
                        uri: "/v1/notifications/googleplay", method: .post, headers: audience, body: other
                    ).status == .unauthorized)
            }
            #expect(try await f.rows() == 2)
        }
    }

    @Test func anUnconfiguredStoreIsNotFound() async throws {
        try await ServiceFixture.with("httpnostore") { f in
            try await f.test { client in
                let r = try await client.execute(
                    uri: "/v1/notifications/appstore", method: .post, body: ByteBuffer(string: "{}"))
                #expect(r.status == .notFound && r.json?["type"]?.stringValue == "urn:ledger:problem:not-configured")
            }
            #expect(try await f.rows() == 0)
        }
    }
}

import _CryptoExtras
enum _RSAKey {
    static func make() throws -> _RSA.Signing.PrivateKey { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
}
