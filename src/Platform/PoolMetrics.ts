import type pg from "pg"
import { type Family, gaugeFamily } from "./Collectors.ts"

/** The main thread's database pool as it stands: connections in use and idle, requests waiting for one, its size. */
export const poolFamilies = (pool: pg.Pool): ReadonlyArray<Family> => [
  gaugeFamily("db_pool_connections", "Connections of the main thread's database pool, in use (checked out) or idle", [
    ['state="in_use"', pool.totalCount - pool.idleCount],
    ['state="idle"', pool.idleCount]
  ]),
  gaugeFamily("db_pool_waiting_requests", "Queries waiting for a connection of the main thread's database pool", pool.waitingCount),
  gaugeFamily("db_pool_max_connections", "Connections the main thread's database pool may open (DB_POOL_SIZE; 1 on the embedded database)", pool.options.max ?? 10)
]
