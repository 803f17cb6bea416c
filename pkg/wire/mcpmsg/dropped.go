package mcpmsg

import "errors"

// Progress that reaches no call is dropped, never forwarded elsewhere, and
// counted by reason (vmcp_progress_dropped_total{backend,reason}): every
// path that drops it wraps one of these errors, and the dispatchers'
// undeliverable handlers count by DropReason.
var (
	// ErrProgressUnknownToken: no call of this client or connection sent
	// the progress token.
	ErrProgressUnknownToken = errors.New("progress token sent by no call")
	// ErrProgressAfterEnd: the token's call has already ended.
	ErrProgressAfterEnd = errors.New("progress after its call ended")
	// ErrProgressNoToken: the progress has no token (absent or null), so
	// it belongs to no request.
	ErrProgressNoToken = errors.New("progress notification without a progressToken")
)

// Drop reasons, the reason label of vmcp_progress_dropped_total.
const (
	DropUnknownToken = "unknown_token"
	DropAfterEnd     = "after_end"
	DropNoToken      = "no_token"
)

// DropReason is the reason label for a dropped progress notification's
// error, "" when err is none of ErrProgressUnknownToken,
// ErrProgressAfterEnd and ErrProgressNoToken.
func DropReason(err error) string {
	switch {
	case errors.Is(err, ErrProgressNoToken):
		return DropNoToken
	case errors.Is(err, ErrProgressAfterEnd):
		return DropAfterEnd
	case errors.Is(err, ErrProgressUnknownToken):
		return DropUnknownToken
	}
	return ""
}

// mintedPrefix starts every token ProgressTokens.Mint mints.
const mintedPrefix = "vmcp-progress-"
