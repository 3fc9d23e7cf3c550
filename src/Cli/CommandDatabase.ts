import { Layer } from "effect"
import { AdminDatabaseLive } from "../Sql/Database.ts"
import { migrateIfBehind } from "../Sql/Migrator.ts"

/** The configured database under each command's services, migrated first when it lacks a migration of this release. */
export const CommandDatabaseLive = Layer.effectDiscard(migrateIfBehind).pipe(Layer.provideMerge(AdminDatabaseLive))
