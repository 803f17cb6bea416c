package toolsearch

import "testing"

// TestLiteralsReadAsTheirWords: an IP address, an email address, a URL
// without its scheme, a Maven coordinate, a file's name alone, a date, a
// time of day and an AS number were read as their pieces ("8", "example",
// "com", "core", "beach", "2024", "3pm"), a media file's kind was not
// said, and a URL's path said nothing of what it names. Each is now the
// kind of thing it is.
func TestLiteralsReadAsTheirWords(t *testing.T) {
	t.Parallel()
	for core, want := range map[string]string{
		"8.8.8.8":                       "ip",
		"10.0.0.0/8":                    "ip",
		"[2001:db8::1]:443":             "ip",
		"2001:4860:4860::8888":          "ip",
		"AS13335":                       "asn autonomous system",
		"as":                            "as",
		"me@example.com":                "email",
		"youtube.com/watch?v=dQw4w9WgX": "youtube url content",
		"https://status.example.com/api/v2/status.json": "status example json url content",
		"https://example.com/report.pdf?x=1":            "example pdf url content",
		"https://i.imgur.com/Xk3vQ9d.png":               "i imgur png image url content",
		"https://baidu.com":                             "baidu domain url",
		"file:///root/report.pdf":                       "pdf file",
		"memory://projects/garden-plan":                 "memory projects/garden-plan",
		"S3://bucket/key.csv":                           "s3 bucket/key.csv",
		"com.fasterxml.jackson.core:jackson-databind":   "jackson-databind maven package",
		"org.slf4j:slf4j-api:2.0.9":                     "slf4j-api maven package",
		"beach.jpg":                                     "jpg image file",
		"/root/music/song.wav":                          "wav audio file",
		"~/clips/demo.mp4":                              "mp4 video file",
		"2024-03-15":                                    "date",
		"15/03/2024":                                    "date",
		"2024/3/15":                                     "date",
		"12:30":                                         "time",
		"3:30pm":                                        "time",
		"3pm":                                           "time",
		"11AM":                                          "time",
		"1.5":                                           "1.5",
		"UTF-8":                                         "encoding",
		"39281234":                                      "id",
		"12345":                                         "12345",
		"Shift-JIS":                                     "encoding",
		"iso-8859-1":                                    "encoding",
		"cp437":                                         "encoding",
		"3.14.15":                                       "3.14.15",
		"1-2-3":                                         "1-2-3",
		"10-15":                                         "10-15",
		"123:45":                                        "123:45",
		"owner/repo":                                    "owner/repo",
		"example.com":                                   "example domain",
	} {
		if got := literalWords(core); got != want {
			t.Errorf("literalWords(%q) = %q, want %q", core, got, want)
		}
	}
}
