/** The error catalogue (every code the service answers) and the typed failures its services fail with. */
export { ErrorCatalogue, type ErrorCode, type ErrorEntry, type ErrorStatus, formatMessage, isErrorCode } from "../Platform/ErrorCatalogue.ts"
export { ApiError, ErrorItem } from "../Platform/ApiError.ts"
export { type CodedFailure, InvalidInput, isCodedFailure } from "../Platform/Failure.ts"
export { NotAccountAdmin } from "../Accounts/AccountErrors.ts"
export { AdminError } from "../Accounts/AdminError.ts"
export {
  FilterValueInvalid,
  PlanWithoutAnalytics,
  ReportsBusy,
  ReportTooSlow,
  UserFilterForbidden,
  UserFilterInvalid,
  WindowEndWithoutStart,
  WindowInvalid
} from "../Analytics/AnalyticsErrors.ts"
export { InvalidCredentials, InvalidToken, LoginsBusy, UnknownUser, WeakPassword } from "../Auth/AuthErrors.ts"
export { DomainExists, DomainNotFound, UpdateOperationUnsupported, UpdatePathUnsupported, UpdateValueInvalid } from "../Domains/DomainErrors.ts"
export { ExportForbidden, ExportWindowMissing, ExportWindowReversed, ExportWindowTooLong } from "../Export/ExportErrors.ts"
export { GroupNotFound } from "../Groups/GroupErrors.ts"
export { AliasTaken, AliasTakenOnUpdate, LinkNotFound, NoFreeAlias, NotDomainAdmin, QuotaReached, UtmTemplateNotFound } from "../Links/LinkErrors.ts"
export { TagDomainNotFound, TagNameExists, UtmTemplateDomainNotFound } from "../Tags/TagErrors.ts"
