import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

extension URLSession {
    /// One HTTP exchange, as `data(for:)`, but a caller cancelled is answered at once
    /// (`CancellationError`) and the request is left to end by itself: its answer, or the
    /// session's request timeout (on Linux an idle timeout, restarted by each byte that comes).
    /// `data(for:)` cancels its `URLSessionTask` when the caller is cancelled, and on Linux that
    /// cancellation races the end of the exchange: when the task ends first, FoundationNetworking
    /// stops the whole process ("Trying to access a behaviour for a task that in not in the
    /// registry"). A request here is never cancelled.
    package func exchange(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let answer = Answer()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiting: Answer.Waiting) in
                guard answer.wait(waiting) else { return }
                dataTask(with: request) { data, response, error in
                    if let data, let response {
                        answer.give(.success((data, response)))
                    } else {
                        answer.give(.failure(error ?? URLError(.badServerResponse)))
                    }
                }.resume()
            }
        } onCancel: {
            answer.give(.failure(CancellationError()))
        }
    }
}

/// The one answer an exchange gives its caller: the first of the response and the caller's
/// cancellation, whichever comes first (the other is dropped).
private final class Answer: Sendable {
    typealias Waiting = CheckedContinuation<(Data, URLResponse), any Error>
    private enum State {
        case idle
        case waiting(Waiting)
        /// Given before the caller waited (a caller cancelled before the request began).
        case given(Result<(Data, URLResponse), any Error>)
        case done
    }
    private let state = Mutex(State.idle)

    /// The caller waits; false when its answer was given already (the continuation is resumed
    /// with it here, and no request is to be made).
    func wait(_ waiting: Waiting) -> Bool {
        let given: Result<(Data, URLResponse), any Error>? = state.withLock { s in
            guard case .given(let r) = s else {
                s = .waiting(waiting)
                return nil
            }
            s = .done
            return r
        }
        guard let given else { return true }
        waiting.resume(with: given)
        return false
    }

    /// Answers the caller, unless it has its answer.
    func give(_ result: Result<(Data, URLResponse), any Error>) {
        let waiting: Waiting? = state.withLock { s in
            switch s {
            case .idle:
                s = .given(result)
                return nil
            case .waiting(let w):
                s = .done
                return w
            case .given, .done: return nil
            }
        }
        waiting?.resume(with: result)
    }
}
