// Restores detected without `tessera restore-finish` (docs/backup.md#restores-detected): at start and
// every TESSERA_RESTORE_CHECK_INTERVAL, never per request, an instance reads the database's activity
// mark and PostgreSQL's timeline, compares them with what it (or the previous start here,
// ./local-mark.ts) last saw (./detect.ts), and bumps the mark. A database gone back is fenced as
// restore-finish fences it, once however many instances notice (src/store/restore-watch.ts), and
// said at warn. A fault of the database during a check is no detection: the next check tries again.
import { type Requester, securityEvent } from '../events/index.ts';
import { DatabaseUnavailable } from '../store/faults.ts';
import type { RestoreWatchState, RestoreWatchStore } from '../store/restore-watch.ts';
import type { RestoreFence, RestoreStore } from '../store/restores.ts';
import { newId } from '../tokens/opaque.ts';
import { type Detected, detectRestore, type Seen } from './detect.ts';
import { readLocalMark, writeLocalMark } from './local-mark.ts';

export interface WatchLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const isoTime = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

const REQUESTER: Requester = { ip: null, userAgent: 'tessera server' };

/** What a check found: the fence it wrote, if it fenced, and why. */
export interface CheckOutcome {
  fence?: RestoreFence;
  detected?: Detected[];
}

export class RestoreWatch {
  readonly #store: RestoreWatchStore & RestoreStore;
  readonly #options: { file: string | undefined; fenceNewTimeline: boolean; log: WatchLog; now: () => number };
  #seen: Seen | undefined;
  /** Whether #seen came from the local mark of the previous start rather than this instance's own check. */
  #fromFile = false;
  #checked = false;
  #warned = new Set<string>();
  /** This process, as the mark records who bumped it last (./detect.ts). */
  readonly #by = newId();

  constructor(
    store: RestoreWatchStore & RestoreStore,
    options: { file: string | undefined; fenceNewTimeline: boolean; log: WatchLog; now?: () => number },
  ) {
    this.#store = store;
    this.#options = { ...options, now: options.now ?? (() => Math.floor(Date.now() / 1000)) };
  }

  /** The restore epoch as of the last check (undefined before one succeeded). */
  get epoch(): string | undefined {
    return this.#seen?.epoch;
  }

  /** One check; never throws (a fault is logged and the next check tries again). */
  async check(): Promise<CheckOutcome> {
    try {
      return await this.#check();
    } catch (err) {
      const { message } = err as Error;
      this.#options.log.error(
        { err: { message } },
        `restore check failed (the database's fault, not a restore), tried again at the next check: ${message}`,
      );
      return {};
    }
  }

  async #check(): Promise<CheckOutcome> {
    const { log, file } = this.#options;
    if (!this.#checked && file) {
      this.#checked = true;
      this.#seen = await readLocalMark(file).catch((err: Error) => {
        this.#warnOnce(
          'read',
          { file },
          `cannot read the restore watch mark ${file} (${err.message}): starting without it`,
        );
        return undefined;
      });
      this.#fromFile = this.#seen !== undefined;
    }
    this.#checked = true;
    const timeline = await this.#timeline();
    const now = this.#options.now();
    const state = await this.#store.readRestoreWatch({
      newDatabase: newId(),
      knownEpoch: this.#seen?.epoch ?? '',
      now,
    });
    const verdict = detectRestore({
      state,
      seen: this.#seen,
      timeline,
      fenceNewTimeline: this.#options.fenceNewTimeline,
    });
    let outcome: CheckOutcome = {};
    if (verdict.kind === 'restored') {
      const id = newId();
      const event = securityEvent('database.restored', now, {
        requester: REQUESTER,
        data: {
          fence: id,
          finished_by: verdict.detected.length === 1 && verdict.detected[0] === 'backup' ? 'start' : 'detection',
          detected: verdict.detected,
        },
      });
      const written = await this.#store.fenceDetectedRestore({
        id,
        now,
        event,
        when: verdict.conditions,
        timeline,
        by: this.#by,
      });
      const epoch = written.fence?.id ?? (await this.#store.restoreEpoch());
      if (written.fence) {
        outcome = { fence: written.fence, detected: verdict.detected };
        log.warn(
          this.#fields(verdict.detected, state, timeline, written.fence),
          `restored database detected (${this.#describe(verdict.detected, state, timeline, written.fence)}): every ` +
            'session and refresh token ended, the signing keys removed and new ones made; users sign in again',
        );
      } else if (epoch !== state.epoch) {
        log.info({ fence: epoch }, 'restored database: another instance fenced it first');
      }
      this.#remember({ database: written.database, counter: written.counter, epoch, by: this.#by });
    } else {
      const counter = await this.#store.markActivity({
        database: state.database,
        atLeast: state.counter,
        timeline,
        now,
        by: this.#by,
      });
      // The database changed between the read and the bump: the next check reads it again.
      if (counter === undefined) return {};
      if (verdict.kind === 'fenced')
        log.info(
          { fence: verdict.epoch },
          'the database was fenced since the last check (by another instance or tessera restore-finish): ' +
            'the new signing keys are used, codes and sessions from before no longer open',
        );
      this.#remember({ database: state.database, counter, epoch: state.epoch, by: this.#by });
    }
    await this.#writeFile();
    return outcome;
  }

  /** PostgreSQL's timeline, or null on SQLite or when this role may not read it (said once). */
  async #timeline(): Promise<number | null> {
    try {
      return await this.#store.databaseTimeline();
    } catch (err) {
      if (err instanceof DatabaseUnavailable) throw err;
      this.#warnOnce(
        'timeline',
        { err: { message: (err as Error).message } },
        `cannot read PostgreSQL's timeline (${(err as Error).message}): a point-in-time recovery is detected only ` +
          'by the activity mark; docs/postgresql.md says what to grant',
      );
      return null;
    }
  }

  #remember(seen: Seen): void {
    this.#seen = seen;
    this.#fromFile = false;
  }

  async #writeFile(): Promise<void> {
    const { file } = this.#options;
    if (!file || !this.#seen) return;
    await writeLocalMark(file, this.#seen).catch((err: Error) =>
      this.#warnOnce(
        'write',
        { file },
        `cannot write the restore watch mark ${file} (${err.message}): a restore made while every instance is ` +
          'stopped is detected only by PostgreSQL timelines',
      ),
    );
  }

  #warnOnce(key: string, obj: object, msg: string): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#options.log.warn(obj, msg);
  }

  #fields(detected: Detected[], state: RestoreWatchState, timeline: number | null, fence: RestoreFence) {
    return {
      detected,
      fence: fence.id,
      ...(detected.includes('backup') && fence.takenAt !== null ? { backupTakenAt: isoTime(fence.takenAt) } : {}),
      ...(detected.includes('timeline') ? { timeline, recordedTimeline: state.timeline } : {}),
      ...(detected.includes('mark')
        ? {
            mark: state.counter,
            seenMark: this.#seen?.counter,
            seenBy: this.#fromFile ? 'the previous start here' : 'this instance',
          }
        : {}),
    };
  }

  #describe(detected: Detected[], state: RestoreWatchState, timeline: number | null, fence: RestoreFence): string {
    const seen = this.#seen;
    const by = this.#fromFile ? 'the previous start here' : 'this instance';
    return detected
      .map((what) => {
        if (what === 'backup')
          return `a copy made by tessera backup${fence.takenAt === null ? '' : ` at ${isoTime(fence.takenAt)}`}`;
        if (what === 'timeline')
          return (
            `PostgreSQL on timeline ${timeline}, the database recorded ${state.timeline}: ` +
            'a point-in-time recovery or a promoted standby'
          );
        return seen && seen.epoch === state.epoch
          ? `activity mark ${state.counter}, behind the ${seen.counter} ${by} saw`
          : `the restore fence ${by} saw is gone`;
      })
      .join('; ');
  }
}

/**
 * Checks every `interval` seconds, one at a time; `onFence` runs when a check meets another restore
 * epoch than `epoch` (the one the instance started with), and again at the next check if it failed.
 */
export function startRestoreWatch(
  watch: RestoreWatch,
  options: { interval: number; epoch: string; onFence: (epoch: string) => Promise<void>; log: WatchLog },
): { stop(): void } {
  let running = false;
  let { epoch } = options;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    watch
      .check()
      .then(async () => {
        const now = watch.epoch;
        if (now === undefined || now === epoch) return;
        await options.onFence(now);
        epoch = now;
      })
      .catch((err: unknown) => options.log.error({ err }, 'applying a restore fence failed'))
      .finally(() => (running = false));
  }, options.interval * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
