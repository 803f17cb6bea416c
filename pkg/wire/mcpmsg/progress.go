package mcpmsg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// MethodProgress and MethodLog are the notifications a Sink receives.
const (
	MethodProgress = "notifications/progress"
	MethodLog      = "notifications/message"
)

// ProgressTokens mints the progress tokens one server's backends see
// instead of its clients' ("vmcp-progress-N"), so calls of many clients
// sharing a connection never collide; one per Manager (Manager.Tokens).
type ProgressTokens struct{ seq atomic.Int64 }

// Mint returns a token unique among this server's.
func (p *ProgressTokens) Mint() string {
	return mintedPrefix + strconv.FormatInt(p.seq.Add(1), 10)
}

// Unmatched is the error for progress carrying tok (TokenOf) that matches
// no call in flight: ErrProgressAfterEnd for a token this server minted
// before (its call ended), else ErrProgressUnknownToken.
func (p *ProgressTokens) Unmatched(tok string) error {
	if n, err := strconv.ParseInt(strings.TrimPrefix(tok, mintedPrefix), 10, 64); err == nil &&
		strings.HasPrefix(tok, mintedPrefix) && n > 0 && n <= p.seq.Load() {
		return fmt.Errorf("%w: token %s", ErrProgressAfterEnd, tok)
	}
	return fmt.Errorf("%w: token %s", ErrProgressUnknownToken, tok)
}

// TokenOf returns the progressToken of raw progress params as compact JSON
// text (a string token with its quotes, a number as written).
func TokenOf(params json.RawMessage) (string, error) {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return "", fmt.Errorf("malformed progress notification: %w", err)
	}
	if t := bytes.TrimSpace(p.Token); len(t) == 0 || string(t) == "null" {
		return "", ErrProgressNoToken // belongs to no request; never matched to one
	}
	var s string
	if json.Unmarshal(p.Token, &s) == nil {
		return s, nil
	}
	return string(p.Token), nil
}
