/**
 * The planner's slice of the account events: which accounts are disabled, and when each was last
 * enabled again. A disabled account's jobs are not planned at all; once enabled they start from
 * their next occurrence, so the disabled time is never caught up, not even after a restart. Pure.
 */
export type AccountStatusChange = { accountId: number; disabled: boolean; at: number; disabledAt?: number } | null;

export class AccountStatus {
  private readonly disabled = new Set<number>();
  /** Last enable time per account that was ever disabled: no occurrence before it counts. */
  private readonly enabledAt = new Map<number, number>();
  /** When each disabled account was disabled: its jobs' occurrences since are recorded as skipped once it is enabled. */
  private readonly disabledAt = new Map<number, number>();

  /** Applies one event of stream `account-<accountId>`; returns the change it made, if any. */
  apply(accountId: number, event: { type: string; data: { at?: number } }): AccountStatusChange {
    const at = event.data?.at ?? 0;
    if (event.type === 'AccountDisabled' && !this.disabled.has(accountId)) {
      this.disabled.add(accountId);
      this.disabledAt.set(accountId, at);
      return { accountId, disabled: true, at };
    }
    if (event.type === 'AccountEnabled' && this.disabled.has(accountId)) {
      this.disabled.delete(accountId);
      this.enabledAt.set(accountId, at);
      const disabledAt = this.disabledAt.get(accountId) ?? at;
      this.disabledAt.delete(accountId);
      return { accountId, disabled: false, at, disabledAt };
    }
    return null;
  }

  isDisabled(accountId: number): boolean {
    return this.disabled.has(accountId);
  }

  /** The instant before which none of the account's occurrences run (0: never disabled). */
  floorOf(accountId: number): number {
    return this.enabledAt.get(accountId) ?? 0;
  }
}
