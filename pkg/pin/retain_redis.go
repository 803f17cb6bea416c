package pin

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// retainScript is Retain on Redis, atomic on one backend's two keys
// (KEYS[1] its pins, KEYS[2] when each tool was last offered, ms).
// ARGV: now (ms), keep (ms), the most dropped pins kept, then the tools
// offered now. It returns {expired, evicted}.
var retainScript = redis.NewScript(`
local now, keep, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local live = {}
for i = 4, #ARGV do live[ARGV[i]] = true end
local seen = {}
local sv = redis.call('HGETALL', KEYS[2])
for i = 1, #sv, 2 do seen[sv[i]] = tonumber(sv[i + 1]) end
local gone, dropped = {}, {}
for _, t in ipairs(redis.call('HKEYS', KEYS[1])) do
  local s = seen[t]
  seen[t] = nil
  if live[t] or s == nil then
    redis.call('HSET', KEYS[2], t, now)
  elseif s + keep <= now then
    table.insert(gone, t)
  else
    table.insert(dropped, {t, s})
  end
end
for t in pairs(seen) do redis.call('HDEL', KEYS[2], t) end
local evicted = 0
if #dropped > cap then
  table.sort(dropped, function(a, b) if a[2] ~= b[2] then return a[2] < b[2] end return a[1] < b[1] end)
  evicted = #dropped - cap
  for i = 1, evicted do table.insert(gone, dropped[i][1]) end
end
for _, t in ipairs(gone) do
  redis.call('HDEL', KEYS[1], t)
  redis.call('HDEL', KEYS[2], t)
end
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)
return {#gone - evicted, evicted}
`)

// seenKey is the hash of when each of backend's tools was last offered.
func (r *Redis) seenKey(backend string) string {
	if r.tagged {
		return r.prefix + "pinseen:{" + backend + "}"
	}
	return r.prefix + "pinseen:" + backend
}

// Retain implements Retainer: one script run (EVALSHA) on the backend's
// pins and last-offered times, both given a TTL of keep, so the pins of a
// backend no node retains any more (removed by a reload) expire on Redis.
func (r *Redis) Retain(ctx context.Context, backend string, live []string, now time.Time, keep time.Duration, maxDropped int) (Retained, error) {
	args := make([]any, 0, 3+len(live))
	args = append(args, now.UnixMilli(), keep.Milliseconds(), maxDropped)
	for _, t := range live {
		args = append(args, t)
	}
	res, err := retainScript.Run(ctx, r.rdb, []string{r.key(backend), r.seenKey(backend)}, args...).Int64Slice()
	if err != nil {
		return Retained{}, err
	}
	if len(res) != 2 {
		return Retained{}, fmt.Errorf("pin retain script answered %d values, want 2", len(res))
	}
	return Retained{Expired: int(res[0]), Evicted: int(res[1])}, nil
}
