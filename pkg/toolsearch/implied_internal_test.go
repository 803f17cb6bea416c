package toolsearch

import (
	"slices"
	"testing"
)

// TestCuesFiredInsideWordsAndNames: a cue's phrase was found anywhere in
// the request, so "restore" held "store", a folder "saved/" or a file
// "create_order.go" asked for a file to be written; "./results.md" lost
// its leading dot and read as the path "/results.md", too short to be
// one; and a folder named anywhere after "what files" (a git question) or
// a file in a folder ("the contents of README.md in the project folder")
// asked for the folder to be listed.
func TestCuesFiredInsideWordsAndNames(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"Restore src/main.go to the version in the last commit":     "",
		"Open the presentation saved/deck.pptx":                     "",
		"Find the bug in handlers/create_order.go":                  "",
		"What files are staged in my repo directory?":               "",
		"Read the contents of README.md in the project folder":      "",
		"Save the results to ./results.md":                          "write file",
		"I saved it to /root/notes/x.md, now fix the typos":         "write file",
		"what's in my Downloads folder?":                            "list directory contents",
		"What files are in my /root/music folder?":                  "list directory contents",
		"In my notes project, what's inside the 'meetings' folder?": "list directory contents",
	} {
		parts, _ := implied(q, false)
		if want == "" && len(parts) > 0 || want != "" && !slices.Contains(parts, want) {
			t.Errorf("implied(%q) = %q, want %q", q, parts, want)
		}
	}
}
