/**
 * Model-based test of the link life cycle (issue "Reliability"): random sequences of creates (given or
 * generated aliases), updates (E12: alias, url, notes, notify_on_click), schedules (E12 archive_on /
 * delete_on), the passing of time, redirects and searches, by an account admin and a member, over two
 * domains (one with a homepage and url_404, one without). After every step the service is compared
 * with an in-memory model: E6 lists and totals for each caller and domain, E11 and E13 of the link the
 * step touched, and the redirect of its alias.
 *
 * Archiving and deleting are what the service does: E12 sets `archive_on` or `delete_on` (hours ahead,
 * so that real time never makes them due during a run); a "two days pass" step moves every date of
 * the run's links two days back in the database (as the scheduler test does) and runs the
 * scheduler's own sweep, which archives or deletes what is due.
 *
 * The fast-check seed is random on each run (printed with a counterexample); FUZZ_SEED replays one.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, FastCheck as fc, Layer, Runtime } from "effect"
import { isReservedAlias, MAX_ALIAS_LENGTH } from "../src/Links/Alias.ts"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { Scheduler } from "../src/Links/Scheduler.ts"
import { answering } from "./support/Fixtures.ts"
import { at, call, codes, newUser, type Reply, type TestUser } from "./support/Http.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { type BaseUrl, TestServer } from "./support/TestServer.ts"

// ---------------------------------------------------------------------------------------------------
// The model

type Actor = "admin" | "member"
type Status = "active" | "archived" | "deleted"

interface ModelLink {
  readonly id: number
  /** Index into the run's domains. */
  readonly domain: 0 | 1
  readonly owner: Actor
  alias: string
  url: string
  notes: string
  notify: boolean
  readonly redirectType: 301 | 307
  status: Status
  archiveOn: number | null
  deleteOn: number | null
  clicks: number
}

interface Model {
  readonly links: Array<ModelLink>
  /** The link the last step was about, whose single reads (E11, E13, redirect) are then compared. */
  focus: ModelLink | undefined
}

interface RunDomain {
  readonly id: number
  readonly name: string
  readonly homepage: string | null
  readonly url404: string | null
}

/** What the commands act on: the service, through the test's runtime. */
interface Real {
  readonly run: <A>(effect: Effect.Effect<A, unknown, Services>) => Promise<A>
  readonly users: Readonly<Record<Actor, TestUser>>
  readonly domains: readonly [RunDomain, RunDomain]
  /** A local page answering 200: new URLs pass the 404 check quickly. */
  readonly landing: string
}

type Services = SqlClient.SqlClient | Scheduler | ClickLog | BaseUrl

const ALIAS = /^[A-Za-z0-9._-]+$/

/** The error code of an alias by the alias rules, or undefined when it is acceptable. */
const aliasProblem = (alias: string): 10102 | 10103 | 10104 | undefined => {
  if (!ALIAS.test(alias) || /^\.+$/.test(alias)) return 10102
  if (alias.length > MAX_ALIAS_LENGTH) return 10103
  if (isReservedAlias(alias)) return 10104
  return undefined
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** The non-deleted link of a domain with this alias, ignoring case (there is at most one). */
const holderOf = (m: Model, domain: 0 | 1, alias: string, except?: number) =>
  m.links.find((l) => l.domain === domain && l.status !== "deleted" && same(l.alias, alias) && l.id !== except)

/** Links a caller sees: an account admin all of the account's, a member their own; never deleted ones. */
const visibleTo = (actor: Actor, link: ModelLink) => link.status !== "deleted" && (actor === "admin" || link.owner === actor)

const now = () => Math.floor(Date.now() / 1000)

/** A link as E6, E11 and E13 answer it, without `created` and `modified` (the model keeps no clock). */
const expectedLink = (link: ModelLink, real: Real) => {
  const domain = real.domains[link.domain]
  return {
    id: link.id,
    url: link.url,
    alias: link.alias,
    short_link: `http://${domain.name}/${link.alias}`,
    redirect_url: link.url,
    redirect_url_domain: new URL(link.url).hostname,
    redirect_url_path: new URL(link.url).pathname,
    user_id: real.users[link.owner].userId,
    domain_id: domain.id,
    click_count: link.clicks,
    notify_on_click: link.notify ? "1" : "0",
    notes: link.notes,
    redirect_type: link.redirectType,
    status: link.status,
    ...(link.deleteOn === null ? {} : { delete_on: link.deleteOn }),
    ...(link.archiveOn === null ? {} : { archive_on: link.archiveOn }),
    tags: [],
    groups: []
  }
}

const withoutClock = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  const { created: _c, modified: _m, ...rest } = value as Record<string, unknown>
  return rest
}

/** The answer a redirect of `alias` on the domain gets. */
const expectedRedirect = (m: Model, real: Real, domain: 0 | 1, path: string) => {
  const d = real.domains[domain]
  const orNotFound = (location: string | null) => (location === null ? { status: 404, location: undefined } : { status: 302, location })
  if (path === "/") return orNotFound(d.homepage)
  const link = holderOf(m, domain, path.slice(1))
  if (link === undefined) return orNotFound(d.url404)
  if (link.status === "archived") return orNotFound(d.homepage)
  return { status: link.redirectType, location: link.url }
}

/** A redirect answer as one line, for readable failures. */
const shownRedirect = (status: number | { readonly status: number; readonly location: string | undefined }, location?: string) =>
  typeof status === "number" ? `${status} ${location ?? "(no Location)"}` : `${status.status} ${status.location ?? "(no Location)"}`

const describeReply = (reply: Reply) => `${reply.status} ${reply.text.slice(0, 400)}`

// ---------------------------------------------------------------------------------------------------
// Checks after every step

/** Clicks are written in batches: write the queued ones before comparing counts. */
const flushClicks = Effect.flatMap(ClickLog, (log) => log.flush)

const compareLists = async (m: Model, real: Real, step: string) => {
  await real.run(flushClicks)
  for (const domain of [0, 1] as const) {
    const d = real.domains[domain]
    const lists: ReadonlyArray<readonly [Actor, string, (l: ModelLink) => boolean]> = [
      ["admin", "", (l) => l.owner === "admin"],
      ["member", "", (l) => l.owner === "member"],
      ["admin", "&users=all", () => true]
    ]
    for (const [actor, extra, filter] of lists) {
      const reply = await real.run(call("GET", `/api/v4/${d.id}/links?order=oldest${extra}`, { token: real.users[actor].token }))
      const expected = m.links.filter((l) => l.domain === domain && l.status !== "deleted" && filter(l)).sort((a, b) => a.id - b.id)
      const context = `${step}: E6 of domain ${domain} as ${actor}${extra} -> ${describeReply(reply)}`
      expect(reply.status, context).toBe(200)
      expect(at(reply.body, "total"), context).toBe(expected.length)
      expect(at(reply.body, "click_count"), context).toBe(expected.reduce((sum, l) => sum + l.clicks, 0))
      const objects = at(reply.body, "objects")
      expect(Array.isArray(objects) ? objects.map(withoutClock) : objects, context).toEqual(expected.map((l) => expectedLink(l, real)))
    }
  }
}

/** E11 and E13 (alias in another case) as both callers, and the redirect (HEAD, so no click), of the focus link. */
const compareFocus = async (m: Model, real: Real, step: string) => {
  const link = m.focus
  if (link === undefined) return
  const d = real.domains[link.domain]
  for (const actor of ["admin", "member"] as const) {
    const token = real.users[actor].token
    const byId = await real.run(call("GET", `/api/v4/${d.id}/links/${link.id}`, { token }))
    const context = `${step}: E11 of ${link.id} as ${actor} -> ${describeReply(byId)}`
    if (visibleTo(actor, link)) {
      expect(byId.status, context).toBe(200)
      expect(withoutClock(at(byId.body, "objects", 0)), context).toEqual(expectedLink(link, real))
    } else {
      expect([byId.status, codes(byId)], context).toEqual([404, [10150]])
    }
    if (actor === "admin") {
      // Version 3 reads the same link as one object, without notify_on_click.
      const v3 = await real.run(call("GET", `/api/v3/${d.id}/links/${link.id}`, { token }))
      const v3Context = `${step}: v3 E11 of ${link.id} -> ${describeReply(v3)}`
      if (visibleTo(actor, link)) {
        const { notify_on_click: _, ...expected } = expectedLink(link, real)
        expect([v3.status, withoutClock(at(v3.body, "objects"))], v3Context).toEqual([200, expected])
      } else {
        expect([v3.status, codes(v3)], v3Context).toEqual([404, [10150]])
      }
    }
    const swapped = [...link.alias].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join("")
    const byAlias = await real.run(call("GET", `/api/v4/${d.id}/links/exists?alias=${encodeURIComponent(swapped)}`, { token }))
    const holder = holderOf(m, link.domain, link.alias)
    const aliasContext = `${step}: E13 of ${swapped} as ${actor} -> ${describeReply(byAlias)}`
    if (holder !== undefined && visibleTo(actor, holder)) {
      expect(byAlias.status, aliasContext).toBe(200)
      expect(withoutClock(at(byAlias.body, "objects", 0)), aliasContext).toEqual(expectedLink(holder, real))
    } else {
      expect([byAlias.status, codes(byAlias)], aliasContext).toEqual([404, [10150]])
    }
  }
  const path = `/${link.alias}`
  const answer = await real.run(visit(d.name, path, { method: "HEAD" }))
  expect(shownRedirect(answer.status, answer.headers.location), `${step}: HEAD ${d.name}${path}`).toBe(
    shownRedirect(expectedRedirect(m, real, link.domain, path))
  )
}

/** Steps checked so far (all runs); MODEL_TRACE=1 prints each step. */
let steps = 0

const checkAll = async (m: Model, real: Real, step: string) => {
  steps++
  if (process.env.MODEL_TRACE !== undefined) console.log(step)
  await compareLists(m, real, step)
  await compareFocus(m, real, step)
}

// ---------------------------------------------------------------------------------------------------
// Commands

type Command = fc.AsyncCommand<Model, Real>

/** `index` picks one of the model's links (any status), or undefined when there are none. */
const pick = (m: Model, index: number) => (m.links.length === 0 ? undefined : m.links[index % m.links.length])

const patchLink = (real: Real, actor: Actor, link: ModelLink, operations: ReadonlyArray<{ readonly path: string; readonly value: unknown }>) =>
  real.run(
    call("PATCH", `/api/v4/${real.domains[link.domain].id}/links/${link.id}`, {
      token: real.users[actor].token,
      body: operations.map((operation) => ({ op: "replace", ...operation }))
    })
  )

type AliasChoice =
  | { readonly kind: "given"; readonly alias: string }
  | { readonly kind: "generated" }
  | { readonly kind: "another's"; readonly index: number; readonly upper: boolean }

const aliasOf = (m: Model, choice: AliasChoice): string | undefined => {
  if (choice.kind === "given") return choice.alias
  if (choice.kind === "generated") return undefined
  const other = pick(m, choice.index)
  if (other === undefined) return "first"
  return choice.upper ? other.alias.toUpperCase() : other.alias.toLowerCase()
}

class Create implements Command {
  constructor(
    readonly actor: Actor,
    readonly domain: 0 | 1,
    readonly alias: AliasChoice,
    readonly path: string,
    readonly notes: string,
    readonly redirectType: 301 | 307 | undefined,
    readonly notify: boolean,
    readonly schedule: "none" | "archive" | "delete" | "both",
    readonly check404: boolean
  ) {}
  check = () => true
  async run(m: Model, real: Real) {
    const alias = aliasOf(m, this.alias)
    const url = `${real.landing}/${this.path}`
    const later = now() + 3 * 3600
    const archiveOn = this.schedule === "archive" || this.schedule === "both" ? later : null
    const deleteOn = this.schedule === "delete" || this.schedule === "both" ? later : null
    const body = {
      url,
      ...(alias === undefined ? {} : { alias }),
      ...(this.notes === "" ? {} : { notes: this.notes }),
      ...(this.redirectType === undefined ? {} : { redirect_type: this.redirectType }),
      ...(this.notify ? { notify_on_click: 1 } : {}),
      ...(archiveOn === null ? {} : { archive_on: archiveOn }),
      ...(deleteOn === null ? {} : { delete_on: deleteOn }),
      ...(this.check404 ? {} : { override_404_check: 1 })
    }
    const d = real.domains[this.domain]
    const reply = await real.run(call("POST", `/api/v4/${d.id}/links`, { token: real.users[this.actor].token, body }))
    const step = `${this} (alias ${alias ?? "generated"})`
    const context = `${step} -> ${describeReply(reply)}`
    const problems = [
      ...(alias === undefined ? [] : [aliasProblem(alias)].filter((code) => code !== undefined)),
      ...([...this.notes].length > 1000 ? [10106] : []),
      ...(archiveOn !== null && deleteOn !== null ? [10116] : [])
    ].sort((a, b) => a - b)
    const taken = alias !== undefined && problems.length === 0 && holderOf(m, this.domain, alias) !== undefined
    if (problems.length > 0 || taken) {
      expect([reply.status, codes(reply)], context).toEqual([400, taken ? [10104] : problems])
    } else {
      expect(reply.status, context).toBe(200)
      const created = at(reply.body, "objects", 0)
      const id = Number(at(created, "id"))
      const link: ModelLink = {
        id,
        domain: this.domain,
        owner: this.actor,
        alias: alias ?? String(at(created, "alias")),
        url,
        notes: this.notes,
        notify: this.notify,
        redirectType: this.redirectType ?? 301,
        status: "active",
        archiveOn,
        deleteOn,
        clicks: 0
      }
      if (alias === undefined) {
        expect(link.alias, context).toMatch(/^[2-9A-HJ-NP-Za-km-np-z]{6}$/)
        expect(holderOf(m, this.domain, link.alias), `${context}: a generated alias is free`).toBeUndefined()
      }
      expect(withoutClock(created), context).toEqual(expectedLink(link, real))
      expect(at(reply.body, "new_link"), context).toBe(1)
      m.links.push(link)
      m.focus = link
    }
    await checkAll(m, real, step)
  }
  toString = () =>
    `Create(${this.actor}, d${this.domain}, ${JSON.stringify(this.alias)}, /${this.path}, notes=${JSON.stringify(this.notes.slice(0, 20))}, ${this.redirectType ?? "-"}, notify=${this.notify}, ${this.schedule}, check404=${this.check404})`
}

class Update implements Command {
  constructor(
    readonly actor: Actor,
    readonly index: number,
    readonly alias: AliasChoice | undefined,
    readonly path: string | undefined,
    readonly notes: string | undefined,
    readonly notify: boolean | undefined
  ) {}
  check = (m: Readonly<Model>) => m.links.length > 0
  async run(m: Model, real: Real) {
    const link = pick(m, this.index)!
    const alias = this.alias === undefined ? undefined : aliasOf(m, this.alias)
    const url = this.path === undefined ? undefined : `${real.landing}/${this.path}`
    const operations = [
      ...(alias === undefined ? [] : [{ path: "/alias", value: alias }]),
      ...(url === undefined ? [] : [{ path: "/url", value: url }]),
      ...(this.notes === undefined ? [] : [{ path: "/notes", value: this.notes }]),
      ...(this.notify === undefined ? [] : [{ path: "/notify_on_click", value: this.notify ? 1 : 0 }])
    ]
    if (operations.length === 0) operations.push({ path: "/notes", value: link.notes })
    const reply = await patchLink(real, this.actor, link, operations)
    const step = `${this} on link ${link.id} (${link.status}, alias ${link.alias}, new alias ${alias ?? "-"})`
    const context = `${step} -> ${describeReply(reply)}`
    m.focus = link
    if (!visibleTo(this.actor, link)) {
      expect([reply.status, codes(reply)], context).toEqual([404, [10150]])
    } else {
      const problems: Array<number> = []
      if (alias !== undefined && aliasProblem(alias) !== undefined) problems.push(10133)
      if (this.notes !== undefined && [...this.notes].length > 1000) problems.push(10135)
      if (alias !== undefined && aliasProblem(alias) === undefined && holderOf(m, link.domain, alias, link.id) !== undefined) {
        problems.push(10140)
      }
      if (problems.length > 0) {
        expect([reply.status, codes(reply)], context).toEqual([400, problems.sort((a, b) => a - b)])
      } else {
        expect(reply.status, context).toBe(200)
        if (alias !== undefined) link.alias = alias
        if (url !== undefined) link.url = url
        if (this.notes !== undefined) link.notes = this.notes
        if (this.notify !== undefined) link.notify = this.notify
        expect(withoutClock(at(reply.body, "objects", 0)), context).toEqual(expectedLink(link, real))
      }
    }
    await checkAll(m, real, step)
  }
  toString = () =>
    `Update(${this.actor}, #${this.index}, alias=${JSON.stringify(this.alias)}, url=${this.path ?? "-"}, notes=${this.notes === undefined ? "-" : JSON.stringify(this.notes.slice(0, 20))}(${this.notes?.length ?? 0}), notify=${this.notify ?? "-"})`
}

class Schedule implements Command {
  constructor(
    readonly actor: Actor,
    readonly index: number,
    readonly kind: "archive" | "delete" | "clear archive" | "clear delete",
    readonly hours: number
  ) {}
  check = (m: Readonly<Model>) => m.links.length > 0
  async run(m: Model, real: Real) {
    const link = pick(m, this.index)!
    const at_ = now() + this.hours * 3600
    const path = this.kind === "archive" || this.kind === "clear archive" ? "/archive_on" : "/delete_on"
    const value = this.kind.startsWith("clear") ? null : at_
    const reply = await patchLink(real, this.actor, link, [{ path, value }])
    const step = `${this} on link ${link.id} (${link.status}, archive_on ${link.archiveOn}, delete_on ${link.deleteOn})`
    const context = `${step} -> ${describeReply(reply)}`
    m.focus = link
    if (!visibleTo(this.actor, link)) {
      expect([reply.status, codes(reply)], context).toEqual([404, [10150]])
    } else {
      const archiveOn = path === "/archive_on" ? value : link.archiveOn
      const deleteOn = path === "/delete_on" ? value : link.deleteOn
      if (archiveOn !== null && deleteOn !== null) {
        expect([reply.status, codes(reply)], context).toEqual([400, [10116]])
      } else {
        expect(reply.status, context).toBe(200)
        link.archiveOn = archiveOn
        link.deleteOn = deleteOn
        expect(withoutClock(at(reply.body, "objects", 0)), context).toEqual(expectedLink(link, real))
      }
    }
    await checkAll(m, real, step)
  }
  toString = () => `Schedule(${this.actor}, #${this.index}, ${this.kind}, +${this.hours}h)`
}

const TWO_DAYS = 2 * 86_400

class TwoDaysPass implements Command {
  check = () => true
  async run(m: Model, real: Real) {
    const [d0, d1] = real.domains
    await real.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          UPDATE links SET archive_on = archive_on - interval '2 days', delete_on = delete_on - interval '2 days'
          WHERE domain_id IN (${d0.id}, ${d1.id})`
        // The service sweeps every 15 s; one of its sweeps may come first, with the same outcome.
        yield* (yield* Scheduler).sweep
      })
    )
    const t = now()
    const due = (at: number | null) => at !== null && at <= t
    for (const link of m.links) {
      if (link.archiveOn !== null) link.archiveOn -= TWO_DAYS
      if (link.deleteOn !== null) link.deleteOn -= TWO_DAYS
      if (link.status === "active" && due(link.archiveOn ?? link.deleteOn)) link.status = due(link.deleteOn) ? "deleted" : "archived"
      else if (link.status === "archived" && due(link.deleteOn)) link.status = "deleted"
    }
    await checkAll(m, real, `${this}`)
  }
  toString = () => "TwoDaysPass"
}

class Visit implements Command {
  constructor(
    readonly target:
      | { readonly kind: "link"; readonly index: number; readonly upper: boolean }
      | { readonly kind: "path"; readonly domain: 0 | 1; readonly path: string },
    readonly method: "GET" | "HEAD"
  ) {}
  check = () => true
  async run(m: Model, real: Real) {
    const link = this.target.kind === "link" ? pick(m, this.target.index) : undefined
    const domain = link?.domain ?? (this.target.kind === "path" ? this.target.domain : 0)
    const path =
      link !== undefined && this.target.kind === "link"
        ? `/${this.target.upper ? link.alias.toUpperCase() : link.alias}`
        : this.target.kind === "path"
          ? this.target.path
          : "/"
    const d = real.domains[domain]
    const answer = await real.run(visit(d.name, path, { method: this.method }))
    const expected = expectedRedirect(m, real, domain, path)
    const step = `${this} -> ${d.name}${path}`
    expect(shownRedirect(answer.status, answer.headers.location), step).toBe(shownRedirect(expected))
    if (path === "/" || expected.status === 404 || expected.status === 302) {
      expect(answer.headers["cache-control"], step).not.toBe("private, max-age=90")
    } else {
      expect(answer.headers["cache-control"], step).toBe("private, max-age=90")
      const holder = holderOf(m, domain, path.slice(1))
      // A GET records a click (no user agent: device "other", counted); HEAD records nothing.
      if (this.method === "GET" && holder !== undefined) holder.clicks++
    }
    if (link !== undefined) m.focus = link
    await checkAll(m, real, step)
  }
  toString = () => `Visit(${JSON.stringify(this.target)}, ${this.method})`
}

class Search implements Command {
  constructor(
    readonly actor: Actor,
    readonly domain: 0 | 1,
    readonly keyword: { readonly kind: "of link"; readonly index: number; readonly field: "alias" | "notes" | "url"; readonly start: number; readonly length: number; readonly upper: boolean } | { readonly kind: "text"; readonly text: string },
    readonly all: boolean
  ) {}
  check = () => true
  async run(m: Model, real: Real) {
    let keyword = this.keyword.kind === "text" ? this.keyword.text : ""
    if (this.keyword.kind === "of link") {
      const link = pick(m, this.keyword.index)
      const source = link === undefined ? "" : this.keyword.field === "url" ? link.url : link[this.keyword.field]
      const start = source.length === 0 ? 0 : this.keyword.start % source.length
      keyword = source.slice(start, start + this.keyword.length)
      if (this.keyword.upper) keyword = keyword.toUpperCase()
    }
    const users = this.all ? "&users=all" : ""
    const d = real.domains[this.domain]
    const reply = await real.run(
      call("GET", `/api/v4/${d.id}/links?keyword=${encodeURIComponent(keyword)}${users}`, { token: real.users[this.actor].token })
    )
    if (this.all && this.actor === "member") {
      // A member who administers no domain may not ask for every user's links
      // (docs/decisions/0011-links.md, E6).
      expect([reply.status, codes(reply)], `${this} -> ${describeReply(reply)}`).toEqual([403, [10003]])
      return
    }
    const k = keyword.toLowerCase()
    const expected = m.links
      .filter((l) => l.domain === this.domain && l.status !== "deleted" && (users !== "" || l.owner === this.actor))
      .filter((l) => k === "" || [l.alias, l.notes, l.url].some((field) => field.toLowerCase().includes(k)))
      .map((l) => l.id)
      .sort((a, b) => a - b)
    const step = `${this} keyword ${JSON.stringify(keyword)}`
    const context = `${step} -> ${describeReply(reply)}`
    expect(reply.status, context).toBe(200)
    expect(at(reply.body, "total"), context).toBe(expected.length)
    const objects = at(reply.body, "objects")
    expect(Array.isArray(objects) ? objects.map((o) => at(o, "id")) : objects, context).toEqual(expected)
  }
  toString = () => `Search(${this.actor}, d${this.domain}, ${JSON.stringify(this.keyword)}, all=${this.all})`
}

// ---------------------------------------------------------------------------------------------------
// Arbitraries

const actor = fc.constantFrom<Actor>("admin", "admin", "member")
const domain = fc.constantFrom<0 | 1>(0, 1)

/** A small pool, so that aliases collide (in any case), with invalid and reserved ones among them. */
const ALIASES = [
  "promo", "Promo", "PROMO", "sale", "SALE", "x", "X", "a.b", "A.B", "a_b", "a-b", "v1", "V1", "Spring-2027", "s.p_r-i",
  "a b", "ä", "..", ".", "", "a/b", "x".repeat(MAX_ALIAS_LENGTH), "y".repeat(MAX_ALIAS_LENGTH + 1), "api", "Admin", "robots.txt"
] as const

const aliasChoice: fc.Arbitrary<AliasChoice> = fc.oneof(
  { arbitrary: fc.constantFrom(...ALIASES).map((alias): AliasChoice => ({ kind: "given", alias })), weight: 5 },
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/).map((alias): AliasChoice => ({ kind: "given", alias })), weight: 2 },
  { arbitrary: fc.constant<AliasChoice>({ kind: "generated" }), weight: 2 },
  { arbitrary: fc.record({ index: fc.nat(), upper: fc.boolean() }).map(({ index, upper }): AliasChoice => ({ kind: "another's", index, upper })), weight: 2 }
)

/** The path of a long URL on the landing server: lower case, so that it is its own normalised form. */
const urlPath = fc.stringMatching(/^[a-z0-9]{1,8}$/).map((path) => `p/${path}`)

/** Notes with the characters LIKE would treat as wildcards, and sometimes too long (1001 characters). */
const notes = fc.oneof(
  { arbitrary: fc.string({ unit: fc.constantFrom(..."abcXYZ019 _%.-\\"), maxLength: 20 }), weight: 8 },
  { arbitrary: fc.constant("n".repeat(1001)), weight: 1 }
)

const create: fc.Arbitrary<Command> = fc
  .tuple(actor, domain, aliasChoice, urlPath, notes, fc.constantFrom<301 | 307 | undefined>(301, 307, undefined), fc.boolean(), fc.constantFrom("none", "none", "none", "archive", "delete", "both") as fc.Arbitrary<"none" | "archive" | "delete" | "both">, fc.boolean())
  .map(([a, d, alias, path, n, type, notify, schedule, check404]) => new Create(a, d, alias, path, n, type, notify, schedule, check404))

const update: fc.Arbitrary<Command> = fc
  .tuple(actor, fc.nat(), fc.option(aliasChoice, { nil: undefined }), fc.option(urlPath, { nil: undefined }), fc.option(notes, { nil: undefined }), fc.option(fc.boolean(), { nil: undefined }))
  .map(([a, index, alias, path, n, notify]) => new Update(a, index, alias?.kind === "generated" ? undefined : alias, path, n, notify))

const schedule: fc.Arbitrary<Command> = fc
  .tuple(actor, fc.nat(), fc.constantFrom("archive", "delete", "clear archive", "clear delete") as fc.Arbitrary<"archive" | "delete" | "clear archive" | "clear delete">, fc.integer({ min: 2, max: 20 }))
  .map(([a, index, kind, hours]) => new Schedule(a, index, kind, hours))

const twoDaysPass: fc.Arbitrary<Command> = fc.constant(new TwoDaysPass())

const visiting: fc.Arbitrary<Command> = fc
  .oneof(
    { arbitrary: fc.record({ kind: fc.constant("link" as const), index: fc.nat(), upper: fc.boolean() }), weight: 4 },
    // Aliases of the pool before and after links take them (the service caches unknown aliases too).
    { arbitrary: fc.record({ kind: fc.constant("path" as const), domain, path: fc.constantFrom(...ALIASES.filter((a) => aliasProblem(a) === undefined).map((a) => `/${a}`)) }), weight: 2 },
    { arbitrary: fc.record({ kind: fc.constant("path" as const), domain, path: fc.constantFrom("/", "/nothing-here", "/a/b", "/%00", "/x%2Fy", "/" + "z".repeat(41)) }), weight: 1 }
  )
  .chain((target) => fc.constantFrom<"GET" | "HEAD">("GET", "HEAD").map((method) => new Visit(target, method)))

const search: fc.Arbitrary<Command> = fc
  .tuple(
    actor,
    domain,
    fc.oneof(
      fc.record({ kind: fc.constant("of link" as const), index: fc.nat(), field: fc.constantFrom("alias" as const, "notes" as const, "url" as const), start: fc.nat(), length: fc.integer({ min: 1, max: 5 }), upper: fc.boolean() }),
      fc.record({ kind: fc.constant("text" as const), text: fc.constantFrom("%", "_", ".", "\\", "promo", "P/", "", " ") })
    ),
    fc.boolean()
  )
  .map(([a, d, keyword, all]) => new Search(a, d, keyword, all))

/** Steps weighted towards creates, updates and visits; up to 50 of them a run (25 on average). */
const commands = fc.commands(
  [create, create, create, update, update, schedule, schedule, twoDaysPass, visiting, visiting, search],
  { maxCommands: 50, size: "max" }
)

// ---------------------------------------------------------------------------------------------------

class People extends Context.Tag("test/LinkModelPeople")<
  People,
  { readonly admin: TestUser; readonly member: TestUser; readonly landing: string }
>() {}

const people = Layer.scoped(
  People,
  Effect.gen(function* () {
    const admin = yield* newUser()
    const member = yield* newUser({ accountId: admin.accountId, role: "member" })
    const landing = (yield* answering(200)).url.replace(/\/page$/, "")
    return { admin, member, landing }
  })
)

const seed = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }

/** Runs of up to 50 steps; about 40 s on the embedded database on 2 cores. */
const NUM_RUNS = 20

describe("the link life cycle against a model", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.layer(people)((it) => {
      it.effect(
        "create, update, schedule, time passing, redirects and searches agree with the model after every step",
        () =>
          Effect.gen(function* () {
            const { admin, member, landing } = yield* People
            const runtime = yield* Effect.runtime<Services>()
            const run = Runtime.runPromise(runtime)
            const setup = async () => {
              const [withPages, bare] = await run(
                Effect.all([
                  newShortDomain(admin, { homepage: "https://home.example/", url_404: "https://home.example/missing" }),
                  newShortDomain(admin)
                ])
              )
              const real: Real = {
                run,
                users: { admin, member },
                domains: [
                  { ...withPages, homepage: "https://home.example/", url404: "https://home.example/missing" },
                  { ...bare, homepage: null, url404: null }
                ],
                landing
              }
              const model: Model = { links: [], focus: undefined }
              return { model, real }
            }
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(commands, (cmds) => fc.asyncModelRun(setup, cmds)),
                { numRuns: NUM_RUNS, endOnFailure: true, ...seed }
              )
            )
            // Runs have 25 steps on average: make sure they were not all cut short.
            expect(steps).toBeGreaterThan(NUM_RUNS * 5)
          }),
        240_000
      )
    })
  })
})
