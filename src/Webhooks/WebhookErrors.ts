import { Failure } from "../Platform/Failure.ts"

/** A member who administers neither the account nor the domain. */
export class NotWebhookAdmin extends Failure("NotWebhookAdmin", 10800) {}

/** A webhook that does not exist or is another domain's: both answer the same. */
export class WebhookNotFound extends Failure("WebhookNotFound", 10801) {}

export class DeliveryNotFound extends Failure("DeliveryNotFound", 10806) {}

export class TooManyWebhooks extends Failure("TooManyWebhooks", 10808) {}

export class NothingToUpdate extends Failure("NothingToUpdate", 10809) {}
