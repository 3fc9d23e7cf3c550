import { setFlagsFromString } from "node:v8"

/**
 * V8's allocation-site pretenuring off, for every thread of the process: imported first by the
 * entry point, before the service allocates (embedders: `link-shortener/heap-flags`). Request bursts
 * at start (the API's, a cold cache's) made V8 tenure the object and array literals of node:http's
 * per-request objects, which then went straight to old space for good, about 150 bytes per
 * redirect, garbage only a mark-compact frees (docs/decisions/0024-redirect-old-space-growth.md).
 */
setFlagsFromString("--no-allocation-site-pretenuring")
