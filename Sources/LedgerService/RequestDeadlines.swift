import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// How long a client may take, each bounded so a slow or idle client cannot hold a connection
/// (and a file descriptor) forever.
public struct RequestTimeouts: Sendable, Hashable {
    /// A new connection's first request must have sent its whole head (request line and headers) by then.
    public var header: Duration = .seconds(10)
    /// A request's body must have arrived whole this long after its head.
    public var body: Duration = .seconds(60)
    /// A kept-alive connection must send its next request's head this long after the last response.
    public var idle: Duration = .seconds(60)
    public init() {}
}

/// Closes the connection when a deadline of ``RequestTimeouts`` passes: the head of the first
/// request from the connection's start, the body from the head, the next head from the end of the
/// last response. While the service works on a request (after its body, until its response ends)
/// no deadline runs: a long audit is not cut.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeouts: RequestTimeouts
    private let onExpiry: @Sendable (String) -> Void
    private var timer: Scheduled<Void>?

    init(timeouts: RequestTimeouts, onExpiry: @escaping @Sendable (String) -> Void) {
        self.timeouts = timeouts
        self.onExpiry = onExpiry
    }

    func handlerAdded(context: ChannelHandlerContext) { arm(context, timeouts.header, "header") }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(context, timeouts.body, "body")
        case .body: break
        case .end:
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(context, timeouts.idle, "idle") }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, _ after: Duration, _ which: String) {
        timer?.cancel()
        let channel = context.channel
        let onExpiry = onExpiry
        timer = context.eventLoop.scheduleTask(in: TimeAmount(after)) {
            onExpiry(which)
            channel.close(promise: nil)
        }
    }
}

/// HTTP/1.1 as Hummingbird serves it, with ``RequestDeadlineHandler`` in each connection's pipeline.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let responder: HTTPChannelHandler.Responder
    let timeouts: RequestTimeouts
    let onExpiry: @Sendable (String) -> Void

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeouts = timeouts, onExpiry = onExpiry
        // An autoclosure: evaluated for each connection, so each has a handler of its own.
        return HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [RequestDeadlineHandler(timeouts: timeouts, onExpiry: onExpiry)]
            )
        ).setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await HTTP1Channel(responder: responder).handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with request deadlines.
    static func guardedHTTP1(
        _ timeouts: RequestTimeouts, onExpiry: @escaping @Sendable (String) -> Void
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, timeouts: timeouts, onExpiry: onExpiry)
        }
    }
}
