import _CryptoExtras
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import LedgerCore
import LedgerService
import Testing

/// An HTTP exchange whose caller is cancelled: answered at once, and never by cancelling the
/// request, which on Linux can stop the whole process when the request is ending at that moment.
@Suite("HTTP exchanges cancelled", .timeLimit(.minutes(2)))
struct ExchangeTests {
    /// A server that takes the connection and never answers: the caller, cancelled, is answered
    /// with `CancellationError`, not with the session's timeout (30 s here) long after.
    @Test func aCancelledCallerIsAnsweredAtOnce() async throws {
        let listener = try Listener()
        defer { listener.close() }
        let c = URLSessionConfiguration.ephemeral
        c.timeoutIntervalForRequest = 30
        let session = URLSession(configuration: c)
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/never")!)
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        defer { session.finishTasksAndInvalidate() }
        let call = Task { try await session.exchange(request) }
        // The request is under way (its connection waits in the listener's backlog; at most 2,000
        // polls), then cancelled.
        for _ in 0..<2000 where !listener.hasWaitingConnection() { try await Task.sleep(for: .milliseconds(5)) }
        #expect(listener.hasWaitingConnection())
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
    }

    /// A caller cancelled before its exchange began is answered without a request made.
    @Test func aCallerCancelledBeforeItBeganMakesNoRequest() async throws {
        let listener = try Listener()
        defer { listener.close() }
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/never")!)
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await URLSession.shared.exchange(request)
        }
        await #expect(throws: CancellationError.self) { _ = try await call.value }
        // No connection comes (a request made would connect within these 20 polls, 10 ms apart).
        for _ in 0..<20 {
            #expect(!listener.hasWaitingConnection())
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Reads of the Google Play Developer API cancelled at every moment of their exchange, as a
    /// notification's request is when the service stops: each caller gets an answer or an error,
    /// and the process goes on (`data(for:)` stopped it with "a task that in not in the registry").
    @Test func googlePlayReadsCancelledAtAnyMomentLeaveTheProcessRunning() async throws {
        let fake = FakePlayAPI(
            key: try _RSA.Signing.PrivateKey(keySize: .bits2048),
            purchases: ["tok": GooglePlayAPITests.read(order: "GPA.3301-0000-0000-00001", micros: "1200000000")])
        try await fake.serving { port in
            let api = try fake.client(port: port)
            // One read whole (the access token is kept, so each read after it is one exchange),
            // then one timed: the reads below are cancelled at moments spread over twice as long
            // (at most 40 ms: on a loaded machine an exchange takes longer, and more are cancelled
            // before it ends).
            _ = try await api.subscription(package: "p", subscriptionId: "vip", token: "tok")
            let clock = ContinuousClock()
            let microseconds = try await clock.measure {
                _ = try await api.subscription(package: "p", subscriptionId: "vip", token: "tok")
            }.microseconds
            var answered = 0
            var refused = 0
            var random = SplitMix64(seed: 7)
            for _ in 0..<200 {
                let read = Task { try await api.subscription(package: "p", subscriptionId: "vip", token: "tok") }
                let wait = Int64(random.next() % UInt64(min(40_000, max(2, 2 * microseconds))))
                if wait > 0 { try await Task.sleep(for: .microseconds(wait)) }
                read.cancel()
                switch await read.result {
                case .success(let r):
                    #expect(r.orderId == "GPA.3301-0000-0000-00001")
                    answered += 1
                // Cancelled, or (on a loaded machine) past the API's timeout.
                case .failure(let error):
                    let said = "\(error)"
                    #expect(said.contains("CancellationError") || said.contains("-1001"), "\(said)")
                    refused += 1
                }
            }
            #expect(answered + refused == 200)
        }
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: a connection to it completes (the kernel's
/// backlog) and nothing ever answers.
private struct Listener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTP.Failure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                bind(fd, a, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, a, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw RawHTTP.Failure("bind or listen: errno \(errno)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a connection waits to be accepted (none is taken).
    func hasWaitingConnection() -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1 && p.revents & Int16(POLLIN) != 0
    }

    func close() { Glibc.close(fd) }
}
