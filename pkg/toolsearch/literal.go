package toolsearch

import (
	"strings"

	"golang.org/x/net/publicsuffix"
)

// A request's literals (file paths, URLs, domain names, encoded blobs) are
// identifiers of the user's things, not words for what a tool does: the
// folders of "/root/music/song.wav" are not a request for music tools. Each
// is replaced by the words that say what kind of thing it is: a path by its
// extension and "file" (or "directory" without one), as is a file's name
// with a known extension ("beach.jpg"), a URL (with or
// without its scheme) by its site's name, its path's extension, "url" and
// "content" (a bare site by its name, "domain" and "url"; a file:// URL as
// its path; another scheme's, "memory://x/y", by its scheme and path), a
// domain by its name and "domain", a date ("2024-03-15") by "date", a
// time of day ("15:30", "3:30pm") by "time", an IP address by "ip", an email
// address by "email", a Maven coordinate ("group:artifact") by its
// artifact and "maven package"; a blob is dropped.

// maxWordBytes is the longest run without a space read as words; longer
// runs (base64, hashes) are dropped.
const maxWordBytes = 48

// fileExtensions are extensions that name a file, not a domain's suffix,
// where both exist (".md" is Moldova's).
var fileExtensions = map[string]bool{
	"md": true, "py": true, "sh": true, "js": true, "ts": true, "rs": true, "pl": true, "go": true,
	"pdf": true, "txt": true, "csv": true, "json": true, "png": true, "jpg": true, "mp3": true, "wav": true,
	"docx": true, "xlsx": true, "pptx": true, "html": true, "zip": true, "bib": true, "ai": true,
	"jpeg": true, "gif": true, "webp": true, "svg": true, "mp4": true, "mov": true,
}

// mediaKinds names the kind of media a file extension holds.
var mediaKinds = map[string]string{
	"png": "image", "jpg": "image", "jpeg": "image", "gif": "image", "webp": "image", "bmp": "image",
	"svg": "image", "mp3": "audio", "wav": "audio", "flac": "audio", "m4a": "audio", "ogg": "audio",
	"mp4": "video", "mov": "video", "mkv": "video", "avi": "video", "webm": "video",
}

// extWords are the words for a file extension: itself, and the kind of
// media it holds if any ("png" → "png image").
func extWords(ext string) string {
	if k := mediaKinds[ext]; k != "" {
		return ext + " " + k
	}
	return ext
}

// literals rewrites q's literals into words (see above), keeping its
// punctuation and line breaks, so clauses split as before; in a request
// for arithmetic (arith), numbers stay numbers, never ids.
func literals(q string, arith bool) string {
	if !strings.ContainsAny(q, "/.:-0123456789") && len(q) < maxWordBytes {
		return q
	}
	var b strings.Builder
	for i, line := range strings.Split(q, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, f := range strings.Fields(line) {
			if j > 0 {
				b.WriteByte(' ')
			}
			core, tail := trimLiteral(f)
			if arith && allDigits(core) {
				b.WriteString(core)
			} else {
				b.WriteString(literalWords(core))
			}
			b.WriteString(tail)
		}
	}
	return b.String()
}

// trimLiteral splits f into its core and the punctuation ending it; quotes
// and brackets around it are dropped.
func trimLiteral(f string) (core, tail string) {
	f = strings.Trim(f, "`'\"()[]<>")
	core = strings.TrimRight(f, ".,;:!?")
	return core, f[len(core):]
}

// literalWords are the words standing for core, or core itself when it is
// not a literal.
func literalWords(core string) string {
	switch {
	case len(core) > maxWordBytes && !strings.Contains(core, "://") && longestElement(core) > maxWordBytes:
		return "" // a blob (base64 has slashes too), not a path or URL
	case strings.Contains(core, "://"):
		return schemeWords(core)
	}
	if k := kindOf(core); k != "" {
		return k
	}
	switch {
	case strings.Contains(core, "/") && isDomain(core[:strings.IndexByte(core, '/')]):
		return urlWords(core) // a URL without its scheme: "youtube.com/watch?v=…"
	case isPath(core):
		if ext := extension(core); ext != "" {
			return extWords(ext) + " file"
		}
		return "directory"
	case fileExtensions[extension(core)]:
		return extWords(extension(core)) + " file" // a file's name alone: "beach.jpg"
	case strings.Count(core, ".") > 0 && isDomain(core):
		return siteName(core) + " domain"
	}
	return core
}

// schemeWords are the words standing for a URL with a scheme: a web URL's
// (urlWords), a file:// URL's path's, another scheme's name and the rest
// (memory://projects/x, s3://bucket/key: the scheme names the system).
func schemeWords(core string) string {
	scheme, rest, _ := strings.Cut(core, "://")
	switch scheme = strings.ToLower(scheme); {
	case scheme == "file" && strings.HasPrefix(rest, "/"):
		return literalWords(rest)
	case scheme != "http" && scheme != "https":
		return scheme + " " + rest
	}
	return urlWords(rest)
}

// isPath reports whether s is a file path: absolute, relative to "." or
// "~", or a slashed name ending in an extension ("data/x.csv"), but not
// "owner/repo" or "a/b" used as "or".
func isPath(s string) bool {
	switch {
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"), strings.HasPrefix(s, "~/"):
		return true
	case strings.Contains(s, "/"):
		return extension(s) != ""
	}
	return false
}

// extension is the lower-case extension of s's last element (1 to 5
// letters or digits after a dot), or "".
func extension(s string) string {
	last := s[strings.LastIndexByte(s, '/')+1:]
	dot := strings.LastIndexByte(last, '.')
	if dot <= 0 || len(last)-dot-1 > 5 || len(last)-dot-1 < 1 {
		return ""
	}
	ext := strings.ToLower(last[dot+1:])
	for i := 0; i < len(ext); i++ {
		if c := ext[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return ""
		}
	}
	return ext
}

// isDomain reports whether s is a host name under a public suffix
// ("www.baidu.com", "example.co.uk"), not a file name ("notes.md").
func isDomain(s string) bool {
	s = strings.ToLower(s)
	if fileExtensions[s[strings.LastIndexByte(s, '.')+1:]] {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	suffix, icann := publicsuffix.PublicSuffix(s)
	return icann && suffix != s
}

// siteName is a host's name less "www" and its public suffix:
// "www.youtube.com" → "youtube".
func siteName(host string) string {
	host = strings.ToLower(host)
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	suffix, _ := publicsuffix.PublicSuffix(host)
	name := strings.TrimSuffix(strings.TrimSuffix(host, suffix), ".")
	return strings.ReplaceAll(strings.TrimPrefix(name, "www."), ".", " ")
}

// longestElement is the length of s's longest '/'-separated element.
func longestElement(s string) int {
	n := 0
	for e := range strings.SplitSeq(s, "/") {
		n = max(n, len(e))
	}
	return n
}

// urlWords are the words standing for a URL less its scheme: its site's
// name, its path's extension if any ("status.json" → json), "url" and
// "content" (a request naming a page mostly wants what is on it).
func urlWords(rest string) string {
	host, path, _ := strings.Cut(rest, "/")
	path, _, _ = strings.Cut(path, "?")
	path, _, _ = strings.Cut(path, "#")
	if path == "" {
		return siteName(host) + " domain url" // the site itself: https://baidu.com
	}
	if ext := extension(path); ext != "" {
		return siteName(host) + " " + extWords(ext) + " url content"
	}
	return siteName(host) + " url content"
}
