export { createKafkaEventBus, type KafkaEventBusOptions } from './kafka-event-bus.js';
