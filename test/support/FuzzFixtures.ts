import { Context, Effect, Layer } from "effect"
import { answering, newDomain, newLink, uniqueDomainName } from "./Fixtures.ts"
import { call, newUser, numberAt, PASSWORD, type TestUser } from "./Http.ts"
import { type Endpoint, type Version } from "./ApiContract.ts"
import { type FuzzRequest } from "./FuzzRequests.ts"

// Fixtures of `test/api-fuzz.test.ts`, made once for the file

export interface Fixtures {
  /** Account admin of account A (enterprise): the caller of most requests. */
  readonly owner: TestUser
  /** A member of account A. */
  readonly member: TestUser
  /** Account admin of an account on the free plan. */
  readonly free: TestUser
  /** Account admin of account B. */
  readonly other: TestUser
  readonly domainA: number
  readonly linkA: number
  readonly tagA: number
  readonly domainB: number
  readonly linkB: number
  /** A local page answering 200, so that 404 checks of long URLs are quick and certain. */
  readonly landing: string
  /** Account admin of account S, whose state the "refused writes" test watches. */
  readonly state: TestUser
  readonly domainS: number
  readonly linkS: number
  /** A domain of account A per version, for D1 to delete (the others must stay). */
  readonly doomed: Readonly<Record<Version, number>>
  /** A member of account A per version, whose token DELETE /access_token revokes (the others must stay). */
  readonly signingOut: Readonly<Record<Exclude<Version, "">, TestUser>>
}

export class Fuzz extends Context.Tag("test/ApiFuzz")<Fuzz, Fixtures>() {}

export const fixtures = Layer.scoped(
  Fuzz,
  Effect.gen(function* () {
    const landing = (yield* answering(200)).url
    const owner = yield* newUser()
    const member = yield* newUser({ accountId: owner.accountId, role: "member" })
    const free = yield* newUser({ plan: "free" })
    const other = yield* newUser()
    const state = yield* newUser()
    const domainA = yield* newDomain(owner)
    const linkA = yield* newLink(owner, domainA, { url: landing, alias: "fuzzed", notes: "kept", tags: [{ name: "promo", shared: true }] })
    const tags = yield* call("GET", `/api/v4/tags?domain_id=${domainA}`, { token: owner.token })
    const domainB = yield* newDomain(other)
    const linkB = yield* newLink(other, domainB, { url: landing, alias: "theirs" })
    const domainS = yield* newDomain(state)
    const linkS = yield* newLink(state, domainS, { url: landing, alias: "watched", notes: "unchanged" })
    const doomed = { "": yield* newDomain(owner), "/api/v4": yield* newDomain(owner), "/api/v3": yield* newDomain(owner) }
    const signingOutMember = newUser({ accountId: owner.accountId, role: "member" })
    const signingOut = { "/api/v4": yield* signingOutMember, "/api/v3": yield* signingOutMember }
    return {
      owner,
      member,
      free,
      other,
      domainA,
      linkA,
      tagA: numberAt(tags.body, "objects", 0, "id"),
      domainB,
      linkB,
      landing,
      state,
      domainS,
      linkS,
      doomed,
      signingOut
    } satisfies Fixtures
  })
)

// Valid requests, to mutate

export const HOME = "https://home.example/"

let tagSerial = 0

/** A valid body for each endpoint that takes one; a test fails if the contract gains one not listed. */
export const validBody = (endpoint: Endpoint, f: Fixtures, user: TestUser): unknown => {
  switch (endpoint.id) {
    case "auth.validateLogin":
    case "auth.accessToken":
      return { email: user.email, password: PASSWORD }
    case "domains.create":
      return { domain: uniqueDomainName("fz") }
    case "domains.update":
      return { op: "replace", path: "homepage", value: HOME }
    case "links.validate":
      return { url: "https://example.com/page" }
    case "links.create":
      return { url: f.landing }
    case "links.update":
      return [{ op: "replace", path: "/notes", value: "kept" }]
    case "tags.createTag":
      return { domain_id: f.domainA, name: `tag${++tagSerial}` }
    case "smartLinks.putSettings":
      return {
        rules: [{ when: { device: ["mobile"], language: ["en"] }, url: "https://example.com/m" }],
        split: [
          { url: "https://example.com/a", weight: 40 },
          { url: "https://example.com/b", weight: 60 }
        ]
      }
    default:
      throw new Error(`no valid body known for ${endpoint.id}: add one`)
  }
}

/** Valid values of path and query parameters, for the owner of account A. */
export const validParam = (name: string, f: Fixtures): string | undefined => {
  switch (name) {
    case "domain_id":
      return String(f.domainA)
    case "link_id":
      return String(f.linkA)
    case "alias":
      return "fuzzed"
    default:
      return undefined
  }
}

/** Query parameters an endpoint needs: the ones the contract makes required. */
export const REQUIRED_QUERY: Readonly<Record<string, ReadonlyArray<string>>> = {
  "links.byAlias": ["alias"],
  "tags.listTags": ["domain_id"],
  "tags.listUtmTemplates": ["domain_id"],
  "groups.listGroups": ["domain_id"]
}

export const fillPath = (template: string, values: Readonly<Record<string, string>>) =>
  template.replace(/:([a-z_]+)/g, (_, name: string) => values[name] ?? "")

export const versioned = (endpoint: Endpoint, version: Version) =>
  version === "" || version === "/api/v4" ? endpoint.path : `${version}${endpoint.path.slice("/api/v4".length)}`

/** The valid request of an endpoint, with `changes` applied. */
export const baseline = (
  endpoint: Endpoint,
  version: Version,
  f: Fixtures,
  changes: {
    readonly params?: Readonly<Record<string, string>>
    readonly query?: string
    readonly token?: string | undefined
    readonly method?: string
    readonly body?: string | undefined
    readonly contentType?: string | undefined
    readonly headers?: Readonly<Record<string, string>>
    readonly chunked?: boolean
  } = {}
): FuzzRequest => {
  const valid = (name: string) => (endpoint.id === "domains.remove" && name === "domain_id" ? String(f.doomed[version]) : validParam(name, f))
  const params = Object.fromEntries(endpoint.params.map((name) => [name, changes.params?.[name] ?? valid(name) ?? "1"]))
  const required = (REQUIRED_QUERY[endpoint.id] ?? []).map((name) => `${name}=${validParam(name, f) ?? ""}`).join("&")
  const query = changes.query ?? required
  const path = `${fillPath(versioned(endpoint, version), params)}${query === "" ? "" : `?${query}`}`
  const caller = endpoint.id === "auth.revokeAccessToken" && version !== "" ? f.signingOut[version] : f.owner
  const token = "token" in changes ? changes.token : endpoint.authenticated ? caller.token : undefined
  const body =
    "body" in changes ? changes.body : endpoint.body === "none" ? undefined : JSON.stringify(validBody(endpoint, f, f.owner))
  const contentType = "contentType" in changes ? changes.contentType : body === undefined ? undefined : "application/json"
  const headers: Record<string, string> = {
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...(contentType === undefined ? {} : { "content-type": contentType }),
    ...changes.headers
  }
  return {
    method: changes.method ?? endpoint.method,
    path,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(changes.chunked === true ? { chunked: true } : {})
  }
}
