import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { ReceivedMessage } from '../port.js';

/** kafkajs hands out Buffers; the port speaks strings (the producer wrote UTF-8). */
export function toReceivedMessage(topic: string, partition: number, message: KafkaMessage): ReceivedMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString('utf8') ?? '',
    value: message.value?.toString('utf8') ?? '',
    headers: decodeHeaders(message.headers),
    timestamp: new Date(Number(message.timestamp)).toISOString(),
  };
}

function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    // A header repeated on the wire arrives as an array; the last value wins.
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value !== undefined) decoded[name] = value.toString();
  }
  return decoded;
}
