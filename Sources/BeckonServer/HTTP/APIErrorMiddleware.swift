import Hummingbird

/// Turns every error into `{"error": {"code", "message"}}` (`APIError.init(_:logger:)`), so
/// clients parse one shape whatever failed.
///
/// It must be the router's first middleware: Hummingbird wraps only routes added after a
/// middleware, and the not-found responder with all of them.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return APIError(error, logger: context.logger).response
        }
    }
}
