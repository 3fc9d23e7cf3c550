import { Effect, Layer, Match, Option } from "effect"
import { AdminError } from "../Accounts/AdminError.ts"
import { Inventory, type Listing } from "../Operations/Inventory.ts"
import { type InventoryCommand, PAGE_SIZE } from "./Command.ts"
import { CommandDatabaseLive } from "./CommandDatabase.ts"
import { fieldsOf, type Outcome } from "./Outcome.ts"
import { record, table } from "./Table.ts"

const InventoryLive = Inventory.Default.pipe(Layer.provideMerge(CommandDatabaseLive))

const withInventory = <A, E>(f: (inventory: Inventory) => Effect.Effect<A, E, never>) =>
  Effect.provide(Effect.flatMap(Inventory, f), InventoryLive)

const pageOf = (page: number) => ({ limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE })

/** A page of a list: `{objects, meta}` as `--json`, else a table and where it stands. */
const listed = <A extends object>(what: string, page: number, columns: ReadonlyArray<string>) => (listing: Listing<A>): Outcome => {
  const rows = listing.objects.map(fieldsOf)
  const lastPage = Math.max(1, Math.ceil(listing.total / PAGE_SIZE))
  const where = listing.total === 0 ? `no ${what}` : `page ${page} of ${lastPage}, ${listing.total} ${what} in all`
  return {
    json: { objects: rows, meta: { page, per_page: PAGE_SIZE, total: listing.total, last_page: lastPage } },
    text: rows.length === 0 ? where : `${table(rows, columns)}\n(${where})`
  }
}

/** One record, or `missing` said in one line. */
const shown = <A extends object>(missing: string) => (found: Option.Option<A>) =>
  Option.match(found, {
    onNone: () => Effect.fail(new AdminError({ message: missing })),
    onSome: (row): Effect.Effect<Outcome> => {
      const json = fieldsOf(row)
      return Effect.succeed({ json, text: record(json) })
    }
  })

/** The list and show commands: reads through `Inventory` alone, so they load none of the API's services. */
export const inventoryCommand = (command: InventoryCommand) =>
  Match.valueTags(command, {
    AccountList: ({ page }) =>
      withInventory((inventory) => inventory.accounts(pageOf(page))).pipe(
        Effect.map(listed("accounts", page, ["id", "name", "plan", "link_quota", "users", "domains", "links", "created"]))
      ),

    AccountShow: ({ accountId }) => withInventory((inventory) => inventory.account(accountId)).pipe(Effect.flatMap(shown(`there is no account ${accountId}`))),

    UserList: ({ accountId, page }) =>
      withInventory((inventory) => inventory.users(accountId, pageOf(page))).pipe(
        Effect.map(listed("users", page, ["user_id", "account_id", "email", "nickname", "role", "disabled", "links", "created"]))
      ),

    UserShow: ({ email }) => withInventory((inventory) => inventory.user(email)).pipe(Effect.flatMap(shown(`there is no user with the e-mail ${email}`))),

    DomainList: ({ accountId, page }) =>
      withInventory((inventory) => inventory.domains(accountId, pageOf(page))).pipe(
        Effect.map(listed("domains", page, ["id", "account_id", "domain", "status", "has_ssl", "links", "created"]))
      ),

    DomainShow: ({ domainId }) => withInventory((inventory) => inventory.domain(domainId)).pipe(Effect.flatMap(shown(`there is no domain ${domainId}`))),

    LinkList: ({ domainId, page }) =>
      withInventory((inventory) =>
        Effect.gen(function* () {
          if (!(yield* inventory.domainExists(domainId))) return yield* new AdminError({ message: `there is no domain ${domainId}` })
          return yield* inventory.links(domainId, pageOf(page))
        })
      ).pipe(Effect.map(listed("links", page, ["id", "alias", "status", "user_id", "click_count", "created", "url"]))),

    LinkShow: ({ linkId }) => withInventory((inventory) => inventory.link(linkId)).pipe(Effect.flatMap(shown(`there is no link ${linkId}`)))
  })
