package toolsearch

import "testing"

// TestLiteralsReadAsTheirWords: an IP address, an email address, a URL
// without its scheme, a Maven coordinate, a file's name alone, a date and
// a time of day were read as their pieces ("8", "example", "com", "core",
// "beach", "2024"), and a
// URL's path said nothing of what it names. Each is now the kind of
// thing it is.
func TestLiteralsReadAsTheirWords(t *testing.T) {
	t.Parallel()
	for core, want := range map[string]string{
		"8.8.8.8":                       "ip",
		"10.0.0.0/8":                    "ip",
		"[2001:db8::1]:443":             "ip",
		"2001:4860:4860::8888":          "ip",
		"me@example.com":                "email",
		"youtube.com/watch?v=dQw4w9WgX": "youtube url",
		"https://status.example.com/api/v2/status.json": "status example json url",
		"https://example.com/report.pdf?x=1":            "example pdf url",
		"com.fasterxml.jackson.core:jackson-databind":   "jackson-databind maven package",
		"org.slf4j:slf4j-api:2.0.9":                     "slf4j-api maven package",
		"beach.jpg":                                     "jpg file",
		"1.5":                                           "1.5",
		"3.14.15":                                       "3.14.15",
		"owner/repo":                                    "owner/repo",
		"example.com":                                   "example domain",
		"12:30":                                         "time",
	} {
		if got := literalWords(core); got != want {
			t.Errorf("literalWords(%q) = %q, want %q", core, got, want)
		}
	}
}
