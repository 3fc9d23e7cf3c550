/**
 * The service as a library: its HTTP server and its services as Layers over the caller's `PgClient`,
 * the HTTP API's definition, the error catalogue and typed failures, the domain's schemas.
 */
export { serverLayer, type ServerOptions, servicesLayer, type EmbeddedServices } from "./Layers.ts"
export { connectionOf, CallerDatabaseLive } from "./CallerDatabase.ts"
export { AppConfig, type AppConfigShape, appConfig, environment } from "../Config.ts"
export { Shutdown, ShutdownState } from "../Platform/Shutdown.ts"

export { Accounts, type NewUser } from "../Accounts/Accounts.ts"
export { AccountRepo } from "../Accounts/AccountRepo.ts"
export { UserRepo } from "../Accounts/UserRepo.ts"
export { Users } from "../Accounts/Users.ts"
export { Analytics } from "../Analytics/Analytics.ts"
export { AnalyticsRepo } from "../Analytics/AnalyticsRepo.ts"
export type { Bearer } from "../Auth/Authentication.ts"
export { Callers } from "./Callers.ts"
export { type Session, Sessions, type TokenRequest } from "../Auth/Sessions.ts"
export { ACCESS_TOKEN_LIFETIME_SECONDS, TokenStore } from "../Auth/TokenStore.ts"
export { ClickLog, type ClickLogOptions, clickLogDefaults, type RawClick as ClickEvent } from "../Clicks/ClickLog.ts"
export { type CreateDomainInput, type DomainOperation, Domains } from "../Domains/Domains.ts"
export { DomainRepo } from "../Domains/DomainRepo.ts"
export { GroupRepo } from "../Groups/GroupRepo.ts"
export { Groups } from "../Groups/Groups.ts"
export { LinkRepo } from "../Links/LinkRepo.ts"
export { Links } from "../Links/Links.ts"
export { Scheduler, SWEEP_INTERVAL } from "../Links/Scheduler.ts"
export { RateLimiter } from "../Platform/RateLimiter.ts"
export { TagRepo } from "../Tags/TagRepo.ts"
export { Tags } from "../Tags/Tags.ts"
export { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"

export * from "./Client.ts"
