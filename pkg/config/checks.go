package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// unsetVars returns a warning for every ${VAR} in an expanded field of c
// (before expansion) whose variable is not set in the environment; it would
// expand to "". Each names the key and line where the reference is written.
func unsetVars(ps *problems, c *Config) []Problem {
	var out []Problem
	check := func(key, v string) {
		seen := map[string]bool{}
		for _, ref := range envRef.FindAllString(v, -1) {
			name := ref[2 : len(ref)-1]
			if _, ok := os.LookupEnv(name); ok || seen[name] {
				continue
			}
			seen[name] = true
			if w, ok := ps.warn(SeverityWarning, key, fmt.Sprintf("${%s} is not set in the environment (it expands to \"\")", name)); ok {
				out = append(out, w)
			}
		}
	}
	for i, b := range c.Backends {
		p := joinIndex("backends", i)
		check(p+".url", b.URL)
		for j, a := range b.Args {
			check(joinIndex(p+".args", j), a)
		}
		for _, k := range sortedKeys(b.Headers) {
			check(joinKey(p+".headers", k), b.Headers[k])
		}
		for _, k := range sortedKeys(b.Env) {
			check(joinKey(p+".env", k), b.Env[k])
		}
		if b.Auth != nil {
			check(p+".auth.client_secret", b.Auth.ClientSecret)
		}
	}
	check("mrtr.state_key", c.MRTR.StateKey)
	check("cluster.redis_password", c.Cluster.RedisPassword)
	if s := c.Cluster.RedisSentinel; s != nil {
		check("cluster.redis_sentinel.password", s.Password)
	}
	return out
}

// missingCommands returns a warning for every stdio backend (after
// defaults; one whose transport is refused is not one) whose command
// cannot be started: a path (containing a separator) that does not exist or
// is not an executable file, or a bare name not found on PATH (the
// backend's env PATH if it sets one, else vmcp's own).
func missingCommands(ps *problems, bs []Backend) []Problem {
	var out []Problem
	for i, b := range bs {
		if b.Transport != TransportStdio || b.Command == "" {
			continue
		}
		path, ok := b.Env["PATH"]
		if !ok {
			path = os.Getenv("PATH")
		}
		if msg := findCommand(b.Command, path); msg != "" {
			if w, ok := ps.warn(SeverityWarning, joinIndex("backends", i)+".command", msg); ok {
				out = append(out, w)
			}
		}
	}
	return out
}

// resolveCommands makes every relative stdio command path (one with a
// separator, such as ./server or bin/server) relative to dir, the config
// file's directory, so vmcp runs the same program from any working
// directory. Bare names stay PATH lookups; dir "" changes nothing.
func resolveCommands(bs []Backend, dir string) {
	for i := range bs {
		c := bs[i].Command
		if dir == "" || c == "" || filepath.IsAbs(c) || !strings.ContainsRune(c, '/') && !strings.ContainsRune(c, os.PathSeparator) {
			continue
		}
		bs[i].Command = filepath.Join(dir, c)
	}
}

// findCommand returns why cmd cannot be run with the given PATH, or "".
func findCommand(cmd, path string) string {
	if strings.ContainsRune(cmd, os.PathSeparator) || strings.ContainsRune(cmd, '/') {
		if err := executable(cmd); err != "" {
			return fmt.Sprintf("command %q %s", cmd, err)
		}
		return ""
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if executable(filepath.Join(dir, cmd)) == "" {
			return ""
		}
	}
	return fmt.Sprintf("command %q not found on PATH", cmd)
}

// executable returns "" if p is an executable regular file, else why not.
func executable(p string) string {
	st, err := os.Stat(p)
	switch {
	case err != nil && os.IsNotExist(err):
		return "does not exist"
	case err != nil:
		return "cannot be read: " + err.Error()
	case st.IsDir():
		return "is a directory"
	case st.Mode()&fs.ModeType != 0 || st.Mode().Perm()&0o111 == 0:
		return "is not an executable file"
	}
	return ""
}
