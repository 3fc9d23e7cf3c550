import { Option } from "effect"
import { ErrorCatalogue, type ErrorCode, formatMessage } from "../Platform/ErrorCatalogue.ts"
import { Failure, InvalidInput } from "../Platform/Failure.ts"

/** A link that does not exist, is deleted, or is another user's that the caller may not see: all answer the same. */
export class LinkNotFound extends Failure("LinkNotFound", 10150) {}

/** E4: the alias given is another link's on the domain (ignoring case). */
export class AliasTaken extends Failure("AliasTaken", 10104) {}

/** E12: the new alias is another link's on the domain (ignoring case); the message is the alias. */
export class AliasTakenOnUpdate extends Failure("AliasTakenOnUpdate", 10140) {}

/** E4: the account has as many links as its plan allows. */
export class QuotaReached extends Failure("QuotaReached", 10144) {}

/** E4: `utm_template_id` names no template of the domain; reported among the other input problems. */
export class UtmTemplateNotFound extends Failure("UtmTemplateNotFound", 10109) {}

/** E4: every generated alias tried was taken (a failure to save the link, 500). */
export class NoFreeAlias extends Failure("NoFreeAlias", 10142) {}

/** E6 `users=all`: only account admins and admins of the domain see every user's links. */
export class NotDomainAdmin extends Failure("NotDomainAdmin", 10003) {}

/** One problem of a link's input: the catalogue code of the rule a field breaks, and its message. */
export interface InputProblem {
  readonly code: ErrorCode
  readonly message: string
}

export const problem = (code: ErrorCode, ...values: ReadonlyArray<string>): InputProblem => ({
  code,
  message: formatMessage(ErrorCatalogue[code].message, values)
})

/** Every problem of a request in one `InvalidInput`, in the order given; none when there is none. */
export const invalidInputOf = (problems: ReadonlyArray<InputProblem>): Option.Option<InvalidInput> => {
  const [first, ...rest] = problems.map(({ code, message }) => ({ code, message }))
  return first === undefined ? Option.none() : Option.some(new InvalidInput({ problems: [first, ...rest] }))
}
