import { Failure } from "../Platform/Failure.ts"

/**
 * T1, T2: the domain named by `domain_id` does not exist or is not the caller's account's: 404, where
 * the catalogue's 400 for its code is for a `domain_id` that is no id.
 */
export class TagDomainNotFound extends Failure("TagDomainNotFound", 10301, 404) {}

/** Tag names are unique per domain, ignoring case. */
export class TagNameExists extends Failure("TagNameExists", 10308) {}

/**
 * E15, and a UTM template created by the admin CLI: the domain named by `domain_id` does not exist
 * or is not the caller's account's: 404, like `TagDomainNotFound`.
 */
export class UtmTemplateDomainNotFound extends Failure("UtmTemplateDomainNotFound", 10201, 404) {}
