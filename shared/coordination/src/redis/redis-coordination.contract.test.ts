import { describeCoordinationContract } from '../testing/contract.js';
import { startTestRedis } from '../testing/redis-server.js';
import { createRedisLeaseManager, createRedisRateLimiter, createRedisSlidingRateLimiter } from './index.js';

describeCoordinationContract('redis', async () => {
  const redis = await startTestRedis();
  if ('skip' in redis) return redis;
  const prefix = `test-${process.pid}`;
  const leases = createRedisLeaseManager({ url: redis.url, prefix });
  const limiter = createRedisRateLimiter({ url: redis.url, prefix });
  const sliding = createRedisSlidingRateLimiter({ url: redis.url, prefix });
  return {
    leases,
    limiter,
    sliding,
    cleanup: async () => {
      await leases.close();
      await limiter.close();
      await sliding.close();
      await redis.stop();
    },
  };
});
