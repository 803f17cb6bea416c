package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServesUntilStoppedAndPrintsTheIssuer(t *testing.T) {
	t.Parallel()
	stop := make(chan os.Signal, 1)
	stop <- os.Interrupt // read once the provider is up
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"--listen", "127.0.0.1:0"}, &out, &errb, stop), errb.String())
	require.Contains(t, out.String(), "issuer http://127.0.0.1:")
	require.Contains(t, out.String(), "client alice, secret alice-secret")
}

func TestNonLoopbackListenFails(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	require.Equal(t, 1, run([]string{"--listen", "0.0.0.0:9400"}, &out, &errb, nil))
	require.Contains(t, errb.String(), "loopback")
	require.Equal(t, 2, run([]string{"--nope"}, &out, &errb, nil))
}
