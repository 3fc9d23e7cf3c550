import { IncomingMessage, Server, ServerResponse } from "node:http"
import { ApiError } from "../Domain/ApiError.ts"

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
}

export const nodeServerDefaults: NodeServerOptions = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
  drainTimeout: 10_000
}

const unavailable = JSON.stringify({ errors: [ApiError.item(10902)] })

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
 * A listener whose `close()` drains: it stops accepting connections, closes idle ones, lets in-flight
 * requests finish (answered with `Connection: close`) for at most `drainTimeout`, then cuts what is
 * left. Requests that arrive on an open connection meanwhile get a 503 and the connection is closed.
 */
class DrainingServer extends Server {
  private readonly inFlight = new Set<ServerResponse>()
  private draining = false
  private readonly toApi = (req: IncomingMessage, res: ServerResponse) => {
    super.emit("request", req, res)
  }

  constructor(
    private readonly options: NodeServerOptions,
    private readonly preHandler: PreHandler | undefined
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
  }

  override emit(event: string, ...args: Array<unknown>): boolean {
    const [request, response] = args
    if (event !== "request" || !(response instanceof ServerResponse)) return super.emit(event, ...args)
    // Effect removes its request listener before it closes the server: nobody would answer.
    if (this.draining || this.listenerCount("request") === 0) {
      response.writeHead(503, {
        "content-type": "application/json",
        "retry-after": "1",
        connection: "close"
      })
      response.end(unavailable)
      return true
    }
    this.inFlight.add(response)
    response.once("close", () => {
      this.inFlight.delete(response)
      // A response that had sent its headers before the drain left its connection keep-alive.
      if (this.draining) setImmediate(() => this.closeIdleConnections())
    })
    if (this.preHandler !== undefined && request instanceof IncomingMessage && this.preHandler(request, response, this.toApi)) return true
    return super.emit(event, ...args)
  }

  override close(callback?: (error?: Error) => void): this {
    if (this.draining) return super.close(callback)
    this.draining = true
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
export const makeNodeServer = (overrides: Partial<NodeServerOptions> = {}, preHandler?: PreHandler): Server =>
  new DrainingServer({ ...nodeServerDefaults, ...overrides }, preHandler)
