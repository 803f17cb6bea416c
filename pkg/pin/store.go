package pin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"
)

// watchConfirm bounds how long Watch waits for Redis to confirm it.
const watchConfirm = 2 * time.Second

// Store holds the pins: one hash per (backend, tool).
type Store interface {
	// Pin records hash for (backend, tool) unless a pin exists (first
	// writer wins, atomically) and returns the pin now held.
	Pin(ctx context.Context, backend, tool, hash string) (string, error)
	// Set replaces the pin (an accept, or allow's re-pin) and tells the
	// other nodes' Watch.
	Set(ctx context.Context, backend, tool, hash string) error
	// Watch calls f for every pin another node Sets, until stop.
	Watch(f func(backend, tool, hash string)) (stop func())
}

// Redis is a Store shared by every node of a cluster: a hash per backend
// (PREFIX pin:BACKEND, the backend a hash tag on a Redis Cluster) whose
// fields are tool names, and the channel PREFIX pins on which Set
// announces a new pin.
type Redis struct {
	rdb    redis.UniversalClient
	prefix string
	tagged bool
}

// NewRedis is a Store on rdb under prefix (tagged: Redis Cluster keys).
func NewRedis(rdb redis.UniversalClient, prefix string, tagged bool) *Redis {
	return &Redis{rdb: rdb, prefix: prefix, tagged: tagged}
}

func (r *Redis) key(backend string) string {
	if r.tagged {
		return r.prefix + "pin:{" + backend + "}"
	}
	return r.prefix + "pin:" + backend
}

func (r *Redis) channel() string { return r.prefix + "pins" }

// Pin implements Store: HSETNX and HGET in one MULTI on one key.
func (r *Redis) Pin(ctx context.Context, backend, tool, hash string) (string, error) {
	var get *redis.StringCmd
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, r.key(backend), tool, hash)
		get = p.HGet(ctx, r.key(backend), tool)
		return nil
	})
	if err != nil {
		return "", err
	}
	return get.Val(), nil
}

// announcement is what Set publishes.
type announcement struct {
	Backend string `json:"backend"`
	Tool    string `json:"tool"`
	Hash    string `json:"hash"`
}

// Set implements Store: HSET, then PUBLISH to the other nodes.
func (r *Redis) Set(ctx context.Context, backend, tool, hash string) error {
	if err := r.rdb.HSet(ctx, r.key(backend), tool, hash).Err(); err != nil {
		return err
	}
	msg, _ := json.Marshal(announcement{backend, tool, hash})
	return r.rdb.Publish(ctx, r.channel(), msg).Err()
}

// Watch implements Store with a subscription to the channel, confirmed
// (within watchConfirm) before it returns; the go-redis PubSub
// reconnects by itself. stop waits for the reader.
func (r *Redis) Watch(f func(backend, tool, hash string)) func() {
	ps := r.rdb.Subscribe(context.Background(), r.channel())
	ctx, cancel := context.WithTimeout(context.Background(), watchConfirm)
	_, _ = ps.Receive(ctx) // the subscription's confirmation; Redis down: PubSub retries
	cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			var a announcement
			if json.Unmarshal([]byte(m.Payload), &a) == nil && a.Backend != "" && a.Tool != "" && a.Hash != "" {
				f(a.Backend, a.Tool, a.Hash)
			}
		}
	}()
	return func() {
		_ = ps.Close()
		<-done
	}
}
