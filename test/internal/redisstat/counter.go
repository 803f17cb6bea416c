package redisstat

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
)

// Counter is a TCP proxy in front of a Redis that counts the requests
// clients send through it: each command is one, in a pipeline too, and a
// script run is one whatever it executes (INFO commandstats counts what
// it executes as well).
type Counter struct {
	Addr string // 127.0.0.1:PORT

	target string
	l      net.Listener
	n      atomic.Int64
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

// NewCounter listens on a free loopback port and proxies to target
// (host:port) until Close.
func NewCounter(target string) (*Counter, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &Counter{Addr: l.Addr().String(), target: target, l: l}
	c.wg.Go(c.accept)
	return c, nil
}

// URL is the proxy's redis:// URL.
func (c *Counter) URL() string { return "redis://" + c.Addr + "/0" }

// Requests is the number of commands sent through c so far.
func (c *Counter) Requests() int64 { return c.n.Load() }

// Close stops c and cuts every connection through it.
func (c *Counter) Close() {
	_ = c.l.Close()
	c.mu.Lock()
	c.closed = true
	for _, x := range c.conns {
		_ = x.Close()
	}
	c.conns = nil
	c.mu.Unlock()
	c.wg.Wait()
}

func (c *Counter) accept() {
	for {
		cl, err := c.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = cl.Close()
			continue
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			_, _ = cl.Close(), up.Close()
			return
		}
		c.conns = append(c.conns, cl, up)
		c.mu.Unlock()
		c.wg.Go(func() { _, _ = io.Copy(cl, up); _ = cl.Close() })
		c.wg.Go(func() { _ = c.forward(up, bufio.NewReader(cl)); _ = up.Close() })
	}
}

// forward copies client requests (RESP arrays of bulk strings, or inline
// commands) from r to up, counting each.
func (c *Counter) forward(up io.Writer, r *bufio.Reader) error {
	w := bufio.NewWriter(up)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if line[0] == '*' {
			if err := copyArgs(w, r, line); err != nil {
				return err
			}
		}
		c.n.Add(1)
		if r.Buffered() == 0 { // the end of what the client sent: pass it on
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// copyArgs copies the bulk strings of the array whose header is line.
func copyArgs(w *bufio.Writer, r *bufio.Reader, line []byte) error {
	n, _ := strconv.Atoi(string(trimCRLF(line[1:])))
	for range n {
		hdr, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		size, _ := strconv.Atoi(string(trimCRLF(hdr[1:])))
		if _, err := io.CopyN(w, r, int64(size)+2); err != nil {
			return err
		}
	}
	return nil
}

func trimCRLF(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
