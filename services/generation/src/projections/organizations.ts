/** What generation learns of organizations from the gateway's events: their runs switch. */
export const ORGANIZATIONS = 'organizations';
export interface OrganizationDoc {
  id: string;
  /** Absent until the switch is first changed: runs are on. */
  runs_enabled?: boolean;
}
