import { Failure } from "../Platform/Failure.ts"

/** A `group_id` naming no group the caller sees on the domain: missing, another domain's, or not visible. */
export class GroupNotFound extends Failure("GroupNotFound", 10160) {}
