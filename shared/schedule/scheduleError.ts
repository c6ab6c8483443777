/**
 * A schedule that cannot be accepted. `field` names the job parameter at fault (the gateway turns
 * it into error code 3 naming that parameter); the message says what is wrong and where.
 */
export class ScheduleError extends Error {
  constructor(
    readonly field: 'expression' | 'filter' | 'timezone' | 'dstGap' | 'dstOverlap',
    message: string,
  ) {
    super(message);
    this.name = 'ScheduleError';
  }
}
