import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Plan, Role } from "../Accounts/User.ts"

const Epoch = Schema.Int

export class AccountSummary extends Schema.Class<AccountSummary>("AccountSummary")({
  id: Schema.Int,
  name: Schema.String,
  plan: Plan,
  link_quota: Schema.NullOr(Schema.Int),
  users: Schema.Int,
  domains: Schema.Int,
  links: Schema.Int,
  created: Epoch
}) {}

export class UserSummary extends Schema.Class<UserSummary>("UserSummary")({
  user_id: Schema.Int,
  account_id: Schema.Int,
  email: Schema.String,
  nickname: Schema.String,
  first_name: Schema.NullOr(Schema.String),
  last_name: Schema.NullOr(Schema.String),
  role: Role,
  disabled: Schema.Boolean,
  links: Schema.Int,
  access_tokens: Schema.Int,
  admin_of_domains: Schema.Array(Schema.Int),
  created: Epoch
}) {}

export class DomainSummary extends Schema.Class<DomainSummary>("DomainSummary")({
  id: Schema.Int,
  account_id: Schema.Int,
  domain: Schema.String,
  status: Schema.String,
  has_ssl: Schema.Boolean,
  url_404: Schema.NullOr(Schema.String),
  homepage: Schema.NullOr(Schema.String),
  links: Schema.Int,
  created: Epoch
}) {}

export class LinkSummary extends Schema.Class<LinkSummary>("LinkSummary")({
  id: Schema.Int,
  domain_id: Schema.Int,
  user_id: Schema.Int,
  alias: Schema.String,
  url: Schema.String,
  status: Schema.String,
  redirect_type: Schema.Int,
  click_count: Schema.Int,
  created: Epoch
}) {}

/** One page of a listing, and how many rows there are in all. */
export interface Listing<A> {
  readonly objects: ReadonlyArray<A>
  readonly total: number
}

export interface PageOf {
  readonly limit: number
  readonly offset: number
}

const Page = Schema.Struct({ limit: Schema.Int, offset: Schema.Int })
const ByAccount = Schema.Struct({ ...Page.fields, accountId: Schema.NullOr(Schema.Int) })
const WithTotal = <A, I>(row: Schema.Schema<A, I>) => Schema.Struct({ row, total: Schema.Int })

const rowOf = <A>(found: { readonly row: A }) => found.row

const listing = <A>(rows: ReadonlyArray<{ readonly row: A; readonly total: number }>): Listing<A> => ({
  objects: rows.map((r) => r.row),
  total: rows[0]?.total ?? 0
})

/**
 * What an operator reads across every account (the admin CLI's list and show commands): the API
 * only ever shows one caller's part. Deleted links and domains are listed with their status.
 */
export class Inventory extends Effect.Service<Inventory>()("Inventory", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const epoch = (column: string) => sql.unsafe(`floor(extract(epoch FROM ${column}))::int8`)

    const accountRow = sql`
      SELECT json_build_object(
        'id', a.id, 'name', a.name, 'plan', a.plan, 'link_quota', a.link_quota,
        'users', (SELECT count(*) FROM users u WHERE u.account_id = a.id),
        'domains', (SELECT count(*) FROM domains d WHERE d.account_id = a.id AND d.status <> 'deleted'),
        'links', (SELECT count(*) FROM links l JOIN domains d ON d.id = l.domain_id WHERE d.account_id = a.id AND l.status <> 'deleted'),
        'created', ${epoch("a.created")}) AS row, count(*) OVER () AS total
      FROM accounts a`

    const userRow = sql`
      SELECT json_build_object(
        'user_id', u.id, 'account_id', u.account_id, 'email', u.email, 'nickname', u.nickname,
        'first_name', u.first_name, 'last_name', u.last_name, 'role', u.role, 'disabled', u.disabled,
        'links', (SELECT count(*) FROM links l WHERE l.user_id = u.id AND l.status <> 'deleted'),
        'access_tokens', (SELECT count(*) FROM access_tokens t WHERE t.user_id = u.id AND t.expires > now()),
        'admin_of_domains', coalesce((SELECT json_agg(da.domain_id ORDER BY da.domain_id) FROM domain_admins da WHERE da.user_id = u.id), '[]'),
        'created', ${epoch("u.created")}) AS row, count(*) OVER () AS total
      FROM users u`

    const domainRow = sql`
      SELECT json_build_object(
        'id', d.id, 'account_id', d.account_id, 'domain', d.domain, 'status', d.status, 'has_ssl', d.has_ssl,
        'url_404', d.url_404, 'homepage', d.homepage,
        'links', (SELECT count(*) FROM links l WHERE l.domain_id = d.id AND l.status <> 'deleted'),
        'created', ${epoch("d.created")}) AS row, count(*) OVER () AS total
      FROM domains d`

    const linkRow = sql`
      SELECT json_build_object(
        'id', l.id, 'domain_id', l.domain_id, 'user_id', l.user_id, 'alias', l.alias, 'url', l.url,
        'status', l.status, 'redirect_type', l.redirect_type, 'click_count', l.click_count,
        'created', ${epoch("l.created")}) AS row, count(*) OVER () AS total
      FROM links l`

    const inAccount = (column: string, accountId: number | null) =>
      accountId === null ? sql`` : sql`WHERE ${sql(column)} = ${accountId}`

    const accounts = SqlSchema.findAll({
      Request: Page,
      Result: WithTotal(AccountSummary),
      execute: ({ limit, offset }) => sql`${accountRow} ORDER BY a.id LIMIT ${limit} OFFSET ${offset}`
    })
    const account = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ row: AccountSummary }),
      execute: (id) => sql`${accountRow} WHERE a.id = ${id}`
    })
    const users = SqlSchema.findAll({
      Request: ByAccount,
      Result: WithTotal(UserSummary),
      execute: ({ accountId, limit, offset }) =>
        sql`${userRow} ${inAccount("u.account_id", accountId)} ORDER BY u.id LIMIT ${limit} OFFSET ${offset}`
    })
    const user = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ row: UserSummary }),
      execute: (email) => sql`${userRow} WHERE lower(u.email) = lower(${email})`
    })
    const domains = SqlSchema.findAll({
      Request: ByAccount,
      Result: WithTotal(DomainSummary),
      execute: ({ accountId, limit, offset }) =>
        sql`${domainRow} ${inAccount("d.account_id", accountId)} ORDER BY d.id LIMIT ${limit} OFFSET ${offset}`
    })
    const domain = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ row: DomainSummary }),
      execute: (id) => sql`${domainRow} WHERE d.id = ${id}`
    })
    const links = SqlSchema.findAll({
      Request: Schema.Struct({ ...Page.fields, domainId: Schema.Int }),
      Result: WithTotal(LinkSummary),
      execute: ({ domainId, limit, offset }) =>
        sql`${linkRow} WHERE l.domain_id = ${domainId} ORDER BY l.id LIMIT ${limit} OFFSET ${offset}`
    })
    const link = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ row: LinkSummary }),
      execute: (id) => sql`${linkRow} WHERE l.id = ${id}`
    })
    const domainExists = (id: number) => Effect.map(sql`SELECT 1 FROM domains WHERE id = ${id}`, (rows) => rows.length > 0)

    return {
      accounts: (page: PageOf) => Effect.map(accounts(page), listing),
      account: (id: number) => Effect.map(account(id), Option.map(rowOf)),
      users: (accountId: number | null, page: PageOf) => Effect.map(users({ accountId, ...page }), listing),
      user: (email: string) => Effect.map(user(email), Option.map(rowOf)),
      domains: (accountId: number | null, page: PageOf) => Effect.map(domains({ accountId, ...page }), listing),
      domain: (id: number) => Effect.map(domain(id), Option.map(rowOf)),
      links: (domainId: number, page: PageOf) => Effect.map(links({ domainId, ...page }), listing),
      link: (id: number) => Effect.map(link(id), Option.map(rowOf)),
      domainExists
    } as const
  })
}) {}
