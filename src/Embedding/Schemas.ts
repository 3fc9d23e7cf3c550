/** The domain's schemas: what the API answers with and what the services take and return. */
export { AccountUser, UserDomain } from "../Accounts/AccountUser.ts"
export { type Caller, Plan, Role, User } from "../Accounts/User.ts"
export {
  CityRow,
  ClickedLink,
  CountryRow,
  DayRow,
  DeviceRow,
  HourRow,
  LinkTotals,
  RawClick,
  ReferrerRow,
  RegionRow
} from "../Analytics/AnalyticsRows.ts"
export { Domain, DomainStatus } from "../Domains/Domain.ts"
export { Group } from "../Groups/Group.ts"
export { Link, LinkStatus, LinkTag } from "../Links/Link.ts"
export { CreateLink, type CreateLinkInput, ValidateLink } from "../Links/LinkFields.ts"
export { Tag } from "../Tags/Tag.ts"
