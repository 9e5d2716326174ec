export interface GroupMember {
  memberId: string;
  topics: string[];
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

/**
 * Deterministic round-robin assignment: every member computes the same answer
 * from the same live-member list, with no coordinator. Topic-partitions are
 * walked in (topic, partition) order and dealt to the sorted subscribers of each
 * topic, with one counter across topics so single-partition topics do not all
 * land on the first member.
 */
export function assignPartitions(members: GroupMember[], partitionsByTopic: ReadonlyMap<string, number>): Map<string, TopicPartition[]> {
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  const assignment = new Map<string, TopicPartition[]>(sorted.map((m) => [m.memberId, []]));
  const topics = [...new Set(sorted.flatMap((m) => m.topics))].sort();
  let turn = 0;
  for (const topic of topics) {
    const subscribers = sorted.filter((m) => m.topics.includes(topic));
    const partitions = partitionsByTopic.get(topic) ?? 0;
    for (let partition = 0; partition < partitions; partition++) {
      const member = subscribers[turn % subscribers.length]!;
      assignment.get(member.memberId)!.push({ topic, partition });
      turn++;
    }
  }
  return assignment;
}
