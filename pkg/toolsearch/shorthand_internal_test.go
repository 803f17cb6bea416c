package toolsearch

import "testing"

// TestShorthandInPathsAndNamesWasRewritten pins where shorthand is read:
// a word or two-word idiom of prose, whatever its case, and never a part
// of a path, a tool's name, a host or a number ("/tmp/pics", "get_temp",
// "db.example").
func TestShorthandInPathsAndNamesWasRewritten(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"weather tmrw?":                       "weather tomorrow?",
		"Pics of cats, asap.":                 "pictures of cats, .",
		"temp in Oslo rn":                     "temperature in Oslo now",
		"copy /tmp/pics/a.png to db.example":  "copy /tmp/pics/a.png to db.example",
		"call get_temp and msg-queue":         "call get_temp and msg-queue",
		"3hrs or 2 hrs":                       "3hrs or 2 hours",
		"spin up a deck":                      "create a deck",
		"is Wall Street scared":               "is stock market scared",
		"HN front page":                       "hacker news top stories",
		"set upstream to origin":              "set upstream to origin",
		"the memory I set up":                 "the memory I set up",
		"newest version for my pom":           "newest version for my pom maven",
		"rundown from wiki":                   "summary from wiki wikipedia",
		"grep for TODO":                       "grep search text for TODO",
		"swap out lines 4-5":                  "replace lines 4-5",
		"where we left off":                   "where we continue",
		"what eats up space on my disk space": "what eats up size on my disk size",
		"when was it last modified":           "when was it last modified info",
		"set_up now":                          "set_up now",
		"no shorthand here":                   "no shorthand here",
	} {
		if got := spelledOut(q); got != want {
			t.Errorf("spelledOut(%q) = %q, want %q", q, got, want)
		}
	}
}
