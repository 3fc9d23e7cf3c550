import * as HttpServer from "@effect/platform/HttpServer"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import { Accounts } from "../Accounts/Accounts.ts"
import { AccountRepo } from "../Accounts/AccountRepo.ts"
import { UserRepo } from "../Accounts/UserRepo.ts"
import { Users } from "../Accounts/Users.ts"
import { Analytics } from "../Analytics/Analytics.ts"
import { AnalyticsRepo } from "../Analytics/AnalyticsRepo.ts"
import { BootstrapLive, coreLayer, httpLayer } from "../App.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { TokenStore } from "../Auth/TokenStore.ts"
import { ClickLog, type ClickLogOptions, clickLogDefaults } from "../Clicks/ClickLog.ts"
import { ClickNotifier } from "../Clicks/ClickNotifier.ts"
import { DomainRepo } from "../Domains/DomainRepo.ts"
import { Domains } from "../Domains/Domains.ts"
import { GroupRepo } from "../Groups/GroupRepo.ts"
import { Groups } from "../Groups/Groups.ts"
import { LinkRepo } from "../Links/LinkRepo.ts"
import { Links } from "../Links/Links.ts"
import { Scheduler } from "../Links/Scheduler.ts"
import { Mailer } from "../Platform/Mailer.ts"
import { RateLimiter } from "../Platform/RateLimiter.ts"
import { Shutdown } from "../Platform/Shutdown.ts"
import { TagRepo } from "../Tags/TagRepo.ts"
import { Tags } from "../Tags/Tags.ts"
import { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"
import { Dispatcher } from "../Webhooks/Dispatcher.ts"
import { CallerDatabaseLive } from "./CallerDatabase.ts"
import { Callers } from "./Callers.ts"

/** What `servicesLayer` gives: the use cases, the repositories beneath them, the click log and access tokens' callers. */
export type EmbeddedServices =
  | Links
  | Domains
  | Analytics
  | Tags
  | Groups
  | Users
  | Accounts
  | Sessions
  | Callers
  | Scheduler
  | TokenStore
  | RateLimiter
  | ClickLog
  | LinkRepo
  | DomainRepo
  | AnalyticsRepo
  | TagRepo
  | UtmTemplateRepo
  | GroupRepo
  | UserRepo
  | AccountRepo

/**
 * Only the services the embedder asked for leave the layer: the service's own `SqlClient` (int8
 * as numbers) stays under it, so it never replaces the caller's.
 */
const PickedServicesLive = Layer.effectContext(
  Effect.map(
    Effect.context<EmbeddedServices>(),
    Context.pick(
      Links,
      Domains,
      Analytics,
      Tags,
      Groups,
      Users,
      Accounts,
      Sessions,
      Callers,
      Scheduler,
      TokenStore,
      RateLimiter,
      ClickLog,
      LinkRepo,
      DomainRepo,
      AnalyticsRepo,
      TagRepo,
      UtmTemplateRepo,
      GroupRepo,
      UserRepo,
      AccountRepo
    )
  )
)

/** The click log with its writer thread, and the click notifications it drives. */
const clickLogLayer = (options: ClickLogOptions) =>
  ClickLog.layerWith(options).pipe(Layer.provide(ClickNotifier.Default.pipe(Layer.provide(Mailer.layer))))

/**
 * The services over `database`, with the schema migrated, the scheduler sweeping, the click writer
 * started and webhook deliveries going out: the embedder's link changes and clicks queue webhook
 * events (database triggers), which this process then sends like every serving instance.
 */
export const servicesLayerOver = <R>(database: Layer.Layer<Layer.Layer.Success<typeof CallerDatabaseLive>, SqlError, R>, clicks: ClickLogOptions = clickLogDefaults) =>
  PickedServicesLive.pipe(Layer.provide(Layer.mergeAll(Callers.Default, clickLogLayer(clicks), Dispatcher.Default).pipe(Layer.provideMerge(coreLayer(database)))))

/**
 * Every service of the link API over the database the caller's `PgClient` reaches (its schema
 * migrated first), given `AppConfig`, with the webhook dispatcher sending deliveries. Closing the
 * layer writes the queued clicks and stops the scheduler, the dispatcher and the click writer thread.
 */
export const servicesLayer = (clicks: ClickLogOptions = clickLogDefaults) => servicesLayerOver(CallerDatabaseLive, clicks)

export interface ServerOptions {
  /** Where to listen; `PORT` and `HOST` of `AppConfig` otherwise. Port 0 takes a free port. */
  readonly listen?: { readonly port: number; readonly host: string }
}

/**
 * The whole HTTP server of the service (redirects, /api/v4, /api/v3, OpenAPI, docs UI, probes,
 * metrics) on a listener of its own, over the database the caller's `PgClient` reaches, given
 * `AppConfig`. On a database without users it creates the first account and its admin
 * (`ADMIN_EMAIL`, `ADMIN_PASSWORD`). It gives `HttpServer` (the address it listens on) and `Shutdown`
 * (request the drain a stop begins with); closing the layer stops the listener and writes the queued clicks.
 */
export const serverLayer = (options: ServerOptions = {}) =>
  Layer.effectContext(Effect.map(Effect.context<HttpServer.HttpServer | Shutdown>(), Context.pick(HttpServer.HttpServer, Shutdown))).pipe(
    Layer.provide(
      httpLayer(options.listen).pipe(
        Layer.provide(BootstrapLive),
        Layer.provideMerge(Shutdown.layer),
        Layer.provideMerge(coreLayer(CallerDatabaseLive))
      )
    )
  )
