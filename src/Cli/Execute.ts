import { Effect } from "effect"
import { type Command, INVENTORY_COMMANDS, type InventoryCommand } from "./Command.ts"

/** A command that needs the database; loaded only then. */
export type DatabaseCommand = Exclude<Command, { readonly _tag: "Help" | "Version" }>

const inventoryTags: ReadonlySet<string> = new Set(INVENTORY_COMMANDS)

const isInventoryCommand = (command: DatabaseCommand): command is InventoryCommand => inventoryTags.has(command._tag)

/**
 * Each command loads the modules of its own kind only: a list or show command none of the services
 * that change data (hashing threads, import, export, webhooks).
 */
export const execute = (command: DatabaseCommand) =>
  isInventoryCommand(command)
    ? Effect.flatMap(Effect.promise(() => import("./InventoryCommands.ts")), ({ inventoryCommand }) => inventoryCommand(command))
    : Effect.flatMap(Effect.promise(() => import("./ServiceCommands.ts")), ({ serviceCommand }) => serviceCommand(command))

/** Every command's modules, for the build's code cache. */
export const loadAll = () => Promise.all([import("./InventoryCommands.ts"), import("./ServiceCommands.ts")])
