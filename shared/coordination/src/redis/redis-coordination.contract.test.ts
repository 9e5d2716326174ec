import { describeCoordinationContract } from '../testing/contract.js';
import { startTestRedis } from '../testing/redis-server.js';
import { createRedisLeaseManager, createRedisRateLimiter } from './index.js';

describeCoordinationContract('redis', async () => {
  const redis = await startTestRedis();
  if ('skip' in redis) return redis;
  const prefix = `test-${process.pid}`;
  const leases = createRedisLeaseManager({ url: redis.url, prefix });
  const limiter = createRedisRateLimiter({ url: redis.url, prefix });
  return {
    leases,
    limiter,
    cleanup: async () => {
      await leases.close();
      await limiter.close();
      await redis.stop();
    },
  };
});
