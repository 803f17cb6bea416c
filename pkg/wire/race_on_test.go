//go:build race

package wire

// raceDetector reports whether the tests run with -race, which adds an
// allocation to Decode's method string.
const raceDetector = true
