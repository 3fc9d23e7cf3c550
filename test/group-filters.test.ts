import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { Groups } from "../src/Groups/Groups.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, type TestUser } from "./support/Http.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const ids = (reply: { readonly body: unknown }) => (at(reply.body, "objects") as ReadonlyArray<unknown>).map((link) => at(link, "id"))

/**
 * An account with an admin and two members, one short domain with three links (two of the first
 * member's, one of the admin's) and three groups: a global one (links 1 and 3), a private one of the
 * admin listing the first member (link 2), and a private one of the admin alone (link 1).
 */
const scenario = Effect.gen(function* () {
  const groups = yield* Groups
  const admin = yield* newUser()
  const member = yield* newUser({ accountId: admin.accountId, role: "member" })
  const outsider = yield* newUser({ accountId: admin.accountId, role: "member" })
  const domain = yield* newShortDomain(admin)
  const one = yield* newLink(member, domain.id, { url: "https://example.com/one", alias: "one" })
  const two = yield* newLink(member, domain.id, { url: "https://example.com/two", alias: "two" })
  const three = yield* newLink(admin, domain.id, { url: "https://example.com/three", alias: "three" })
  const global = yield* groups.create({ domainId: domain.id, name: "Everyone", global: true, users: [] })
  const shared = yield* groups.create({ domainId: domain.id, name: "Shared", global: false, owner: admin.userId, users: [member.userId] })
  const hidden = yield* groups.create({ domainId: domain.id, name: "Hidden", global: false, owner: admin.userId, users: [] })
  for (const [group, link] of [[global.id, one], [global.id, three], [shared.id, two], [hidden.id, one]] as const) {
    yield* groups.addLink(group, link)
  }
  return { admin, member, outsider, domain, links: { one, two, three }, groups: { global: global.id, shared: shared.id, hidden: hidden.id } }
}).pipe(Effect.orDie)

const search = (user: TestUser, domainId: number, query: string, prefix = "/api/v4") =>
  call("GET", `${prefix}/${domainId}/links?${query}`, { token: user.token })

describe("groups on link lists: group_id (E6, E16) and the groups of each link", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E6 group_id lists the group's links among those the caller may list", () =>
      Effect.gen(function* () {
        const s = yield* scenario
        expect(ids(yield* search(s.member, s.domain.id, `group_id=${s.groups.global}`))).toEqual([s.links.one])
        expect(ids(yield* search(s.member, s.domain.id, `group_id=${s.groups.shared}`))).toEqual([s.links.two])
        expect(ids(yield* search(s.admin, s.domain.id, `group_id=${s.groups.global}&users=all`))).toEqual([s.links.one, s.links.three])
        expect(ids(yield* search(s.admin, s.domain.id, `group_id=${s.groups.hidden}&users=all`))).toEqual([s.links.one])
        const v3 = yield* search(s.admin, s.domain.id, `group_id=${s.groups.global}&users=all`, "/api/v3")
        expect(ids(v3)).toEqual([s.links.one, s.links.three])
      })
    )

    it.effect("a group_id the caller cannot see, of another domain or unknown is 404 10160; one that is no id 400 10160", () =>
      Effect.gen(function* () {
        const s = yield* scenario
        const otherDomain = yield* newDomain(s.admin)
        const cases: ReadonlyArray<readonly [TestUser, number, string]> = [
          [s.member, s.domain.id, String(s.groups.hidden)],
          [s.outsider, s.domain.id, String(s.groups.shared)],
          [s.admin, otherDomain, String(s.groups.global)],
          [s.admin, s.domain.id, "999999999"],
          [s.admin, s.domain.id, "abc"],
          [s.admin, s.domain.id, "0"]
        ]
        for (const [user, domainId, groupId] of cases) {
          const status = /^[1-9][0-9]*$/.test(groupId) ? 404 : 400
          const reply = yield* search(user, domainId, `group_id=${groupId}`)
          expect([reply.status, codes(reply)], `E6 group_id=${groupId}`).toEqual([status, [10160]])
          const clicked = yield* call("GET", `/api/v4/${domainId}/links/clicked?group_id=${groupId}`, { token: user.token })
          expect([clicked.status, codes(clicked)], `E16 group_id=${groupId}`).toEqual([status, [10160]])
        }
      })
    )

    it.effect("link objects carry the ids of the groups the caller sees, [] when none", () =>
      Effect.gen(function* () {
        const s = yield* scenario
        const groupsOf = (user: TestUser, linkId: number) =>
          Effect.map(call("GET", `/api/v4/${s.domain.id}/links/${linkId}`, { token: user.token }), (reply) => at(reply.body, "objects", 0, "groups"))
        expect(yield* groupsOf(s.member, s.links.one)).toEqual([s.groups.global])
        expect(yield* groupsOf(s.admin, s.links.one)).toEqual([s.groups.global, s.groups.hidden])
        expect(yield* groupsOf(s.member, s.links.two)).toEqual([s.groups.shared])
        const listed = yield* search(s.admin, s.domain.id, "users=all")
        expect((at(listed.body, "objects") as ReadonlyArray<unknown>).map((link) => at(link, "groups"))).toEqual([
          [s.groups.global, s.groups.hidden],
          [s.groups.shared],
          [s.groups.global]
        ])
        const fresh = yield* call("POST", `/api/v4/${s.domain.id}/links`, {
          token: s.member.token,
          body: { url: "https://example.com/fresh", override_404_check: 1 }
        })
        expect(at(fresh.body, "objects", 0, "groups")).toEqual([])
      })
    )

    it.effect("E16 group_id reports the group's clicked links, each with its groups", () =>
      Effect.gen(function* () {
        const s = yield* scenario
        for (const alias of ["one", "two", "three", "three"]) expect((yield* visit(s.domain.name, `/${alias}`)).status).toBe(301)
        yield* (yield* ClickLog).flush
        const clicked = (user: TestUser, query: string) =>
          call("GET", `/api/v4/${s.domain.id}/links/clicked?${query}`, { token: user.token })
        const all = yield* clicked(s.admin, `group_id=${s.groups.global}`)
        expect(all.status, all.text).toBe(200)
        expect(ids(all)).toEqual([s.links.three, s.links.one])
        expect(at(all.body, "objects", 0, "groups")).toEqual([s.groups.global])
        expect(ids(yield* clicked(s.member, `group_id=${s.groups.global}`))).toEqual([s.links.one])
        expect(ids(yield* clicked(s.member, `group_id=${s.groups.shared}`))).toEqual([s.links.two])
        expect(ids(yield* clicked(s.admin, `group_id=${s.groups.hidden}`))).toEqual([s.links.one])
      })
    )
  })
})
