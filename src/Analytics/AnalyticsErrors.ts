import { Failure } from "../Platform/Failure.ts"

/** Analytics are part of the Team, Business and Enterprise plans; this is checked before anything else. */
export class PlanWithoutAnalytics extends Failure("PlanWithoutAnalytics", 10504) {}

/** `to_unix` before `from_unix`, or more than one calendar year after it. */
export class WindowInvalid extends Failure("WindowInvalid", 10502) {}

export class WindowEndWithoutStart extends Failure("WindowEndWithoutStart", 10503) {}

/** `user_id` neither `all` nor the id of a user of the caller's account. */
export class UserFilterInvalid extends Failure("UserFilterInvalid", 10506) {}

/**
 * `user_id` of another user of the account, or `all`: only callers who see all the domain's links
 * (account admins and admins of the domain) may count others' clicks.
 */
export class UserFilterForbidden extends Failure("UserFilterForbidden", 10003) {}

/** A filter whose value names nothing the caller sees (`label_id` of no visible tag of the domain); `of(parameter)`. */
export class FilterValueInvalid extends Failure("FilterValueInvalid", 10507) {}

/** A report not finished within ANALYTICS_TIMEOUT_SECONDS: stopped, its statement cancelled. */
export class ReportTooSlow extends Failure("ReportTooSlow", 10508) {}

/** The account already has ANALYTICS_CONCURRENCY_PER_ACCOUNT reports running: refused at once rather than queued. */
export class ReportsBusy extends Failure("ReportsBusy", 10901) {}
