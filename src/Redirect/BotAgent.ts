import { isbot } from "isbot"
import { MAX_USER_AGENT, stringMemo } from "../Clicks/ClickSource.ts"

/**
 * `test` (isbot) of a request's user agent, remembered for at most `limit` agents (and the 1,024 of
 * `stringMemo`'s front table): the regular expression costs about 2 µs a visit and a visitor
 * population repeats its agents heavily. Agents longer than MAX_USER_AGENT are tested every time, so
 * that no client grows the memo's keys.
 */
export const botAgentTest = (limit: number, test: (userAgent: string) => boolean = isbot) => {
  const known = stringMemo(limit, test)
  return (userAgent: string | undefined): boolean => {
    const agent = userAgent ?? ""
    return agent.length <= MAX_USER_AGENT ? known(agent) : test(agent)
  }
}
