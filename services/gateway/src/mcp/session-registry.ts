/**
 * The open MCP sessions of one server, each kept in memory (a transport and a
 * server of about 20 KB) and owned by the credential that opened it. Bounded
 * three ways: a session idle for longer than idleMs is closed, a credential
 * holds at most perOwner sessions (opening another closes its least recently
 * used one), and the sessions of a credential that no longer authenticates
 * (a revoked key or grant) are closed.
 */
export interface RegisteredSession {
  owner: string;
  /** The credential headers, to ask whether the owner still authenticates. */
  credential: Record<string, string>;
  close(): Promise<void>;
}

export interface SessionRegistryOptions {
  idleMs: number;
  perOwner: number;
  now?: () => number;
}

/** Whether a credential still authenticates (false: revoked, expired, unknown). */
export type CredentialProbe = (credential: Record<string, string>) => Promise<boolean>;

export function createSessionRegistry<S extends RegisteredSession>(options: SessionRegistryOptions) {
  const now = options.now ?? Date.now;
  const sessions = new Map<string, { session: S; lastUsed: number }>();

  const closeOne = async (id: string) => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    await entry.session.close().catch(() => undefined);
  };
  const idsOf = (owner: string) => [...sessions].filter(([, e]) => e.session.owner === owner).map(([id]) => id);

  return {
    /** A session in use: its idle time starts again. */
    get(id: string): S | undefined {
      const entry = sessions.get(id);
      if (!entry) return undefined;
      entry.lastUsed = now();
      return entry.session;
    },
    /** A new session; the owner's least recently used ones beyond the cap are closed. */
    async add(id: string, session: S): Promise<void> {
      sessions.set(id, { session, lastUsed: now() });
      const mine = [...sessions]
        .filter(([, e]) => e.session.owner === session.owner)
        .sort(([, a], [, b]) => a.lastUsed - b.lastUsed)
        .map(([sid]) => sid);
      for (const old of mine.slice(0, Math.max(0, mine.length - options.perOwner))) await closeOne(old);
    },
    /** Forgets a session that ended by itself (DELETE, transport closed). */
    forget(id: string): void {
      sessions.delete(id);
    },
    /** Closes every session of an owner (its credential no longer authenticates). */
    async closeOwner(owner: string): Promise<number> {
      const ids = idsOf(owner);
      for (const id of ids) await closeOne(id);
      return ids.length;
    },
    /** Closes idle sessions, then those whose owner's credential the probe refuses (one probe per owner). */
    async sweep(probe?: CredentialProbe): Promise<{ idle: number; revoked: number }> {
      const cutoff = now() - options.idleMs;
      const idle = [...sessions].filter(([, e]) => e.lastUsed <= cutoff).map(([id]) => id);
      for (const id of idle) await closeOne(id);
      let revoked = 0;
      if (probe) {
        const owners = new Map<string, Record<string, string>>();
        for (const { session } of sessions.values()) owners.set(session.owner, session.credential);
        for (const [owner, credential] of owners) {
          if (!(await probe(credential).catch(() => true))) revoked += await this.closeOwner(owner);
        }
      }
      return { idle: idle.length, revoked };
    },
    size(owner?: string): number {
      return owner === undefined ? sessions.size : idsOf(owner).length;
    },
    async closeAll(): Promise<void> {
      const ids = [...sessions.keys()];
      for (const id of ids) await closeOne(id);
    },
  };
}

export type SessionRegistry<S extends RegisteredSession> = ReturnType<typeof createSessionRegistry<S>>;
