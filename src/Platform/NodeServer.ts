import { IncomingMessage, Server, ServerResponse } from "node:http"
import { ApiError } from "./ApiError.ts"
import { ShutdownState } from "./Shutdown.ts"

export interface NodeServerOptions {
  /** Time a client has to send the complete request headers. */
  readonly headersTimeout: number
  /** Time a client has to send the complete request, body included. */
  readonly requestTimeout: number
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeout: number
  /** How often Node enforces the two request timeouts (its default is every 30 s). */
  readonly connectionsCheckingInterval: number
  /** How long `close()` waits for in-flight requests before it cuts their connections. */
  readonly drainTimeout: number
  /**
   * An API request not answered by then gets 503 10902: every other wait of a request is bounded well
   * below it, so what reaches it waits for a database that stopped answering (a network partition).
   */
  readonly apiDeadline: number
}

export const nodeServerDefaults: NodeServerOptions = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
  drainTimeout: 10_000,
  apiDeadline: 20_000
}

const unavailable = JSON.stringify({ errors: [ApiError.item(10902)] })

const answerUnavailable = (response: ServerResponse, headers: Record<string, string> = {}) => {
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1", ...headers })
  response.end(unavailable)
}

/**
 * Offered every request before the API: returns false to leave it to the API, or true once it has
 * taken it, in which case it answers it or hands it on later with `toApi`.
 */
export type PreHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  toApi: (req: IncomingMessage, res: ServerResponse) => void
) => boolean

/**
 * A listener that stops in two steps. While the process drains (`ShutdownState`) it still accepts and
 * answers, but every answer carries `Connection: close` and idle keep-alive connections are closed,
 * so that clients and proxies move to another instance without a refused or reset request. Then
 * `close()` stops accepting, closes idle connections, lets in-flight requests finish (with
 * `Connection: close`) for at most `drainTimeout`, and cuts what is left; a request that arrives on
 * an open connection meanwhile gets a 503 and the connection is closed.
 */
class DrainingServer extends Server {
  private readonly inFlight = new Set<ServerResponse>()
  /** API requests not answered yet, with the time each was handed on, oldest first. */
  private readonly awaitingApi = new Map<ServerResponse, number>()
  private readonly sweeper: NodeJS.Timeout
  private closing = false
  private readonly toApi = (req: IncomingMessage, res: ServerResponse) => {
    this.awaitingApi.set(res, Date.now())
    super.emit("request", req, res)
  }

  constructor(
    private readonly options: NodeServerOptions,
    private readonly preHandler: PreHandler | undefined,
    private readonly onDeadline: (request: IncomingMessage) => void,
    private readonly shutdown: ShutdownState
  ) {
    super({
      connectionsCheckingInterval: options.connectionsCheckingInterval,
      headersTimeout: options.headersTimeout,
      requestTimeout: options.requestTimeout,
      keepAliveTimeout: options.keepAliveTimeout,
      maxHeaderSize: 16 * 1024
    })
    this.headersTimeout = options.headersTimeout
    this.requestTimeout = options.requestTimeout
    this.keepAliveTimeout = options.keepAliveTimeout
    this.sweeper = setInterval(() => this.answerOverdue(), Math.min(1000, options.apiDeadline / 4)).unref()
    shutdown.whenDraining(() => this.closeIdleConnections())
  }

  /**
   * Answers 503 10902 for the API requests past the deadline. Their work goes on and finds the
   * response ended (the framework then writes nothing); a query waiting on the network keeps its
   * connection, so the pool does not hand a busy connection to another request.
   */
  private answerOverdue() {
    const due = Date.now() - this.options.apiDeadline
    for (const [response, started] of this.awaitingApi) {
      if (started > due) break
      this.awaitingApi.delete(response)
      if (response.headersSent) continue
      answerUnavailable(response)
      this.onDeadline(response.req)
    }
  }

  override emit(event: string, ...args: Array<unknown>): boolean {
    const [request, response] = args
    if (event !== "request" || !(response instanceof ServerResponse)) return super.emit(event, ...args)
    // Effect removes its request listener before it closes the server: nobody would answer.
    if (this.closing || this.listenerCount("request") === 0) {
      answerUnavailable(response, { connection: "close" })
      return true
    }
    const shutdown = this.shutdown
    if (shutdown.draining) response.setHeader("connection", "close")
    this.inFlight.add(response)
    response.once("close", () => {
      shutdown.answered++
      this.inFlight.delete(response)
      this.awaitingApi.delete(response)
      // A response that had sent its headers before the drain left its connection keep-alive.
      if (shutdown.draining) setImmediate(() => this.closeIdleConnections())
    })
    if (!(request instanceof IncomingMessage)) return super.emit(event, ...args)
    if (this.preHandler === undefined || !this.preHandler(request, response, this.toApi)) this.toApi(request, response)
    return true
  }

  override close(callback?: (error?: Error) => void): this {
    if (this.closing) return super.close(callback)
    this.closing = true
    clearInterval(this.sweeper)
    for (const response of this.inFlight) {
      if (!response.headersSent) response.setHeader("connection", "close")
    }
    const deadline = setTimeout(() => this.closeAllConnections(), this.options.drainTimeout)
    return super.close((error) => {
      clearTimeout(deadline)
      callback?.(error)
    })
  }
}

/**
 * The listener, with its timeouts set explicitly rather than left to Node's defaults. Tests may
 * shorten them; the service uses the defaults.
 */
export const makeNodeServer = (
  overrides: Partial<NodeServerOptions> = {},
  preHandler?: PreHandler,
  onDeadline: (request: IncomingMessage) => void = () => undefined,
  shutdown: ShutdownState = new ShutdownState()
): Server => new DrainingServer({ ...nodeServerDefaults, ...overrides }, preHandler, onDeadline, shutdown)
