import type { BusDatabase } from './database.js';
import type { GroupMember } from './assignment.js';
import type { Log } from './log.js';

export interface OffsetCommit {
  groupId: string;
  memberId: string;
  topic: string;
  partition: number;
  nextOffset: number;
}

/**
 * Consumer-group coordination through the shared file: members heartbeat, a
 * member whose heartbeat is older than the session timeout counts as dead, and
 * each partition has at most one claim holder. A claim passes to another member
 * only when its holder released it (after its in-flight message) or is dead.
 */
export function createMembership(db: BusDatabase, log: Log) {
  const upsertMember = db.prepare(
    `INSERT INTO bus_members (group_id, member_id, topics, heartbeat_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (group_id, member_id) DO UPDATE SET topics = excluded.topics, heartbeat_at = excluded.heartbeat_at`,
  );
  const selectAllLive = db.prepare<[number], { group_id: string; member_id: string; topics: string }>(
    'SELECT group_id, member_id, topics FROM bus_members WHERE heartbeat_at >= ? ORDER BY group_id, member_id',
  );
  const deleteDeadClaims = db.prepare(
    `DELETE FROM bus_claims WHERE group_id = ? AND member_id IN
       (SELECT member_id FROM bus_members WHERE group_id = ? AND heartbeat_at < ?)`,
  );
  const deleteDeadMembers = db.prepare('DELETE FROM bus_members WHERE group_id = ? AND heartbeat_at < ?');
  const deleteMember = db.prepare('DELETE FROM bus_members WHERE group_id = ? AND member_id = ?');
  const deleteMemberClaims = db.prepare('DELETE FROM bus_claims WHERE group_id = ? AND member_id = ?');
  const selectClaimHolder = db.prepare<[number, string, string, number], { member_id: string; live: number }>(
    `SELECT c.member_id, COALESCE(m.heartbeat_at >= ?, 0) AS live
     FROM bus_claims c LEFT JOIN bus_members m ON m.group_id = c.group_id AND m.member_id = c.member_id
     WHERE c.group_id = ? AND c.topic = ? AND c.partition = ?`,
  );
  const upsertClaim = db.prepare(
    `INSERT INTO bus_claims (group_id, topic, partition, member_id) VALUES (?, ?, ?, ?)
     ON CONFLICT (group_id, topic, partition) DO UPDATE SET member_id = excluded.member_id`,
  );
  const deleteClaim = db.prepare('DELETE FROM bus_claims WHERE group_id = ? AND topic = ? AND partition = ? AND member_id = ?');
  const selectOwnClaims = db.prepare<[string, string], { topic: string; partition: number }>(
    'SELECT topic, partition FROM bus_claims WHERE group_id = ? AND member_id = ?',
  );
  const selectClaimOwner = db.prepare<[string, string, number], { member_id: string }>(
    'SELECT member_id FROM bus_claims WHERE group_id = ? AND topic = ? AND partition = ?',
  );

  const heartbeat = db.transaction((groupId: string, memberId: string, topics: string[], now: number, cutoff: number) => {
    upsertMember.run(groupId, memberId, JSON.stringify(topics), now);
    deleteDeadClaims.run(groupId, groupId, cutoff);
    deleteDeadMembers.run(groupId, cutoff);
  });

  const claim = db.transaction((groupId: string, memberId: string, topic: string, partition: number, cutoff: number) => {
    const holder = selectClaimHolder.get(cutoff, groupId, topic, partition);
    if (holder && holder.member_id !== memberId && holder.live === 1) return false;
    upsertClaim.run(groupId, topic, partition, memberId);
    return true;
  });

  const leave = db.transaction((groupId: string, memberId: string) => {
    deleteMemberClaims.run(groupId, memberId);
    deleteMember.run(groupId, memberId);
  });

  const commitMany = db.transaction((commits: readonly OffsetCommit[]) =>
    commits.filter((c) => {
      if (selectClaimOwner.get(c.groupId, c.topic, c.partition)?.member_id !== c.memberId) return true;
      log.writeCommitted(c.groupId, c.topic, c.partition, c.nextOffset);
      return false;
    }),
  );

  return {
    /** Marks the member alive (re-registering it if it had been declared dead) and purges dead members. */
    heartbeat(groupId: string, memberId: string, topics: string[], now: number, cutoff: number): void {
      heartbeat.immediate(groupId, memberId, topics, now, cutoff);
    },

    /** The live members of every group, by group (one query for all the consumer groups of a connection). */
    liveMembersByGroup(cutoff: number): Map<string, GroupMember[]> {
      const byGroup = new Map<string, GroupMember[]>();
      for (const r of selectAllLive.all(cutoff)) {
        const members = byGroup.get(r.group_id) ?? [];
        members.push({ memberId: r.member_id, topics: JSON.parse(r.topics) as string[] });
        byGroup.set(r.group_id, members);
      }
      return byGroup;
    },

    /** Takes the partition if nobody alive holds it; false means wait for the holder to release it. */
    claim(groupId: string, memberId: string, topic: string, partition: number, cutoff: number): boolean {
      return claim.immediate(groupId, memberId, topic, partition, cutoff);
    },

    release(groupId: string, memberId: string, topic: string, partition: number): void {
      deleteClaim.run(groupId, topic, partition, memberId);
    },

    ownClaims(groupId: string, memberId: string): Array<{ topic: string; partition: number }> {
      return selectOwnClaims.all(groupId, memberId);
    },

    /** Whether the member still holds the partition's claim (a read, no write lock). */
    holds(groupId: string, memberId: string, topic: string, partition: number): boolean {
      return selectClaimOwner.get(groupId, topic, partition)?.member_id === memberId;
    },

    /**
     * Commits several offsets in one transaction, each only while its member still
     * holds the claim; answers the commits that were not written (the partition moved on).
     */
    commitMany(commits: readonly OffsetCommit[]): OffsetCommit[] {
      return commits.length === 0 ? [] : commitMany.immediate(commits);
    },

    leave(groupId: string, memberId: string): void {
      leave.immediate(groupId, memberId);
    },
  };
}

export type Membership = ReturnType<typeof createMembership>;
