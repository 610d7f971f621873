import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One GET whose body is read as it arrives and abandoned past `limit` bytes: the extension's
/// memory budget holds whatever the server sends (docs/design.md, "Small, bounded extensions").
final class BoundedDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var body = Data()
        var status = 0
        var failure: MessageFetchError?
        var continuation: CheckedContinuation<(Int, Data), any Error>?
    }

    let limit: Int
    private let state = Locked(State())

    init(limit: Int) { self.limit = limit }

    func run(_ request: URLRequest) async throws(MessageFetchError) -> (Int, Data) {
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    state.withLock { $0.continuation = continuation }
                    task.resume()
                }
            } onCancel: {
                task.cancel()
            }
        } catch let error as MessageFetchError {
            throw error
        } catch {
            throw .transport(String(describing: error))
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let announced = response.expectedContentLength
        let tooLarge = announced > Int64(limit)
        state.withLock {
            $0.status = status
            if tooLarge { $0.failure = .tooLarge(limit: limit) }
        }
        completionHandler(tooLarge ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overLimit = state.withLock { state -> Bool in
            guard state.failure == nil else { return true }
            if state.body.count + data.count > limit {
                state.failure = .tooLarge(limit: limit)
                state.body = Data()
                return true
            }
            state.body.append(data)
            return false
        }
        if overLimit { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<(Int, Data), any Error>?, Result<(Int, Data), any Error>) in
            let continuation = state.continuation
            state.continuation = nil
            if let failure = state.failure { return (continuation, .failure(failure)) }
            if let error { return (continuation, .failure(MessageFetchError.transport(String(describing: error)))) }
            return (continuation, .success((state.status, state.body)))
        }
        continuation?.resume(with: result)
    }
}
