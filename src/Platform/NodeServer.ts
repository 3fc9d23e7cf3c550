import { IncomingMessage, Server, ServerResponse } from "node:http"
import { Socket } from "node:net"
import { ApiError } from "./ApiError.ts"
import { abandonRequest } from "./RequestFibers.ts"
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
   * How long after the listener closes at the end of a drain a connection that has brought no request
   * yet may still bring one: a proxy that connected just before sends its request at once, and Node
   * reads it an event-loop turn after the accept.
   */
  readonly closeGrace: number
  /**
   * An API request not answered by then gets 503 10902: every other wait of a request is bounded well
   * below it, so what reaches it waits for a database that stopped answering (a network partition).
   * One whose body has not arrived by then gets 408 10154: the wait is the client's.
   */
  readonly apiDeadline: number
}

export const nodeServerDefaults: NodeServerOptions = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
  drainTimeout: 10_000,
  closeGrace: 1_000,
  apiDeadline: 20_000
}

const unavailable = JSON.stringify({ errors: [ApiError.item(10902)] })

const answerUnavailable = (response: ServerResponse, headers: Record<string, string> = {}) => {
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1", ...headers })
  response.end(unavailable)
}

const bodyTimeout = JSON.stringify({ errors: [ApiError.item(10154)] })

/** What an API request past its deadline was waiting for: its body from the client, or its answer. */
export type LateFor = "body" | "answer"

/**
 * Whether the request's body is still on its way from the client. A body the API has not read yet
 * (a handler that looks the link up first) fills the request's buffer and stops the parser before
 * the body is complete: that wait is ours, not the client's.
 */
const awaitsClientBody = (request: IncomingMessage) =>
  !request.complete && request.readableLength < request.readableHighWaterMark

const SLASH = 47

/**
 * Holds a request to RFC 9112's rules on its target host, or answers false to refuse it: one `Host`
 * field only (two may name different hosts to a proxy and to us); an absolute-form target
 * (`GET http://sho.rt/a`) names the host itself, whatever `Host` says, so it is rewritten here to
 * origin-form and its authority becomes `Host` for the redirect handler and the API alike. Costs a
 * scan of the header names and no allocation for an origin-form target.
 */
const holdsTarget = (request: IncomingMessage): boolean => {
  const raw = request.rawHeaders
  let hosts = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && (name === "Host" || name === "host" || name.toLowerCase() === "host")) hosts++
  }
  if (hosts > 1) return false
  const target = request.url ?? "/"
  if (target.charCodeAt(0) === SLASH || target === "*") return true
  if (!URL.canParse(target)) return false
  const url = new URL(target)
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.host === "" || url.username !== "" || url.password !== "") {
    return false
  }
  request.url = `${url.pathname}${url.search}`
  request.headers.host = url.host
  return true
}

const answerBadRequest = (response: ServerResponse) => {
  response.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" })
  response.end("Bad Request\n")
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

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void

/** Told of each answer of the pre-handler (not of requests it handed to the API) when its response ends. */
export type OnPreHandled = (req: IncomingMessage, res: ServerResponse, seconds: number) => void

/** A response with what its request's end needs: kept on it rather than in a closure per request. */
class TrackedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  started = 0
  preHandled = false
  tracked = false
  /** Its neighbours in the server's list of responses in flight (`InFlight`). */
  previousInFlight: TrackedResponse | undefined = undefined
  nextInFlight: TrackedResponse | undefined = undefined
}

/**
 * The responses in flight, linked through their own fields. A Set added to and deleted from per
 * request rehashed its table every few requests, and a long-lived Set's new table goes straight to old
 * space: each stale table, garbage only a mark-compact frees, still held the young responses it had
 * listed, so the scavenges kept them, with their requests and buffers, and promoted them.
 */
class InFlight {
  private first: TrackedResponse | undefined = undefined

  add(response: TrackedResponse) {
    response.nextInFlight = this.first
    if (this.first !== undefined) this.first.previousInFlight = response
    this.first = response
  }

  delete(response: TrackedResponse) {
    const { previousInFlight: previous, nextInFlight: next } = response
    if (previous === undefined) {
      if (this.first === response) this.first = next
    } else previous.nextInFlight = next
    if (next !== undefined) next.previousInFlight = previous
    response.previousInFlight = undefined
    response.nextInFlight = undefined
  }

  *[Symbol.iterator](): Generator<TrackedResponse> {
    for (let response = this.first; response !== undefined; response = response.nextInFlight) yield response
  }
}

/** The one "close" listener of a server's responses (`this` is the response). */
const closeListenerOf = (server: DrainingServer) =>
  function (this: TrackedResponse) {
    if (!this.tracked) return
    this.tracked = false
    server.answered(this)
  }

/**
 * A listener that stops in two steps without resetting a request. While the process drains
 * (`ShutdownState`) it still accepts and answers; a connection opened before the drain is closed
 * after its next answer (`Connection: close`), so that a client that a layer-4 balancer pinned here
 * reconnects to wherever the balancer now sends it. Connections opened during the drain stay
 * keep-alive: a proxy that still sends here (nginx learns of a stop only from refused connections)
 * would otherwise open one per request, whose queue of accepted connections the kernel resets when
 * the listener closes. Then `close()` stops accepting and every answer closes its connection. An idle
 * connection is never closed by the stop, since its client may be sending on it at that moment: it
 * ends when its client closes it (a proxy's keep-alive timeout below ours) or at our keep-alive
 * timeout. A connection that has brought no request gets `closeGrace`; what is still open at
 * `drainTimeout` is cut. Closed without a drain (tests), the server closes idle connections at once.
 */
class DrainingServer extends Server<typeof IncomingMessage, typeof TrackedResponse> {
  private readonly inFlight = new InFlight()
  /** API requests not answered yet, with the time each was handed on, oldest first. */
  private readonly awaitingApi = new Map<ServerResponse, number>()
  private readonly sweeper: NodeJS.Timeout
  private closing = false
  /** When each connection was accepted. */
  private readonly acceptedAt = new WeakMap<Socket, number>()
  /** Connections that have not brought a request yet, which Node does not count as idle. */
  private readonly fresh = new Set<Socket>()
  /**
   * The API's request listener. Effect removes it just before it closes the server, while requests
   * may still arrive on open connections; they go to it all the same (the services it uses close only
   * after the server has).
   */
  private api: RequestListener | undefined
  /** Requests handed to the API and not answered yet. */
  private readonly handedOn = new Set<ServerResponse>()
  private readonly toApi = (req: IncomingMessage, res: ServerResponse) => {
    this.handedOn.add(res)
    this.awaitingApi.set(res, Date.now())
    if (this.listenerCount("request") > 0) super.emit("request", req, res)
    else if (this.api !== undefined) this.api(req, res)
    else answerUnavailable(res, { connection: "close" })
  }

  constructor(
    private readonly options: NodeServerOptions,
    private readonly preHandler: PreHandler | undefined,
    private readonly onDeadline: (request: IncomingMessage, late: LateFor) => void,
    private readonly shutdown: ShutdownState,
    private readonly onPreHandled: OnPreHandled | undefined
  ) {
    super({
      ServerResponse: TrackedResponse,
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
    this.on("newListener", (event: string | symbol, listener: RequestListener) => {
      if (event === "request") this.api = listener
    })
  }

  /**
   * Answers the API requests past the deadline: 408 10154 and the connection closed when the client
   * has not sent the whole body (the rest of it would be read as the next request), else 503 10902.
   * Their work is interrupted (`abandonRequest`): a statement still running is cancelled.
   */
  private answerOverdue() {
    const due = Date.now() - this.options.apiDeadline
    for (const [response, started] of this.awaitingApi) {
      if (started > due) break
      this.awaitingApi.delete(response)
      if (response.headersSent) continue
      if (awaitsClientBody(response.req)) {
        response.writeHead(408, { "content-type": "application/json", connection: "close" })
        response.end(bodyTimeout)
        this.onDeadline(response.req, "body")
      } else {
        answerUnavailable(response)
        this.onDeadline(response.req, "answer")
      }
      abandonRequest(response.req)
    }
  }

  private readonly onResponseClose = closeListenerOf(this)

  /** Told by a response's "close" listener, once. */
  answered(response: TrackedResponse) {
    this.shutdown.answered++
    this.inFlight.delete(response)
    this.awaitingApi.delete(response)
    if (!this.handedOn.delete(response) && response.preHandled) {
      this.onPreHandled?.(response.req, response, (performance.now() - response.started) / 1000)
    }
  }

  override emit(event: string, ...args: Array<unknown>): boolean {
    const [first, second] = args
    if (event === "connection" && first instanceof Socket) this.accepted(first)
    if (event === "request" && first instanceof IncomingMessage && second instanceof TrackedResponse) return this.onRequest(first, second)
    return super.emit(event, ...args)
  }

  private accepted(socket: Socket) {
    this.acceptedAt.set(socket, Date.now())
    this.fresh.add(socket)
    socket.once("close", () => this.fresh.delete(socket))
  }

  private onRequest(request: IncomingMessage, response: TrackedResponse): boolean {
    const socket = response.socket
    if (socket !== null) this.fresh.delete(socket)
    const drainingSince = this.shutdown.drainingSince
    const openedBefore = drainingSince !== undefined && (socket === null || (this.acceptedAt.get(socket) ?? 0) <= drainingSince)
    if (this.closing || openedBefore) response.setHeader("connection", "close")
    this.inFlight.add(response)
    response.started = performance.now()
    response.tracked = true
    response.on("close", this.onResponseClose)
    if (!holdsTarget(request)) {
      answerBadRequest(response)
      return true
    }
    response.preHandled = this.preHandler !== undefined && this.preHandler(request, response, this.toApi)
    if (!response.preHandled) this.toApi(request, response)
    return true
  }

  /** Node's `close()` calls this at once; after a drain, idle connections are left to end as said above. */
  override closeIdleConnections(): void {
    if (!(this.closing && this.shutdown.draining)) super.closeIdleConnections()
  }

  override close(callback?: (error?: Error) => void): this {
    if (this.closing) return super.close(callback)
    this.closing = true
    clearInterval(this.sweeper)
    for (const response of this.inFlight) {
      if (!response.headersSent) response.setHeader("connection", "close")
    }
    const grace = setTimeout(() => {
      for (const socket of this.fresh) socket.destroy()
    }, this.options.closeGrace)
    const deadline = setTimeout(() => this.closeAllConnections(), this.options.drainTimeout)
    return super.close((error) => {
      clearTimeout(grace)
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
  onDeadline: (request: IncomingMessage, late: LateFor) => void = () => undefined,
  shutdown: ShutdownState = new ShutdownState(),
  onPreHandled?: OnPreHandled
): Server => new DrainingServer({ ...nodeServerDefaults, ...overrides }, preHandler, onDeadline, shutdown, onPreHandled)
