import { Failure } from "../Platform/Failure.ts"

/** What only account admins may do (create, change and delete domains, list the users). */
export class NotAccountAdmin extends Failure("NotAccountAdmin", 10003) {}
