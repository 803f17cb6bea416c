package toolsearch

import (
	"net/netip"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
)

// kindOf is the words for a literal of a kind with no parts worth reading
// (literals): a date → "date", a time of day → "time", an IP address →
// "ip", an autonomous system number ("AS13335") → "asn autonomous
// system", an email address → "email", a Maven coordinate → its artifact and
// "maven package", a character encoding's name ("UTF-8", "Shift-JIS") →
// "encoding", a number of 6 digits or more (a story's, a record's
// number: "39281234") → "id"; "" for any other text.
func kindOf(core string) string {
	switch {
	case isDate(core):
		return "date"
	case isClockTime(core):
		return "time"
	case isIP(core):
		return "ip"
	case isASN(core):
		return "asn autonomous system"
	case isEmailAddress(core):
		return "email"
	case isMavenCoordinate(core):
		_, artifact, _ := strings.Cut(core, ":")
		artifact, _, _ = strings.Cut(artifact, ":")
		return artifact + " maven package"
	case isCharset(core):
		return "encoding"
	case len(core) >= 6 && allDigits(core):
		return "id"
	}
	return ""
}

// isCharset reports whether s names a character encoding, by its WHATWG
// label or IANA name or alias, '-' and '_' alike ("utf8", "Shift-JIS",
// "ISO-8859-1"). Only names with a digit, '-' or '_' count: the
// registries' aliases include words ("chinese", "korean", "visual"), and
// names of 3 bytes or less or numbers alone ("l1", "437") do not count.
func isCharset(s string) bool {
	if len(s) <= 3 || strings.Trim(s, "0123456789") == "" || !strings.ContainsAny(s, "0123456789-_") {
		return false
	}
	for _, n := range []string{s, strings.ReplaceAll(s, "-", "_"), strings.ReplaceAll(s, "_", "-")} {
		if _, err := htmlindex.Get(n); err == nil {
			return true
		}
		if _, err := ianaindex.IANA.Encoding(n); err == nil {
			return true
		}
	}
	return false
}

// isIP reports whether s is an IPv4 or IPv6 address, with a port or a
// prefix length allowed ("8.8.8.8", "10.0.0.0/8", "[::1]:443").
func isIP(s string) bool {
	if p, err := netip.ParseAddrPort(s); err == nil {
		return p.Addr().IsValid()
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.IsValid()
	}
	a, err := netip.ParseAddr(s)
	return err == nil && (a.Is6() || strings.Count(s, ".") == 3)
}

// isMavenCoordinate reports whether s is "group:artifact[:version]" with
// a dotted group ("com.fasterxml.jackson.core:jackson-databind").
func isMavenCoordinate(s string) bool {
	group, rest, ok := strings.Cut(s, ":")
	if !ok || !strings.Contains(group, ".") || rest == "" || strings.Count(rest, ":") > 1 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_:", r)) {
			return false
		}
	}
	return true
}

// isEmailAddress reports whether s is local@domain ("me@example.com").
func isEmailAddress(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && !strings.ContainsAny(local, "/:") && isDomain(domain)
}

// isDate reports whether s is a numeric date: year-month-day with '-' or
// '/' ("2024-03-15", "2024/3/15"), or day and month before the year
// ("15/03/2024", "3/15/2024").
func isDate(s string) bool {
	for _, sep := range []string{"-", "/"} {
		ps := strings.Split(s, sep)
		if len(ps) != 3 || !allDigits(ps[0]) || !allDigits(ps[1]) || !allDigits(ps[2]) {
			continue
		}
		if len(ps[0]) == 4 && len(ps[1]) <= 2 && len(ps[2]) <= 2 || len(ps[2]) == 4 && len(ps[0]) <= 2 && len(ps[1]) <= 2 {
			return true
		}
	}
	return false
}

// isClockTime reports whether s is a time of day: hours and minutes
// (seconds too), an am/pm after it allowed ("15:30", "3:30pm"), or an hour
// with am/pm ("3pm").
func isClockTime(s string) bool {
	l := strings.ToLower(s)
	t := strings.TrimSuffix(strings.TrimSuffix(l, "am"), "pm")
	ps := strings.Split(t, ":")
	if len(ps) == 1 && t != l {
		return len(t) >= 1 && len(t) <= 2 && allDigits(t)
	}
	if len(ps) < 2 || len(ps) > 3 || len(ps[0]) == 0 || len(ps[0]) > 2 || !allDigits(ps[0]) {
		return false
	}
	for _, p := range ps[1:] {
		if len(p) != 2 || !allDigits(p) {
			return false
		}
	}
	return true
}

// allDigits reports whether s is one ASCII digit or more.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isASN reports whether s is an autonomous system number: "AS" and 1 to
// 10 digits ("AS13335").
func isASN(s string) bool {
	return len(s) > 2 && len(s) <= 12 && strings.EqualFold(s[:2], "as") && allDigits(s[2:])
}
