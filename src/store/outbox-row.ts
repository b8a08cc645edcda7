// The columns every outbox row has (webhook deliveries, mails, logout tokens: ./outbox.ts claims and
// settles them alike), with what each is done as `Done` ('delivered', 'sent').
export interface OutboxRow<Done extends string> {
  status: 'pending' | Done | 'failed';
  /** Attempts made, ever: the number of the last one logged. */
  attempts: number;
  /** The attempts made before the last redelivery: the retry schedule counts from here. */
  retry_base: number;
  next_attempt_at: number;
  /** While an instance is attempting it: no other takes it until then. */
  locked_until: number | null;
  created_at: number;
  last_error: string | null;
  finished_at: number | null;
}

/** OutboxRow's columns, as the column lists of the mails and the logout tokens end (./columns.ts). */
export const OUTBOX_COLUMNS =
  'status attempts retry_base next_attempt_at locked_until created_at last_error finished_at';
