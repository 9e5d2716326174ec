export { createKafkaEventBus, type KafkaEventBus, type KafkaEventBusOptions } from './kafka-event-bus.js';
export { consumerGroupLag, CONSUMER_LAG_METRIC, type GroupLag, type PartitionLag } from './kafka-lag.js';
