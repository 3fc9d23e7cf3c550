import { Failure } from "../Platform/Failure.ts"

/** A domain that does not exist, or is not the caller's account's: both answer the same. */
export class DomainNotFound extends Failure("DomainNotFound", 10101) {}

export class DomainExists extends Failure("DomainExists", 10401) {}

export class UpdateOperationUnsupported extends Failure("UpdateOperationUnsupported", 10404) {}

export class UpdatePathUnsupported extends Failure("UpdatePathUnsupported", 10405) {}

export class UpdateValueInvalid extends Failure("UpdateValueInvalid", 10406) {}
