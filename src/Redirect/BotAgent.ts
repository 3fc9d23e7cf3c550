import { isbot } from "isbot"
import { boundedMemo, MAX_USER_AGENT } from "../Clicks/ClickSource.ts"

/**
 * `test` (isbot) of a request's user agent, remembered for at most `limit` agents: the regular
 * expression costs about 2 µs a visit and a visitor population repeats its agents heavily. Agents
 * longer than MAX_USER_AGENT are tested every time, so that no client grows the memo's keys.
 */
export const botAgentTest = (limit: number, test: (userAgent: string) => boolean = isbot) => {
  const known = boundedMemo(limit, test)
  return (userAgent: string | undefined): boolean => {
    const agent = userAgent ?? ""
    return agent.length <= MAX_USER_AGENT ? known(agent) : test(agent)
  }
}
