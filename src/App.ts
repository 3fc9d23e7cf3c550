import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Logger, LogLevel, Option, Redacted, Runtime } from "effect"
import { randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Api, ApiV3Docs } from "./Api.ts"
import { docsPageLayer } from "./Platform/DocsPage.ts"
import { DOCS_PATH, OPENAPI_PATH, V3_DOCS_PATH } from "./Platform/PagePaths.ts"
import { AppConfig } from "./Config.ts"
import { ApiMiddlewareLive } from "./Platform/ApiMiddleware.ts"
import { AuthenticationLive } from "./Auth/AuthenticationLive.ts"
import { DomainAccess } from "./Domains/DomainAccess.ts"
import { Domains } from "./Domains/Domains.ts"
import { Links } from "./Links/Links.ts"
import { Tags } from "./Tags/Tags.ts"
import { Sessions } from "./Auth/Sessions.ts"
import { Analytics } from "./Analytics/Analytics.ts"
import { AnalyticsHttpLive } from "./Analytics/AnalyticsHttp.ts"
import { Export } from "./Export/Export.ts"
import { ExportCsv } from "./Export/ExportCsv.ts"
import { ExportHttpLive } from "./Export/ExportHttp.ts"
import { AuthHttpLive } from "./Auth/AuthHttp.ts"
import { DomainsHttpLive } from "./Domains/DomainsHttp.ts"
import { ErrorCodesHttpLive } from "./Operations/ErrorCodesHttp.ts"
import { LinkSearchHttpLive } from "./Links/LinkSearchHttp.ts"
import { LinksHttpLive } from "./Links/LinksHttp.ts"
import { TagsHttpLive } from "./Tags/TagsHttp.ts"
import { Groups } from "./Groups/Groups.ts"
import { GroupRepo } from "./Groups/GroupRepo.ts"
import { GroupsHttpLive } from "./Groups/GroupsHttp.ts"
import { Users } from "./Accounts/Users.ts"
import { UsersHttpLive } from "./Accounts/UsersHttp.ts"
import { type LateFor, makeNodeServer } from "./Platform/NodeServer.ts"
import { redactedTarget } from "./Platform/RequestUrl.ts"
import { JsonLoggerLive } from "./Platform/JsonLogger.ts"
import { recordRedirectLatency, recordUnavailable } from "./Platform/Metrics.ts"
import { processMetrics } from "./Platform/ProcessMetrics.ts"
import { redirectLine } from "./Platform/AccessLog.ts"
import { redirectSpans, serverSpanName, untracedRequest } from "./Platform/Tracing.ts"
import { OperationsHttpLive } from "./Operations/OperationsHttp.ts"
import { AccountRepo } from "./Accounts/AccountRepo.ts"
import { DomainRepo } from "./Domains/DomainRepo.ts"
import { LinkRepo } from "./Links/LinkRepo.ts"
import { AnalyticsRepo } from "./Analytics/AnalyticsRepo.ts"
import { TagRepo } from "./Tags/TagRepo.ts"
import { UserRepo } from "./Accounts/UserRepo.ts"
import { UtmTemplateRepo } from "./Tags/UtmTemplateRepo.ts"
import { Accounts } from "./Accounts/Accounts.ts"
import { LoginThrottle } from "./Auth/LoginThrottle.ts"
import { Passwords } from "./Auth/Passwords.ts"
import { RateLimiter } from "./Platform/RateLimiter.ts"
import { Scheduler } from "./Links/Scheduler.ts"
import { Shutdown } from "./Platform/Shutdown.ts"
import { TokenSecret, TokenStore } from "./Auth/TokenStore.ts"
import { QrRenderer } from "./Links/QrRenderer.ts"
import { UrlChecker } from "./Links/UrlChecker.ts"
import { migrate } from "./Sql/Migrator.ts"
import { ChangeFeed } from "./Sql/ChangeFeed.ts"
import type { DatabasePool } from "./Sql/Database.ts"
import { ClickLog } from "./Clicks/ClickLog.ts"
import { HourlyRollupPruner } from "./Clicks/HourlyRollupPruner.ts"
import { ClickNotifier } from "./Clicks/ClickNotifier.ts"
import { Mailer } from "./Platform/Mailer.ts"
import { RedirectHandler } from "./Redirect/RedirectHandler.ts"
import { Webhooks } from "./Webhooks/Webhooks.ts"
import { WebhooksHttpLive } from "./Webhooks/WebhooksHttp.ts"
import { Dispatcher } from "./Webhooks/Dispatcher.ts"
import { ClickLimits } from "./Redirect/ClickLimits.ts"
import { PasswordAttemptLimits } from "./Redirect/PasswordAttemptLimits.ts"
import { Settings } from "./SmartLinks/Settings.ts"
import { DestinationChangedLive, PreviewTags } from "./SmartLinks/PreviewTags.ts"
import { SettingsHttpLive } from "./SmartLinks/SettingsHttp.ts"

/** The database with its schema migrated, and every service of the link API on top of it. */
export const coreLayer = <R>(database: Layer.Layer<SqlClient.SqlClient | DatabasePool, SqlError, R>) => {
  const migrated = Layer.effectDiscard(migrate).pipe(Layer.provideMerge(database))
  const repos = Layer.mergeAll(
    AccountRepo.Default,
    UserRepo.Default,
    DomainRepo.Default,
    UtmTemplateRepo.Default,
    LinkRepo.Default,
    TagRepo.Default,
    GroupRepo.Default,
    AnalyticsRepo.Default
  )
  const services = Layer.mergeAll(
    TokenStore.Default,
    LoginThrottle.Default,
    Passwords.layer,
    RateLimiter.layer,
    UrlChecker.layer,
    QrRenderer.Default,
    DomainAccess.Default
  ).pipe(Layer.provideMerge(TokenSecret.Default), Layer.provideMerge(ChangeFeed.Default))
  const topLevel = Layer.mergeAll(Accounts.Default, Scheduler.Default, HourlyRollupPruner.Default, Domains.DefaultWithoutDependencies, Analytics.DefaultWithoutDependencies, Tags.DefaultWithoutDependencies, Sessions.DefaultWithoutDependencies, Links.DefaultWithoutDependencies, Users.DefaultWithoutDependencies, Export.DefaultWithoutDependencies.pipe(Layer.provide(ExportCsv.Default)), Webhooks.Default).pipe(
    // Links refetch the preview tags of a new destination; the same PreviewTags serves the settings.
    Layer.provide(DestinationChangedLive.pipe(Layer.provide(PreviewTags.Default)))
  )
  // Links and Analytics filter by group: Groups sits under them.
  return Settings.Default.pipe(
    Layer.provideMerge(topLevel),
    Layer.provideMerge(Groups.DefaultWithoutDependencies),
    Layer.provideMerge(services),
    Layer.provideMerge(repos),
    Layer.provideMerge(migrated)
  )
}

/** On a database with no user: the first account (plan enterprise) and its admin. */
export const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const accounts = yield* Accounts
    const email = Option.getOrElse(config.adminEmail, () => "admin@example.com")
    const generated = Option.isNone(config.adminPassword)
    const password = Option.match(config.adminPassword, {
      onNone: () => randomBytes(18).toString("base64url"),
      onSome: Redacted.value
    })
    const created = yield* accounts.bootstrap(email, password)
    if (Option.isNone(created)) return
    yield* Effect.logInfo(`created the first account and its admin ${email}`)
    if (generated) {
      process.stdout.write(`\nFirst start: admin ${email} with the generated password ${password}\n(shown once; set ADMIN_EMAIL and ADMIN_PASSWORD to choose them)\n\n`)
    }
  }).pipe(Effect.orDie)
)

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([AnalyticsHttpLive, AuthHttpLive, DomainsHttpLive, ErrorCodesHttpLive, LinksHttpLive, LinkSearchHttpLive, TagsHttpLive, OperationsHttpLive, UsersHttpLive, GroupsHttpLive, ExportHttpLive, WebhooksHttpLive, SettingsHttpLive]),
  Layer.provide(AuthenticationLive)
)

/** The redirect hot path and the click pipeline behind it (its writer on a thread of its own); the CLI does without them. */
const RedirectLive = RedirectHandler.layer.pipe(
  Layer.provideMerge(ClickLimits.layer),
  Layer.provideMerge(PasswordAttemptLimits.layer),
  Layer.provideMerge(ClickLog.layer),
  Layer.provideMerge(ClickNotifier.Default.pipe(Layer.provideMerge(Mailer.layer)))
)

/**
 * The HTTP listener on `HOST:PORT` (or the given listen options): redirects for registered short
 * domains first, then the API, OpenAPI document and docs UI.
 */
export const httpLayer = (listen?: { readonly port: number; readonly host: string }) =>
  Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      HttpApiBuilder.serve().pipe(
        // Without a span exporter, a span per request would be pure cost
        // (docs/decisions/0008-process-and-operations.md).
        HttpMiddleware.withTracerDisabledWhen(untracedRequest(config)),
        HttpMiddleware.withSpanNameGenerator(serverSpanName())
      )
    )
  ).pipe(
    Layer.provide(docsPageLayer(DOCS_PATH, Api)),
    Layer.provide(docsPageLayer(V3_DOCS_PATH, ApiV3Docs)),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH })),
    Layer.provide(ApiMiddlewareLive),
    Layer.provide(ApiLive),
    Layer.provideMerge(
      Layer.unwrapEffect(
        Effect.gen(function* () {
          const config = yield* AppConfig
          const redirects = yield* RedirectHandler
          const shutdown = yield* Shutdown
          const log = Runtime.runFork(yield* Effect.runtime<never>())
          const debug = LogLevel.lessThanEqual(config.logLevel, LogLevel.Debug)
          const traceRedirect = redirectSpans(config, yield* Effect.tracer)
          const onDeadline = (request: IncomingMessage, late: LateFor) => {
            if (late === "answer") recordUnavailable("deadline")
            log(
              Effect.logWarning(
                late === "body"
                  ? `${request.method} ${redactedTarget(request.url ?? "/")}: the client did not send its body within API_DEADLINE_SECONDS (${config.apiDeadlineSeconds} s): 408`
                  : `${request.method} ${redactedTarget(request.url ?? "/")} not answered within API_DEADLINE_SECONDS (${config.apiDeadlineSeconds} s): 503, the database is not answering`
              )
            )
          }
          // Redirects are logged at debug only: at info they would be most of the log, and cost.
          const onRedirect = (request: IncomingMessage, response: ServerResponse, seconds: number) => {
            recordRedirectLatency(seconds)
            if (response.statusCode === 503) recordUnavailable("database_unavailable")
            if (debug) log(redirectLine(request, response, seconds, config.trustProxy))
            if (traceRedirect !== undefined) traceRedirect(request, response, seconds)
          }
          return NodeHttpServer.layer(
            () => makeNodeServer({ apiDeadline: config.apiDeadlineSeconds * 1000 }, redirects.handle, onDeadline, shutdown, onRedirect),
            listen ?? { port: config.port, host: config.host }
          )
        })
      )
    ),
    Layer.provideMerge(RedirectLive),
    // Webhook deliveries go out from serving instances only, never from the admin CLI.
    Layer.provideMerge(Dispatcher.Default),
    Layer.provideMerge(Layer.scopedDiscard(processMetrics))
  )

export const LoggerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => Layer.merge(JsonLoggerLive, Logger.minimumLogLevel(config.logLevel)))
)
